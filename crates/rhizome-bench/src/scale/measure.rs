//! One row of `bench scale`: what an index of some size costs to hold and to ask.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rhizome_core::{EmbedKind, Embedder};
use rhizome_engine::{Engine, Method, WriteOptions};
use rhizome_eval::percentile;
use rhizome_retrieve::{retriever, ContextKind, Hippo, Retriever};
use rhizome_store::StoreUrl;
use serde_json::{json, Value};

use super::derived::DerivedEmbedder;
use crate::common::{Bench, Context, Result};

/// A question rewritten for the target copy, with the chunk ids of its supporting passages.
pub struct Question {
    pub text: String,
    pub gold: Vec<String>,
}

/// Latency of one method at one top_k.
pub struct Timing {
    /// The method, or `hippo-whole` (hippo's PageRank over the whole graph).
    pub method: String,
    pub top_k: usize,
    /// Per question, retrieval without the question's embedding (ms).
    pub ms: Vec<f64>,
    /// hippo's PageRank step per question (ms).
    pub ppr_ms: Vec<f64>,
    /// Mean share of the supporting passages among the first `top_k` passages returned.
    pub recall: f64,
    /// Per question, the passages returned.
    pub passages: Vec<Vec<String>>,
    /// Per stage the method reports (`timings_ms`), its time per question (ms).
    pub stages: std::collections::BTreeMap<String, Vec<f64>>,
}

/// The row of [`Hippo::whole_graph`], timed beside `hippo`.
pub const HIPPO_WHOLE: &str = "hippo-whole";
/// The suffix of a graph method's row measured reading neighbourhoods, not the whole graph.
pub const AROUND: &str = "-around";

/// Figures of one size.
#[derive(Default)]
pub struct Row {
    pub chunks: u64,
    pub entities: u64,
    pub relations: u64,
    pub synonyms: u64,
    pub chunks_added: usize,
    /// Writing this step's batches and synonymy (wall time of the step).
    pub step_s: f64,
    /// Of which `write_batch` calls.
    pub write_s: f64,
    /// Of which building the indexes a bulk load sets aside (PostgreSQL's HNSW).
    pub index_s: f64,
    pub store_bytes: Option<u64>,
    pub graph_load_ms: f64,
    /// The first hippo question, which builds its graph (ms).
    pub hippo_first_ms: Option<f64>,
    /// A `rhizome serve` on the index after one question per method: (VmRSS, VmHWM) MiB.
    pub serve_rss_mib: Option<(f64, f64)>,
    /// The same after one question of basic and each graph method reading neighbourhoods
    /// (`retrieval.whole_graph_up_to=0`): no whole graph in memory.
    pub serve_around_rss_mib: Option<(f64, f64)>,
    pub timings: Vec<Timing>,
}

