//! `GET /metrics`: the process's metrics in the Prometheus text exposition format 0.0.4.
//! The server's own families (requests, write jobs) are kept here; the engine's (queries,
//! embedding, LLM calls) in [`rhizome_core::metrics`]; the write queue's depth and the
//! index's size are read when scraped (the size from the engine's stats, read again only
//! when the index has changed since the last scrape).

use std::sync::Mutex;

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use rhizome_core::metrics::{engine_families, number, Family, SECONDS_BUCKETS};
use rhizome_core::Stats;

use crate::error::ApiResult;
use crate::AppState;

/// The content type of the text exposition format.
pub const CONTENT_TYPE_0_0_4: &str = "text/plain; version=0.0.4; charset=utf-8";

pub static HTTP_REQUESTS: Family = Family::counter(
    "rhizome_http_requests_total",
    "HTTP requests answered, by route template, method and status",
    &["route", "method", "status"],
);
pub static HTTP_DURATION: Family = Family::histogram(
    "rhizome_http_request_duration_seconds",
    "Time from a request's arrival to its response head (a stream's first byte), by route template",
    &["route"],
    SECONDS_BUCKETS,
);
pub static WRITE_JOBS: Family = Family::counter(
    "rhizome_write_jobs_total",
    "Write jobs (uploads, deletions) by kind and state reached: queued, done, failed",
    &["kind", "state"],
);

/// The labels of a request's series. (A label naming the request's workspace would be a
/// field here, read from a request extension by [`super::request::observe`].)
pub struct RequestLabels<'a> {
    pub route: &'a str,
    pub method: &'a str,
    pub status: u16,
}

/// Count a finished request and its time.
pub fn record_request(l: &RequestLabels<'_>, secs: f64) {
    HTTP_REQUESTS.inc(&[l.route, l.method, &l.status.to_string()]);
    HTTP_DURATION.observe(&[l.route], secs);
}

/// A write job reaching `state` (`queued`, `done`, `failed`).
pub fn job(kind: &str, state: &str) {
    WRITE_JOBS.inc(&[kind, state]);
}

/// The index's counts, kept with the stamp ([`rhizome_core::StoreRead::freshness`]) they
/// were read at.
static SIZES: Mutex<Option<((u64, u64), Stats)>> = Mutex::new(None);

/// The index's stats, read again only when the index changed since they were read.
fn index_stats(engine: &rhizome_engine::Engine) -> rhizome_core::Result<Option<Stats>> {
    if !engine.exists() {
        return Ok(None);
    }
    let store = engine.reader()?;
    let stamp = store.freshness()?;
    let mut cached = SIZES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((at, stats)) = cached.as_ref() {
        if *at == stamp {
            return Ok(Some(stats.clone()));
        }
    }
    let stats = store.stats()?;
    *cached = Some((stamp, stats.clone()));
    Ok(Some(stats))
}

fn gauge(out: &mut String, name: &str, help: &str, value: f64) {
    out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} gauge\n{name} {}\n", number(value)));
}

/// The whole exposition: the server's families, the engine's, then the gauges read now.
pub fn render(queue_depth: usize, stats: Option<&Stats>) -> String {
    let mut out = String::new();
    for f in [&HTTP_REQUESTS, &HTTP_DURATION, &WRITE_JOBS] {
        f.render(&mut out);
    }
    for f in engine_families() {
        f.render(&mut out);
    }
    gauge(&mut out, "rhizome_write_queue_depth", "Write jobs waiting in the queue", queue_depth as f64);
    let count = |m: fn(&Stats) -> Option<&u64>| stats.and_then(m).copied().unwrap_or(0) as f64;
    let sizes: [(&str, &str, f64); 4] = [
        ("rhizome_index_documents", "Documents in the index", count(|s| s.nodes.get("Document"))),
        ("rhizome_index_chunks", "Chunks in the index", count(|s| s.nodes.get("Chunk"))),
        ("rhizome_index_entities", "Entities in the index", count(|s| s.nodes.get("Entity"))),
        ("rhizome_index_relations", "Relations (RELATED edges) in the index", count(|s| s.edges.get("RELATED"))),
    ];
    for (name, help, v) in sizes {
        gauge(&mut out, name, help, v);
    }
    out
}

/// `GET /metrics` (needs a key when keys are configured, like every non-public route).
pub(crate) async fn metrics(State(state): State<AppState>) -> ApiResult<Response> {
    let depth = state.queue.max_capacity() - state.queue.capacity();
    let stats = crate::blocking(&state, index_stats).await?;
    Ok(([(CONTENT_TYPE, CONTENT_TYPE_0_0_4)], render(depth, stats.as_ref())).into_response())
}
