//! `rhizome bench serve`: the HTTP server against the engine itself, on one index in one
//! run. The server runs in this process on 127.0.0.1:0; for each method and each number
//! of concurrent clients the same questions are asked over HTTP (`POST /query`, one
//! keep-alive connection pool) and of `Engine::query` directly (one thread per client),
//! alternately, so both see the same machine load. Printed: queries/s, p50/p95 latency
//! and the cores busy (process CPU time / wall time) of each; the HTTP overhead at one
//! client, both paired (each request's latency minus the engine's time for it, which the
//! reply carries as `timings_ms.total`) and as the difference of the two p50s; and each
//! path's throughput at 4 clients over 1. A lone query already keeps most cores busy
//! (the embedder splits its work), so the 4-over-1 ratio is bounded by cores / that.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rhizome_engine::{Engine, Method, QueryRequest};
use rhizome_eval::{load_questions, percentile};
use rhizome_server::{Server, ServerOptions};
use serde_json::json;

use crate::common::{bail, parse_methods, print_json, Bench, Context as _, Error, Result};

/// Latencies (ms), wall time (s) and CPU time (s, this whole process) of one batch; over
/// HTTP also each request's latency minus the engine's own time for it (`timings_ms.total`).
struct Run {
    ms: Vec<f64>,
    wall_s: f64,
    cpu_s: f64,
    http_ms: Vec<f64>,
}

impl Run {
    fn row(&self) -> serde_json::Value {
        let mut row = json!({
            "queries_per_s": self.ms.len() as f64 / self.wall_s.max(1e-9),
            "p50_ms": percentile(&self.ms, 50.0),
            "p95_ms": percentile(&self.ms, 95.0),
            "cores_busy": self.cpu_s / self.wall_s.max(1e-9),
        });
        if !self.http_ms.is_empty() {
            row["http_overhead_p50_ms"] = json!(percentile(&self.http_ms, 50.0));
        }
        row
    }
}

/// CPU time (user + system) this process has used, in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return f64::NAN;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(u.ru_utime) + s(u.ru_stime)
}

fn in_process(engine: &Engine, qs: &[String], method: Method, clients: usize) -> Result<Run> {
    let next = AtomicUsize::new(0);
    let (t, cpu) = (Instant::now(), cpu_seconds());
    let per_client: Vec<Result<Vec<f64>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(|| {
                    let mut ms = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(q) = qs.get(i) else { return Ok(ms) };
                        let t = Instant::now();
                        engine.query(&QueryRequest::new(q, method), None)?;
                        ms.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().map_err(|_| Error::Failed("a client thread panicked".into()))?).collect()
    });
    let (wall_s, cpu_s) = (t.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    let mut ms = Vec::new();
    for r in per_client {
        ms.extend(r?);
    }
    Ok(Run { ms, wall_s, cpu_s, http_ms: Vec::new() })
}

async fn over_http(
    client: &reqwest::Client,
    url: &str,
    qs: &Arc<Vec<String>>,
    method: Method,
    clients: usize,
) -> Result<Run> {
    let next = Arc::new(AtomicUsize::new(0));
    let (t, cpu) = (Instant::now(), cpu_seconds());
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (client, url, qs, next) = (client.clone(), url.to_string(), qs.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let (mut ms, mut http_ms) = (Vec::new(), Vec::new());
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(q) = qs.get(i) else { return Ok::<_, Error>((ms, http_ms)) };
                let t = Instant::now();
                let r = client.post(&url).json(&json!({"question": q, "method": method.as_str()})).send().await?;
                let status = r.status();
                let body = r.bytes().await?;
                if !status.is_success() {
                    bail!("POST /query answered {status}: {}", String::from_utf8_lossy(&body));
                }
                let latency = t.elapsed().as_secs_f64() * 1e3;
                ms.push(latency);
                let engine_ms = serde_json::from_slice::<serde_json::Value>(&body)?["timings_ms"]["total"].as_f64();
                http_ms.push(latency - engine_ms.context("the /query reply has no timings_ms.total")?);
            }
        }));
    }
    let (mut ms, mut http_ms) = (Vec::new(), Vec::new());
    for task in tasks {
        let (a, b) = task.await??;
        ms.extend(a);
        http_ms.extend(b);
    }
    Ok(Run { ms, wall_s: t.elapsed().as_secs_f64(), cpu_s: cpu_seconds() - cpu, http_ms })
}

/// The server's logs and trace export for this run, as `rhizome serve` sets them up; none
/// when neither is asked for.
pub fn telemetry(
    log_format: Option<&str>,
    otlp_endpoint: Option<&str>,
) -> Result<Option<rhizome_server::telemetry::Telemetry>> {
    use rhizome_server::telemetry::{init, LogFormat, OtlpConfig};
    if log_format.is_none() && otlp_endpoint.is_none() {
        return Ok(None);
    }
    let format: LogFormat = log_format.unwrap_or("text").parse()?;
    // Without --log-format only warnings are written: the run measures the export.
    let level = std::env::var("RHIZOME_LOG").ok().or_else(|| log_format.is_none().then(|| "warn".to_string()));
    let otlp = OtlpConfig::resolve(otlp_endpoint, |_| None)?;
    Ok(Some(init(format, level.as_deref(), otlp)?))
}