pub fn measure(
    bench: &Bench,
    url: &StoreUrl,
    embedder: &Arc<DerivedEmbedder>,
    methods: &[Method],
    top_k: &[usize],
    questions: &[Question],
    serve: bool,
) -> Result<Row> {
    let mut row = Row { store_bytes: url.disk_bytes()?, ..Row::default() };
    let engine = Engine::open(&bench.store, bench.config.clone(), WriteOptions::default())?;
    engine.set_embedder(embedder.clone());
    let stats = engine.stats()?;
    row.chunks = stats.nodes.get("Chunk").copied().unwrap_or(0);
    row.entities = stats.nodes.get("Entity").copied().unwrap_or(0);
    row.relations = stats.edges.get("RELATED").copied().unwrap_or(0);
    row.synonyms = stats.edges.get("SYNONYM").copied().unwrap_or(0);
    // Questions embedded before timing (the embedder remembers them): the figures are
    // retrieval's, and every `embed*` step a method reports is taken out besides.
    let texts: Vec<String> = questions.iter().map(|q| q.text.clone()).collect();
    embedder.embed(&texts, EmbedKind::Query)?;
    // Methods that read the graph ([`Method::reads_graph`]) reading the neighbourhoods they
    // need, before anything loads the whole graph: an engine of their own, with
    // `retrieval.whole_graph_up_to` 0.
    let around: Vec<Method> = methods.iter().copied().filter(|m| m.reads_graph()).collect();
    if !around.is_empty() {
        let mut config = bench.config.clone();
        config.retrieval.whole_graph_up_to = 0;
        let light = Engine::open(&bench.store, config, WriteOptions::default())?;
        light.set_embedder(embedder.clone());
        for &m in &around {
            for &k in top_k {
                let name = format!("{}{AROUND}", m.as_str());
                row.timings.push(time_method(&light, &name, &*retriever(m), k, questions, &mut None)?);
            }
        }
        if serve {
            let asked: Vec<Method> = std::iter::once(Method::Basic).chain(around).collect();
            row.serve_around_rss_mib =
                Some(serve_rss(bench, &asked, &questions[0].text, &["--set", "retrieval.whole_graph_up_to=0"])?);
        }
    }
    row.graph_load_ms = engine.with_env(None, |env| {
        let t = Instant::now();
        env.graph()?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    })?;
    let mut runs: Vec<(String, Box<dyn Retriever>)> =
        methods.iter().map(|&m| (m.as_str().to_string(), retriever(m))).collect();
    if methods.contains(&Method::Hippo) {
        runs.push((HIPPO_WHOLE.to_string(), Box::new(Hippo::whole_graph())));
    }
    for (name, r) in &runs {
        for &k in top_k {
            let timing = time_method(&engine, name, &**r, k, questions, &mut row.hippo_first_ms)?;
            row.timings.push(timing);
        }
    }
    if serve {
        row.serve_rss_mib = Some(serve_rss(bench, methods, &questions[0].text, &[])?);
    }
    Ok(row)
}

/// `r`'s latencies at top `k` on every question, after one untimed question that warms
/// its caches (hippo's graph: that one's time goes to `first` when it is empty).
fn time_method(
    engine: &Engine,
    name: &str,
    r: &dyn Retriever,
    k: usize,
    questions: &[Question],
    first: &mut Option<f64>,
) -> Result<Timing> {
    Ok(engine.with_env(Some(k), |env| {
        let t = Instant::now();
        r.retrieve(env, &questions[0].text)?;
        if name == "hippo" && first.is_none() {
            *first = Some(t.elapsed().as_secs_f64() * 1e3);
        }
        let (mut ms, mut ppr_ms, mut recall, mut passages) = (Vec::new(), Vec::new(), 0.0, Vec::new());
        let mut stages: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
        for q in questions {
            let t = Instant::now();
            let got = r.retrieve(env, &q.text)?;
            let total = t.elapsed().as_secs_f64() * 1e3;
            let e: f64 = got.timings_ms.iter().filter(|(k, _)| k.starts_with("embed")).map(|(_, v)| v).sum();
            ms.push((total - e).max(0.0));
            ppr_ms.extend(got.timings_ms.get("ppr"));
            for (stage, v) in got.timings_ms.iter().filter(|(k, _)| !k.starts_with("embed")) {
                stages.entry(stage.clone()).or_default().push(*v);
            }
            let top: Vec<String> =
                got.contexts.iter().filter(|c| c.kind == ContextKind::Chunk).take(k).map(|c| c.id.clone()).collect();
            if !q.gold.is_empty() {
                recall += q.gold.iter().filter(|g| top.contains(g)).count() as f64 / q.gold.len() as f64;
            }
            passages.push(top);
        }
        let with_gold = questions.iter().filter(|q| !q.gold.is_empty()).count().max(1);
        let recall = recall / with_gold as f64;
        Ok(Timing { method: name.to_string(), top_k: k, ms, ppr_ms, recall, passages, stages })
    })?)
}

