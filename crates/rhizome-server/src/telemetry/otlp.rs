//! Spans to an OpenTelemetry collector over OTLP/HTTP (protobuf): a `tracing` layer keeps
//! each span's ids, times and fields in the registry while it is open; when it closes it
//! goes into a bounded queue (dropped when the queue is full: a request never waits for
//! the exporter), and a thread of its own POSTs batches to the endpoint.
//!
//! Ids: a span's trace id is its parent's; a root span takes the trace id and parent span
//! id of the `traceparent` field when it has one (the request span sets it from the W3C
//! header), else a new trace id. Fields become attributes, except `otel.name` (the span's
//! name instead of the callsite's), `otel.kind` (`server`, `client`) and `error` (the
//! span's status). The server's `request` span is a server span named `METHOD ROUTE`.
//! Only spans of Rhizome's own crates are exported.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rhizome_core::{Error, Result};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use super::otlp_proto::{export_request, SpanData, Value};
use super::OtlpConfig;

/// Finished spans waiting for the exporter; past this they are dropped.
const QUEUE: usize = 8192;
/// Spans per export request.
const BATCH: usize = 512;
/// Longest a finished span waits before its batch is sent.
const LINGER: Duration = Duration::from_millis(500);

/// The layer's side: where finished spans go.
pub struct OtlpLayer {
    queue: SyncSender<SpanData>,
    dropped: Arc<AtomicU64>,
}

/// The exporter thread; [`Exporter::shutdown`] sends what is queued and stops it.
pub struct Exporter {
    stop: Arc<AtomicBool>,
    done: Receiver<()>,
    thread: Option<JoinHandle<()>>,
}

/// The layer (filtered to Rhizome's spans) and its exporter thread for `config`.
pub fn layer<S>(config: OtlpConfig) -> Result<(Box<dyn Layer<S> + Send + Sync>, Exporter)>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let (queue, rx) = mpsc::sync_channel(QUEUE);
    let stop = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicU64::new(0));
    let (done_tx, done) = mpsc::channel();
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| Error::Config(format!("OTLP exporter: cannot make its HTTP client: {e}")))?;
    let thread = std::thread::Builder::new()
        .name("rhizome-otlp".into())
        .spawn({
            let (stop, dropped) = (stop.clone(), dropped.clone());
            move || {
                export_loop(&client, &config, &rx, &stop, &dropped);
                let _ = done_tx.send(());
            }
        })
        .map_err(|e| Error::Config(format!("OTLP exporter: cannot start its thread: {e}")))?;
    let filter = tracing_subscriber::filter::filter_fn(|m| m.is_span() && m.target().starts_with("rhizome"));
    let layer = OtlpLayer { queue, dropped }.with_filter(filter);
    Ok((Box::new(layer), Exporter { stop, done, thread: Some(thread) }))
}

impl Exporter {
    /// Send the spans queued now and stop, waiting at most `within`.
    pub fn shutdown(mut self, within: Duration) {
        self.stop.store(true, Ordering::Relaxed);
        if self.done.recv_timeout(within).is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

fn export_loop(
    client: &reqwest::blocking::Client,
    config: &OtlpConfig,
    rx: &Receiver<SpanData>,
    stop: &AtomicBool,
    dropped: &AtomicU64,
) {
    let mut batch: Vec<SpanData> = Vec::new();
    let mut first_at = Instant::now();
    let mut failing = false;
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(s) => {
                if batch.is_empty() {
                    first_at = Instant::now();
                }
                batch.push(s);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return send(client, config, &batch, &mut failing),
        }
        if stopping {
            batch.extend(rx.try_iter());
        }
        let due = batch.len() >= BATCH || first_at.elapsed() >= LINGER || stopping;
        if !batch.is_empty() && due {
            for part in batch.chunks(BATCH) {
                send(client, config, part, &mut failing);
            }
            batch.clear();
            let n = dropped.swap(0, Ordering::Relaxed);
            if n > 0 {
                tracing::warn!(dropped = n, "OTLP exporter: spans dropped, the queue was full");
            }
        }
        if stopping {
            return;
        }
    }
}

/// POST one batch; a failure is logged once until an export succeeds again.
fn send(client: &reqwest::blocking::Client, config: &OtlpConfig, spans: &[SpanData], failing: &mut bool) {
    if spans.is_empty() {
        return;
    }
    let mut req = client
        .post(&config.traces_url)
        .header("content-type", "application/x-protobuf")
        .body(export_request(&config.service_name, spans));
    for (k, v) in &config.headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let outcome = match req.send() {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!("{} answered {}", config.traces_url, r.status())),
        Err(e) => Err(format!("{}: {e}", config.traces_url)),
    };
    match outcome {
        Ok(()) => *failing = false,
        Err(e) if !*failing => {
            *failing = true;
            tracing::warn!(spans = spans.len(), "OTLP exporter: cannot send spans ({e}); they are dropped");
        }
        Err(_) => {}
    }
}