pub fn serve(
    bench: Bench,
    questions: &Path,
    methods: &[String],
    clients: &[usize],
    limit: usize,
    rounds: usize,
) -> Result<()> {
    let mut qs: Vec<String> = load_questions(questions)?.into_iter().map(|q| q.question).collect();
    qs.truncate(limit.max(1));
    let qs: Vec<String> = (0..rounds.max(1)).flat_map(|_| qs.iter().cloned()).collect();
    let qs = Arc::new(qs);
    let methods: Vec<Method> = parse_methods(methods)?;
    let engine = bench.serving_engine("rhizome bench serve")?;
    if !engine.exists() {
        bail!("no index at {}: index or import something first", bench.store);
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    let out = rt.block_on(async {
        let server = Server::bind(engine.clone(), ServerOptions::new("127.0.0.1:0".parse()?)).await?;
        let url = format!("http://{}/query", server.local_addr()?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        let client = reqwest::Client::new();
        let mut rows = serde_json::Map::new();
        for &m in &methods {
            // One untimed question each way warms the caches (graph, vectors, pool).
            let e = engine.clone();
            let q0 = qs[0].clone();
            tokio::task::spawn_blocking(move || e.query(&QueryRequest::new(&q0, m), None)).await??;
            over_http(&client, &url, &Arc::new(vec![qs[0].clone()]), m, 1).await?;
            let mut levels = serde_json::Map::new();
            for &c in clients {
                let c = c.max(1);
                let e = engine.clone();
                let q = qs.clone();
                let inproc = tokio::task::spawn_blocking(move || in_process(&e, &q, m, c)).await??;
                let http = over_http(&client, &url, &qs, m, c).await?;
                levels.insert(c.to_string(), json!({"http": http.row(), "in_process": inproc.row()}));
            }
            rows.insert(m.as_str().to_string(), serde_json::Value::Object(levels));
        }
        let _ = stop.send(());
        running.await??;
        Ok::<_, Error>(rows)
    })?;
    drop(rt);
    let get = |m: &str, c: usize, path: &str, k: &str| out[m][c.to_string()][path][k].as_f64().unwrap_or(f64::NAN);
    let mut summary = serde_json::Map::new();
    for m in methods.iter().map(|m| m.as_str()) {
        let (h1, i1) = (get(m, 1, "http", "p50_ms"), get(m, 1, "in_process", "p50_ms"));
        summary.insert(m.to_string(), json!({
            "http_overhead_p50_ms": h1 - i1,
            "http_overhead_paired_p50_ms": get(m, 1, "http", "http_overhead_p50_ms"),
            "http_vs_in_process_p50": h1 / i1,
            "http_qps_4_vs_1": get(m, 4, "http", "queries_per_s") / get(m, 1, "http", "queries_per_s"),
            "in_process_qps_4_vs_1": get(m, 4, "in_process", "queries_per_s") / get(m, 1, "in_process", "queries_per_s"),
        }));
    }
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    if bench.json {
        return print_json(&json!({"questions": qs.len(), "cores": cores, "methods": out, "summary": summary}));
    }
    println!("{} questions per level; {cores} cores; server in this process on 127.0.0.1", qs.len());
    println!(
        "{:<10} {:>7} {:<11} {:>9} {:>9} {:>9} {:>6}",
        "method", "clients", "path", "q/s", "p50 ms", "p95 ms", "cores"
    );
    for m in methods.iter().map(|m| m.as_str()) {
        for &c in clients {
            for path in ["in_process", "http"] {
                let g = |k: &str| get(m, c.max(1), path, k);
                println!(
                    "{:<10} {:>7} {:<11} {:>9.2} {:>9.1} {:>9.1} {:>6.2}",
                    m,
                    c.max(1),
                    path,
                    g("queries_per_s"),
                    g("p50_ms"),
                    g("p95_ms"),
                    g("cores_busy")
                );
            }
        }
        let s = &summary[m];
        let f = |k: &str| s[k].as_f64().unwrap_or(f64::NAN);
        println!("{m}: HTTP overhead at 1 client: p50 of (latency - engine time) per request {:.2} ms; \
            p50 over HTTP minus p50 in-process {:+.1} ms ({:.3}x); throughput 4 vs 1 client: HTTP {:.2}x, in-process {:.2}x",
            f("http_overhead_paired_p50_ms"), f("http_overhead_p50_ms"), f("http_vs_in_process_p50"),
            f("http_qps_4_vs_1"), f("in_process_qps_4_vs_1"));
    }
    Ok(())
}