/// Resident memory (VmRSS, VmHWM in MiB) of `rhizome serve` on the index, started as a
/// child of this process, after it answered one question per method over HTTP (which
/// loads the graph and the vectors); the child is stopped by its PID.
fn serve_rss(bench: &Bench, methods: &[Method], question: &str, args: &[&str]) -> Result<(f64, f64)> {
    let exe = std::env::current_exe().context("finding the rhizome binary to start `rhizome serve`")?;
    let mut child = Command::new(exe)
        .arg("--store")
        .arg(&bench.store)
        .args(args)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting `rhizome serve` on the index")?;
    let pid = child.id();
    let stop = |child: &mut std::process::Child| {
        // SAFETY: kill(2) on the PID of our own child, not yet waited for.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        let t = Instant::now();
        while matches!(child.try_wait(), Ok(None)) && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    };
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        BufReader::new(out).read_line(&mut line)?;
    }
    let Some(base) = line.trim().strip_prefix("listening on ").map(str::to_string) else {
        stop(&mut child);
        return Err(crate::common::Error::Failed(format!("`rhizome serve` did not start (it printed {line:?})")));
    };
    let asked = (|| -> Result<()> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        rt.block_on(async {
            let http = reqwest::Client::builder().timeout(Duration::from_secs(1800)).build()?;
            for m in methods {
                let body = json!({"question": question, "method": m.as_str()});
                let r = http.post(format!("{base}/query")).json(&body).send().await?;
                if !r.status().is_success() {
                    let s = r.status();
                    let text = r.text().await.unwrap_or_default();
                    return Err(crate::common::Error::Failed(format!("`rhizome serve` answered {s}: {text}")));
                }
            }
            Ok(())
        })
    })();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    stop(&mut child);
    asked?;
    let field = |name: &str| -> f64 {
        let kb = status.lines().find(|l| l.starts_with(name)).and_then(|l| l.split_whitespace().nth(1));
        kb.and_then(|k| k.parse::<f64>().ok()).unwrap_or(0.0) / 1024.0
    };
    Ok((field("VmRSS:"), field("VmHWM:")))
}

fn p(v: &[f64], q: f64) -> f64 {
    percentile(v, q)
}

impl Row {
    /// Questions on which `t` returned the passages `hippo` did at the same top_k.
    fn same_as_hippo(&self, t: &Timing) -> usize {
        let hippo = self.timings.iter().find(|h| h.method == "hippo" && h.top_k == t.top_k);
        hippo.map_or(0, |h| h.passages.iter().zip(&t.passages).filter(|(a, b)| a == b).count())
    }

    pub fn json(&self) -> Value {
        let methods: Vec<Value> = self
            .timings
            .iter()
            .map(|t| {
                let mut v = json!({"method": t.method, "top_k": t.top_k,
                    "p50_ms": p(&t.ms, 50.0), "p95_ms": p(&t.ms, 95.0), "recall": t.recall});
                if !t.ppr_ms.is_empty() {
                    v["ppr_p50_ms"] = json!(p(&t.ppr_ms, 50.0));
                    v["ppr_p95_ms"] = json!(p(&t.ppr_ms, 95.0));
                }
                if t.method == HIPPO_WHOLE {
                    v["same_passages_as_hippo"] = json!(self.same_as_hippo(t));
                }
                let stages: serde_json::Map<String, Value> =
                    t.stages.iter().map(|(k, v)| (k.clone(), json!(p(v, 50.0)))).collect();
                v["stage_p50_ms"] = Value::Object(stages);
                v
            })
            .collect();
        json!({
            "chunks": self.chunks, "entities": self.entities, "relations": self.relations,
            "synonyms": self.synonyms, "chunks_added": self.chunks_added, "step_s": self.step_s,
            "write_s": self.write_s, "index_s": self.index_s, "chunks_per_s": self.chunks_added as f64 / self.step_s.max(1e-9),
            "store_bytes": self.store_bytes, "graph_load_ms": self.graph_load_ms,
            "hippo_first_ms": self.hippo_first_ms,
            "serve_rss_mib": self.serve_rss_mib.map(|r| r.0), "serve_hwm_mib": self.serve_rss_mib.map(|r| r.1),
            "serve_around_rss_mib": self.serve_around_rss_mib.map(|r| r.0),
            "serve_around_hwm_mib": self.serve_around_rss_mib.map(|r| r.1),
            "methods": methods,
        })
    }