fn now_nanos() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// A span while it is open: what it becomes, plus a remote parent from `traceparent`.
struct Open {
    data: SpanData,
    remote: Option<([u8; 16], [u8; 8])>,
}

impl Visit for Open {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, Value::Str(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::Str(value.to_string()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::Int(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::Int(value.min(i64::MAX as u64) as i64));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::Bool(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::Double(value));
    }
}

impl Open {
    fn put(&mut self, field: &Field, value: Value) {
        let text = || match &value {
            Value::Str(s) => s.clone(),
            other => format!("{other:?}"),
        };
        match field.name() {
            "otel.name" => self.data.name = text(),
            "otel.kind" => {
                self.data.kind = match text().as_str() {
                    "server" => 2,
                    "client" => 3,
                    _ => 1,
                }
            }
            "traceparent" => self.remote = parse_traceparent(&text()),
            "error" => self.data.error = Some(text()),
            name => {
                let name = name.to_string();
                match self.data.attributes.iter_mut().find(|(k, _)| *k == name) {
                    Some(slot) => slot.1 = value,
                    None => self.data.attributes.push((name, value)),
                }
            }
        }
    }
}

/// Trace id and parent span id of a `traceparent` checked by the request middleware.
fn parse_traceparent(v: &str) -> Option<([u8; 16], [u8; 8])> {
    let mut parts = v.split('-').skip(1);
    let (trace, span) = (parts.next()?, parts.next()?);
    let mut t = [0u8; 16];
    let mut s = [0u8; 8];
    for (i, b) in t.iter_mut().enumerate() {
        *b = u8::from_str_radix(trace.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    for (i, b) in s.iter_mut().enumerate() {
        *b = u8::from_str_radix(span.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some((t, s))
}

fn random_id<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(8) {
        let r = super::random_u64().to_le_bytes();
        chunk.copy_from_slice(&r[..chunk.len()]);
    }
    out
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for OtlpLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut open = Open {
            data: SpanData {
                trace_id: [0; 16],
                span_id: random_id(),
                parent_span_id: None,
                name: attrs.metadata().name().to_string(),
                kind: 1,
                start_unix_nanos: now_nanos(),
                end_unix_nanos: 0,
                attributes: Vec::new(),
                error: None,
            },
            remote: None,
        };
        attrs.record(&mut open);
        if open.data.name == "request" && attrs.metadata().target().starts_with("rhizome_server") {
            // The HTTP request: a server span named as OpenTelemetry names them.
            let field = |k: &str| match open.data.attributes.iter().find(|(n, _)| n == k) {
                Some((_, Value::Str(v))) => v.clone(),
                _ => String::new(),
            };
            open.data.name = format!("{} {}", field("method"), field("route"));
            open.data.kind = 2;
        }
        let parent =
            span.parent().and_then(|p| p.extensions().get::<Open>().map(|o| (o.data.trace_id, o.data.span_id)));
        match (parent, open.remote) {
            (Some((trace, parent)), _) | (None, Some((trace, parent))) => {
                open.data.trace_id = trace;
                open.data.parent_span_id = Some(parent);
            }
            (None, None) => open.data.trace_id = random_id(),
        }
        span.extensions_mut().insert(open);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(open) = span.extensions_mut().get_mut::<Open>() {
                values.record(open);
                if open.data.kind == 2 {
                    // The request's route is known once its workspace's router matched it.
                    let field = |k: &str| match open.data.attributes.iter().find(|(n, _)| n == k) {
                        Some((_, Value::Str(v))) => v.clone(),
                        _ => String::new(),
                    };
                    open.data.name = format!("{} {}", field("method"), field("route"));
                }
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(open) = span.extensions_mut().remove::<Open>() else { return };
        let mut data = open.data;
        data.end_unix_nanos = now_nanos().max(data.start_unix_nanos);
        if let Err(TrySendError::Full(_)) = self.queue.try_send(data) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_ids_are_read() {
        let (t, s) = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(t[0], 0x4b);
        assert_eq!(t[15], 0x36);
        assert_eq!(s, [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
        assert!(parse_traceparent("00-zz").is_none());
        assert_ne!(random_id::<16>(), [0; 16]);
    }
}
