//! `rhizome bench serve`: the HTTP server against the engine itself, on one index in one
//! run. The server runs in this process on 127.0.0.1:0; for each method and each number
//! of concurrent clients the same questions are asked over HTTP (`POST /query`, one
//! keep-alive connection pool) and of `Engine::query` directly (one thread per client),
//! alternately, so both see the same machine load. Printed: queries/s and p50/p95
//! latency of each, the HTTP overhead on p50 at one client, and each path's throughput
//! at 4 clients over 1.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use rhizome_engine::{Engine, Method, QueryRequest};
use rhizome_eval::{load_questions, percentile};
use rhizome_server::{Server, ServerOptions};
use serde_json::json;

use crate::app::{print_json, App};

/// Latencies (ms) and wall time (s) of one batch.
struct Run {
    ms: Vec<f64>,
    wall_s: f64,
}

impl Run {
    fn row(&self) -> serde_json::Value {
        json!({
            "queries_per_s": self.ms.len() as f64 / self.wall_s.max(1e-9),
            "p50_ms": percentile(&self.ms, 50.0),
            "p95_ms": percentile(&self.ms, 95.0),
        })
    }
}

fn in_process(engine: &Engine, qs: &[String], method: Method, clients: usize) -> Result<Run> {
    let next = AtomicUsize::new(0);
    let t = Instant::now();
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
        handles.into_iter().map(|h| h.join().map_err(|_| anyhow::anyhow!("a client thread panicked"))?).collect()
    });
    let wall_s = t.elapsed().as_secs_f64();
    let mut ms = Vec::new();
    for r in per_client {
        ms.extend(r?);
    }
    Ok(Run { ms, wall_s })
}

async fn over_http(client: &reqwest::Client, url: &str, qs: &Arc<Vec<String>>, method: Method, clients: usize) -> Result<Run> {
    let next = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (client, url, qs, next) = (client.clone(), url.to_string(), qs.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut ms = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(q) = qs.get(i) else { return Ok::<_, anyhow::Error>(ms) };
                let t = Instant::now();
                let r = client.post(&url).json(&json!({"question": q, "method": method.as_str()})).send().await?;
                let status = r.status();
                let body = r.bytes().await?;
                if !status.is_success() {
                    bail!("POST /query answered {status}: {}", String::from_utf8_lossy(&body));
                }
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }));
    }
    let mut ms = Vec::new();
    for task in tasks {
        ms.extend(task.await??);
    }
    Ok(Run { ms, wall_s: t.elapsed().as_secs_f64() })
}

pub fn serve(app: App, questions: &Path, methods: &[String], clients: &[usize], limit: usize) -> Result<()> {
    let mut qs: Vec<String> = load_questions(questions)?.into_iter().map(|q| q.question).collect();
    qs.truncate(limit.max(1));
    let qs = Arc::new(qs);
    let methods: Vec<Method> =
        methods.iter().map(|m| m.parse::<Method>().map_err(anyhow::Error::msg)).collect::<Result<_>>()?;
    let engine = crate::cmd_serve::engine(&app, "rhizome bench serve")?;
    if !engine.exists() {
        bail!("no index at {}: index or import something first", app.store);
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
        Ok::<_, anyhow::Error>(rows)
    })?;
    drop(rt);
    let get = |m: &str, c: usize, path: &str, k: &str| out[m][c.to_string()][path][k].as_f64().unwrap_or(f64::NAN);
    let mut summary = serde_json::Map::new();
    for m in methods.iter().map(|m| m.as_str()) {
        let (h1, i1) = (get(m, 1, "http", "p50_ms"), get(m, 1, "in_process", "p50_ms"));
        summary.insert(m.to_string(), json!({
            "http_overhead_p50_ms": h1 - i1,
            "http_vs_in_process_p50": h1 / i1,
            "http_qps_4_vs_1": get(m, 4, "http", "queries_per_s") / get(m, 1, "http", "queries_per_s"),
            "in_process_qps_4_vs_1": get(m, 4, "in_process", "queries_per_s") / get(m, 1, "in_process", "queries_per_s"),
        }));
    }
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    if app.json {
        return print_json(&json!({"questions": qs.len(), "cores": cores, "methods": out, "summary": summary}));
    }
    println!("{} questions per level; {cores} cores; server in this process on 127.0.0.1", qs.len());
    println!("{:<10} {:>7} {:<11} {:>9} {:>9} {:>9}", "method", "clients", "path", "q/s", "p50 ms", "p95 ms");
    for m in methods.iter().map(|m| m.as_str()) {
        for &c in clients {
            for path in ["in_process", "http"] {
                println!("{:<10} {:>7} {:<11} {:>9.2} {:>9.1} {:>9.1}", m, c.max(1), path,
                    get(m, c.max(1), path, "queries_per_s"), get(m, c.max(1), path, "p50_ms"), get(m, c.max(1), path, "p95_ms"));
            }
        }
        let s = &summary[m];
        let f = |k: &str| s[k].as_f64().unwrap_or(f64::NAN);
        println!("{m}: HTTP overhead on p50 at 1 client {:+.1} ms ({:.3}x); throughput 4 vs 1 client: HTTP {:.2}x, in-process {:.2}x",
            f("http_overhead_p50_ms"), f("http_vs_in_process_p50"), f("http_qps_4_vs_1"), f("in_process_qps_4_vs_1"));
    }
    Ok(())
}