    pub fn print(&self, top_k: &[usize]) {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        println!();
        println!(
            "{} chunks, {} entities, {} relations, {} synonym edges: +{} chunks at {:.0} chunks/s ({:.1} s, \
             write_batch {:.1} s, indexes {:.1} s); store {}; graph load {:.0} ms; first hippo question {}; serve RSS {}; \
             serve RSS reading neighbourhoods {}",
            self.chunks,
            self.entities,
            self.relations,
            self.synonyms,
            self.chunks_added,
            self.chunks_added as f64 / self.step_s.max(1e-9),
            self.step_s,
            self.write_s,
            self.index_s,
            self.store_bytes.map_or("?".into(), |b| format!("{:.0} MiB", mib(b))),
            self.graph_load_ms,
            self.hippo_first_ms.map_or("-".into(), |v| format!("{v:.0} ms")),
            self.serve_rss_mib.map_or("not measured".into(), |(r, h)| format!("{r:.0} MiB (peak {h:.0})")),
            self.serve_around_rss_mib.map_or("not measured".into(), |(r, h)| format!("{r:.0} MiB (peak {h:.0})")),
        );
        print!("  {:<21}", "method");
        for k in top_k {
            print!(" {:>26}", format!("top {k}: p50/p95 ms, R@{k}"));
        }
        println!();
        let mut methods: Vec<&str> = self.timings.iter().map(|t| t.method.as_str()).collect();
        methods.dedup();
        for m in methods {
            print!("  {:<21}", m);
            for t in self.timings.iter().filter(|t| t.method == m) {
                print!(" {:>26}", format!("{:.1}/{:.1}, {:.2}", p(&t.ms, 50.0), p(&t.ms, 95.0), t.recall));
            }
            println!();
            let ppr: Vec<String> = self
                .timings
                .iter()
                .filter(|t| t.method == m && !t.ppr_ms.is_empty())
                .map(|t| format!("top {}: {:.1}/{:.1}", t.top_k, p(&t.ppr_ms, 50.0), p(&t.ppr_ms, 95.0)))
                .collect();
            if !ppr.is_empty() {
                println!("  {:<11} PPR p50/p95 ms {}", "", ppr.join(", "));
            }
            if let Some(t) = self.timings.iter().find(|t| t.method == m && !t.stages.is_empty()) {
                let stages: Vec<String> = t.stages.iter().map(|(k, v)| format!("{k} {:.1}", p(v, 50.0))).collect();
                println!("  {:<11} top {} stages, p50 ms: {}", "", t.top_k, stages.join(", "));
            }
            let same: Vec<String> = self
                .timings
                .iter()
                .filter(|t| t.method == m && m == HIPPO_WHOLE)
                .map(|t| format!("top {}: {} of {}", t.top_k, self.same_as_hippo(t), t.passages.len()))
                .collect();
            if !same.is_empty() {
                println!("  {:<11} same passages as hippo (bounded PageRank) {}", "", same.join(", "));
            }
        }
    }
}

/// The curve: one line per size, p50 (ms) per method at each top_k.
pub fn print_summary(rows: &[Row], top_k: &[usize]) {
    let mut methods: Vec<&str> =
        rows.first().map_or(Vec::new(), |r| r.timings.iter().map(|t| t.method.as_str()).collect());
    methods.dedup();
    println!();
    print!(
        "{:>9} {:>9} {:>9} {:>8} {:>9} {:>8} {:>8}",
        "chunks", "entities", "relations", "chunk/s", "store MiB", "load ms", "RSS MiB"
    );
    for m in &methods {
        for k in top_k {
            print!(" {:>15}", format!("{m}@{k} p50"));
        }
    }
    println!();
    for r in rows {
        print!(
            "{:>9} {:>9} {:>9} {:>8.0} {:>9} {:>8.0} {:>8}",
            r.chunks,
            r.entities,
            r.relations,
            r.chunks_added as f64 / r.step_s.max(1e-9),
            r.store_bytes.map_or("?".into(), |b| format!("{:.0}", b as f64 / 1048576.0)),
            r.graph_load_ms,
            r.serve_rss_mib.map_or("-".into(), |(x, _)| format!("{x:.0}")),
        );
        for m in &methods {
            for k in top_k {
                let t = r.timings.iter().find(|t| t.method == *m && t.top_k == *k);
                print!(" {:>15}", t.map_or("-".into(), |t| format!("{:.1}", p(&t.ms, 50.0))));
            }
        }
        println!();
    }
}
