//! `GET /metrics`: the process's metrics in the Prometheus text exposition format 0.0.4.
//! The server's own families (requests, write jobs) are kept here; the engine's (queries,
//! embedding, LLM calls) in [`rhizome_core::metrics`]; each open workspace's write queue
//! depth and index size are read when scraped (the size from its engine's stats, read
//! again only when its index has changed since the last scrape).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use rhizome_core::metrics::{engine_families, number, Family, SECONDS_BUCKETS};
use rhizome_core::Stats;

use crate::error::{ApiError, ApiResult};
use crate::workspaces::Registry;

/// The content type of the text exposition format.
pub const CONTENT_TYPE_0_0_4: &str = "text/plain; version=0.0.4; charset=utf-8";

pub static HTTP_REQUESTS: Family = Family::counter(
    "rhizome_http_requests_total",
    "HTTP requests answered, by workspace, route template, method and status",
    &["workspace", "route", "method", "status"],
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

/// The labels of a request's series (`workspace`: empty for the routes outside any).
pub struct RequestLabels<'a> {
    pub workspace: &'a str,
    pub route: &'a str,
    pub method: &'a str,
    pub status: u16,
}

/// Count a finished request and its time.
pub fn record_request(l: &RequestLabels<'_>, secs: f64) {
    HTTP_REQUESTS.inc(&[l.workspace, l.route, l.method, &l.status.to_string()]);
    HTTP_DURATION.observe(&[l.route], secs);
}

/// A write job reaching `state` (`queued`, `done`, `failed`).
pub fn job(kind: &str, state: &str) {
    WRITE_JOBS.inc(&[kind, state]);
}

/// Each workspace's index counts, kept with the stamp
/// ([`rhizome_core::StoreRead::freshness`]) they were read at.
static SIZES: Mutex<BTreeMap<String, ((u64, u64), Stats)>> = Mutex::new(BTreeMap::new());

/// A workspace's index stats, read again only when its index changed since they were read.
fn index_stats(workspace: &str, engine: &rhizome_engine::Engine) -> rhizome_core::Result<Option<Stats>> {
    if !engine.exists() {
        return Ok(None);
    }
    let store = engine.reader()?;
    let stamp = store.freshness()?;
    let mut cached = SIZES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((at, stats)) = cached.get(workspace) {
        if *at == stamp {
            return Ok(Some(stats.clone()));
        }
    }
    let stats = store.stats()?;
    cached.insert(workspace.to_string(), (stamp, stats.clone()));
    Ok(Some(stats))
}

/// One open workspace, as the gauges show it.
pub struct WorkspaceGauges {
    pub name: String,
    pub queue_depth: usize,
    pub stats: Option<Stats>,
}

fn gauges(out: &mut String, name: &str, help: &str, rows: &[WorkspaceGauges], value: impl Fn(&WorkspaceGauges) -> f64) {
    out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} gauge\n"));
    for w in rows {
        let ws = w.name.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("{name}{{workspace=\"{ws}\"}} {}\n", number(value(w))));
    }
}

/// The whole exposition: the server's families, the engine's, then the gauges of each
/// open workspace, read now.
pub fn render(rows: &[WorkspaceGauges]) -> String {
    let mut out = String::new();
    for f in [&HTTP_REQUESTS, &HTTP_DURATION, &WRITE_JOBS] {
        f.render(&mut out);
    }
    for f in engine_families() {
        f.render(&mut out);
    }
    gauges(&mut out, "rhizome_write_queue_depth", "Write jobs waiting in the queue", rows, |w| w.queue_depth as f64);
    type Count = fn(&Stats) -> Option<&u64>;
    let sizes: [(&str, &str, Count); 4] = [
        ("rhizome_index_documents", "Documents in the index", |s| s.nodes.get("Document")),
        ("rhizome_index_chunks", "Chunks in the index", |s| s.nodes.get("Chunk")),
        ("rhizome_index_entities", "Entities in the index", |s| s.nodes.get("Entity")),
        ("rhizome_index_relations", "Relations (RELATED edges) in the index", |s| s.edges.get("RELATED")),
    ];
    for (name, help, count) in sizes {
        gauges(&mut out, name, help, rows, |w| w.stats.as_ref().and_then(count).copied().unwrap_or(0) as f64);
    }
    out
}

/// `GET /metrics`: needs an admin key for every workspace when keys are configured (the
/// series name every workspace).
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, content_type = "text/plain", body = String), (status = 403, body = crate::error::ErrorBody)))]
pub(crate) async fn metrics(State(reg): State<Arc<Registry>>, headers: HeaderMap) -> ApiResult<Response> {
    crate::auth::admin(&reg.keys, &headers, true, "reading /metrics")?;
    let open = reg.open_workspaces();
    let rows = tokio::task::spawn_blocking(move || -> rhizome_core::Result<Vec<WorkspaceGauges>> {
        let mut rows = Vec::new();
        for (name, state) in open {
            let queue_depth = state.queue.max_capacity() - state.queue.capacity();
            let stats = index_stats(&name, &state.engine)?;
            rows.push(WorkspaceGauges { name, queue_depth, stats });
        }
        Ok(rows)
    })
    .await
    .map_err(ApiError::join)??;
    Ok(([(CONTENT_TYPE, CONTENT_TYPE_0_0_4)], render(&rows)).into_response())
}
