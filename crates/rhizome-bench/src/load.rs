//! `rhizome bench load`: N concurrent clients against the HTTP server for a while, each
//! mixing queries of every retrieval method, chat requests, reads, uploads and deletions of
//! documents (seeded choices). The server runs in this process on 127.0.0.1:0 on the index
//! given (which must be empty: it is seeded first with passages of the corpus). At the end
//! every acknowledged upload (its job done) must be listed and every deleted document
//! absent (else it fails); the index's stats are compared with those of an index made of
//! the surviving documents alone and each difference printed. Printed: requests served, errors, p50/p95 per kind of request, and the
//! process's resident memory sampled every `--sample-secs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rhizome_engine::{text_document, Engine, IndexInput, Method, WriteOptions};
use rhizome_eval::{load_questions, percentile};
use rhizome_server::{Server, ServerOptions};
use serde_json::{json, Value};

use crate::common::{bail, print_json, Bench, Context as _, Error, Result};

/// Passages indexed before the clients start.
const SEED_DOCS: usize = 30;
/// Documents a client keeps uploaded at most: past it, it deletes one of them instead of
/// uploading. The index then stays near a fixed size (seed + clients x this), so memory
/// sampled over a long run shows what the server keeps, not how the index grows.
const MAX_OWN: usize = 4;
/// Errors kept word for word in the report.
const KEEP_ERRORS: usize = 20;

/// What the load run is given.
pub struct LoadArgs<'a> {
    pub corpus: &'a Path,
    pub questions: &'a Path,
    pub clients: usize,
    pub seconds: f64,
    pub sample_secs: f64,
    pub seed: u64,
}

/// A corpus passage to upload, titled `load-N` (`seed-N` for the seed).
#[derive(Clone)]
struct Passage {
    title: String,
    text: String,
}

/// Shared by the clients: the corpus, what was acknowledged and deleted, the figures.
struct Shared {
    base: String,
    questions: Vec<String>,
    corpus: Vec<Passage>,
    next_passage: AtomicUsize,
    /// Titles whose upload job finished, and titles deleted (200).
    acknowledged: Mutex<BTreeSet<String>>,
    deleted: Mutex<BTreeSet<String>>,
    latencies: Mutex<BTreeMap<String, Vec<f64>>>,
    errors: Mutex<Vec<String>>,
    n_errors: AtomicUsize,
    stop: AtomicBool,
}

impl Shared {
    fn record(&self, kind: &str, ms: f64) {
        self.latencies.lock().unwrap().entry(kind.to_string()).or_default().push(ms);
    }

    fn error(&self, kind: &str, msg: String) {
        self.n_errors.fetch_add(1, Ordering::Relaxed);
        let mut e = self.errors.lock().unwrap();
        if e.len() < KEEP_ERRORS {
            e.push(format!("{kind}: {msg}"));
        }
    }
}

/// xorshift64*: the clients' choices, the same for the same seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 33) as usize % n.max(1)
    }
}

/// Resident memory of this process in MiB.
fn rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn load_corpus(path: &Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let items = v.as_array().with_context(|| format!("{}: expected a JSON list of {{title, text}}", path.display()))?;
    let out: Vec<(String, String)> = items
        .iter()
        .filter_map(|p| Some((p["title"].as_str()?.to_string(), p["text"].as_str()?.to_string())))
        .collect();
    if out.len() < SEED_DOCS + 10 {
        bail!(
            "{}: {} passages with a title and a text; the load needs at least {}",
            path.display(),
            out.len(),
            SEED_DOCS + 10
        );
    }
    Ok(out)
}

/// One request: its status and body, or a transport error.
async fn call(req: reqwest::RequestBuilder) -> std::result::Result<(u16, String), String> {
    let r = req.send().await.map_err(|e| format!("{e:#}"))?;
    let status = r.status().as_u16();
    let body = r.text().await.map_err(|e| format!("{e:#}"))?;
    Ok((status, body))
}

/// A request that must answer `want`: its latency recorded under `kind`, or an error.
async fn timed(sh: &Shared, kind: &str, want: u16, req: reqwest::RequestBuilder) -> Option<String> {
    let t = Instant::now();
    match call(req).await {
        Ok((s, body)) if s == want => {
            sh.record(kind, t.elapsed().as_secs_f64() * 1e3);
            Some(body)
        }
        Ok((s, body)) => {
            sh.error(kind, format!("{s}: {}", body.chars().take(300).collect::<String>()));
            None
        }
        Err(e) => {
            sh.error(kind, e);
            None
        }
    }
}

/// Upload passages as one JSON upload and wait for its job; true when it finished.
async fn upload(sh: &Shared, http: &reqwest::Client, docs: &[Passage]) -> bool {
    let body = json!({"documents": docs.iter().map(|p| json!({"title": p.title, "text": p.text})).collect::<Vec<_>>()});
    let t = Instant::now();
    let Some(accepted) = timed(sh, "upload", 202, http.post(format!("{}/documents", sh.base)).json(&body)).await else {
        return false;
    };
    let Some(job) = serde_json::from_str::<Value>(&accepted).ok().and_then(|v| v["job_id"].as_u64()) else {
        sh.error("upload", format!("no job_id in {accepted}"));
        return false;
    };
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let Some(v) = timed(sh, "job", 200, http.get(format!("{}/jobs/{job}", sh.base))).await else { return false };
        let v: Value = serde_json::from_str(&v).unwrap_or_default();
        match v["state"].as_str() {
            Some("done") => {
                sh.record("upload-indexed", t.elapsed().as_secs_f64() * 1e3);
                return true;
            }
            Some("failed") => {
                sh.error("upload-indexed", format!("job {job} failed: {}", v["errors"]));
                return false;
            }
            _ => {}
        }
    }
}

async fn client(sh: Arc<Shared>, http: reqwest::Client, id: usize, seed: u64) {
    let mut rng = Rng(seed ^ (id as u64 + 1).wrapping_mul(0x9E3779B97F4A7C15));
    let mut mine: Vec<String> = Vec::new();
    let mut turn = id;
    while !sh.stop.load(Ordering::Relaxed) {
        turn += 1;
        let q = &sh.questions[rng.below(sh.questions.len())];
        let roll = rng.below(100);
        if roll < 62 {
            // Every method in turn, `auto` included.
            let m = Method::ALL[turn % Method::ALL.len()].as_str();
            let body = json!({"question": q, "method": m, "stream": rng.below(8) == 0});
            timed(&sh, &format!("query {m}"), 200, http.post(format!("{}/query", sh.base)).json(&body)).await;
        } else if roll < 67 {
            let body = json!({"model": "rhizome-basic", "messages": [{"role": "user", "content": q}]});
            timed(&sh, "chat openai", 200, http.post(format!("{}/v1/chat/completions", sh.base)).json(&body)).await;
        } else if roll < 70 {
            let body = json!({"model": "rhizome", "stream": false, "messages": [{"role": "user", "content": q}]});
            timed(&sh, "chat ollama", 200, http.post(format!("{}/api/chat", sh.base)).json(&body)).await;
        } else if roll < 82 {
            let path = match rng.below(4) {
                0 => "/documents?limit=20".to_string(),
                1 => "/stats".to_string(),
                2 => format!(
                    "/graph/entities?q={}",
                    q.split_whitespace().next().unwrap_or("a").trim_matches(|c: char| !c.is_alphanumeric())
                ),
                _ => "/communities?level=0".to_string(),
            };
            timed(&sh, "read", 200, http.get(format!("{}{path}", sh.base))).await;
        } else if (roll < 92 && mine.len() < MAX_OWN) || mine.is_empty() {
            let n = 1 + rng.below(3);
            let docs: Vec<Passage> = (0..n)
                .filter_map(|_| {
                    let i = sh.next_passage.fetch_add(1, Ordering::Relaxed);
                    sh.corpus.get(i).cloned()
                })
                .collect();
            if docs.is_empty() {
                continue;
            }
            if upload(&sh, &http, &docs).await {
                let mut ack = sh.acknowledged.lock().unwrap();
                for d in &docs {
                    ack.insert(d.title.clone());
                    mine.push(d.title.clone());
                }
            }
        } else {
            let title = mine.swap_remove(rng.below(mine.len()));
            let url = format!("{}/documents/upload:{title}", sh.base);
            if timed(&sh, "delete", 200, http.delete(url)).await.is_some() {
                sh.deleted.lock().unwrap().insert(title);
            }
        }
    }
}

/// Every document title the server lists.
async fn listed(http: &reqwest::Client, base: &str) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    let mut offset = 0;
    loop {
        let v: Value = http
            .get(format!("{base}/documents?limit=1000&offset={offset}"))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let page = v["documents"].as_array().context("GET /documents: no documents list")?;
        out.extend(page.iter().filter_map(|d| d["title"].as_str().map(str::to_string)));
        offset += page.len();
        if page.is_empty() || offset as u64 >= v["total"].as_u64().unwrap_or(0) {
            return Ok(out);
        }
    }
}

pub fn load(bench: Bench, args: LoadArgs) -> Result<()> {
    let questions: Vec<String> = load_questions(args.questions)?.into_iter().map(|q| q.question).take(500).collect();
    if questions.is_empty() {
        bail!("{}: no questions", args.questions.display());
    }
    let corpus: Vec<Passage> = load_corpus(args.corpus)?
        .into_iter()
        .enumerate()
        .map(|(i, (title, text))| {
            let label = if i < SEED_DOCS { format!("seed-{i}") } else { format!("load-{i}") };
            Passage { title: label, text: format!("{title}\n\n{text}") }
        })
        .collect();
    let engine = bench.serving_engine("rhizome bench load")?;
    if engine.exists() && engine.documents(None, 0, 0)?.total > 0 {
        bail!(
            "the index at {} is not empty: give an empty --index (the load run seeds it and checks it at the end)",
            bench.store
        );
    }
    rhizome_server::launch::raise_open_files();
    let clients = args.clients.max(1);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    let report = rt.block_on(async {
        let server = Server::bind(engine.clone(), ServerOptions::new("127.0.0.1:0".parse()?)).await?;
        let base = format!("http://{}", server.local_addr()?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        // Idle pooled connections are dropped before the server's header timeout (30 s)
        // would close them under a request.
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(600))
            .pool_idle_timeout(Duration::from_secs(20))
            .build()?;
        let sh = Arc::new(Shared {
            base: base.clone(),
            questions,
            corpus: corpus[SEED_DOCS..].to_vec(),
            next_passage: AtomicUsize::new(0),
            acknowledged: Mutex::new(BTreeSet::new()),
            deleted: Mutex::new(BTreeSet::new()),
            latencies: Mutex::new(BTreeMap::new()),
            errors: Mutex::new(Vec::new()),
            n_errors: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        if !upload(&sh, &http, &corpus[..SEED_DOCS]).await {
            bail!("seeding the index failed: {:?}", sh.errors.lock().unwrap());
        }
        sh.latencies.lock().unwrap().clear();
        // Sampled every sample_secs from the start of the load to its end.
        let t0 = Instant::now();
        let mut rss = vec![(0.0, rss_mib())];
        let tasks: Vec<_> =
            (0..clients).map(|c| tokio::spawn(client(sh.clone(), http.clone(), c, args.seed))).collect();
        let deadline = t0 + Duration::from_secs_f64(args.seconds);
        let every = Duration::from_secs_f64(args.sample_secs.max(1.0));
        while Instant::now() < deadline {
            tokio::time::sleep(every.min(deadline.saturating_duration_since(Instant::now()))).await;
            rss.push((t0.elapsed().as_secs_f64(), rss_mib()));
        }
        sh.stop.store(true, Ordering::Relaxed);
        for t in tasks {
            t.await?;
        }
        let load_s = t0.elapsed().as_secs_f64();
        rss.push((load_s, rss_mib()));
        let present = listed(&http, &base).await?;
        let _ = stop.send(());
        running.await??;
        Ok::<_, Error>((sh, rss, load_s, present))
    })?;
    drop(rt);
    let (sh, rss, load_s, present) = report;

    // What must be there: the seed and every acknowledged upload not deleted.
    let acknowledged = sh.acknowledged.lock().unwrap().clone();
    let deleted = sh.deleted.lock().unwrap().clone();
    let mut expected: BTreeSet<String> = corpus[..SEED_DOCS].iter().map(|p| p.title.clone()).collect();
    expected.extend(acknowledged.difference(&deleted).cloned());
    let lost: Vec<&String> = expected.difference(&present).collect();
    let extra: Vec<&String> = present.difference(&expected).collect();
    // The same documents indexed alone, in one batch, in a fresh index.
    let fresh = tempfile::tempdir().context("a temporary directory")?;
    let fresh_url = fresh.path().join("index").to_string_lossy().into_owned();
    let reference = Engine::open(&fresh_url, bench.config.clone(), WriteOptions::default())?;
    let docs = corpus
        .iter()
        .filter(|p| expected.contains(&p.title))
        .map(|p| text_document(&p.title, &p.text, &format!("upload:{}", p.title), "corpus"))
        .collect::<rhizome_core::Result<Vec<_>>>()?;
    reference.index(IndexInput::Documents(docs), &rhizome_engine::NoProgress, &AtomicBool::new(false))?;
    let (got, want) = (engine.stats()?, reference.stats()?);
    let stats_equal = got == want;
    // Each count that differs: (what, served index, fresh index).
    let mut stats_diff = Vec::new();
    for (what, a, b) in [("nodes", &got.nodes, &want.nodes), ("edges", &got.edges, &want.edges)] {
        for k in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
            if a.get(k) != b.get(k) {
                stats_diff.push(json!([format!("{what} {k}"), a.get(k), b.get(k)]));
            }
        }
    }

    let lat = sh.latencies.lock().unwrap();
    let served: usize = lat.values().map(Vec::len).sum();
    let errors = sh.n_errors.load(Ordering::Relaxed);
    let kinds: BTreeMap<&String, Value> = lat
        .iter()
        .map(|(k, v)| (k, json!({"count": v.len(), "p50_ms": percentile(v, 50.0), "p95_ms": percentile(v, 95.0)})))
        .collect();
    let rss_max = rss.iter().map(|r| r.1).fold(0.0, f64::max);
    let out = json!({
        "clients": clients,
        "seconds": load_s,
        "requests_served": served,
        "requests_per_s": served as f64 / load_s,
        "errors": errors,
        "error_samples": *sh.errors.lock().unwrap(),
        "kinds": kinds,
        "rss_mib": {"start": rss[0].1, "end": rss[rss.len() - 1].1, "max": rss_max,
            "samples": rss.iter().map(|(t, m)| json!([(t * 10.0).round() / 10.0, (m * 10.0).round() / 10.0])).collect::<Vec<_>>()},
        "documents": {"seed": SEED_DOCS, "acknowledged_uploads": acknowledged.len(), "deleted": deleted.len(),
            "expected": expected.len(), "present": present.len(), "lost": lost, "unexpected": extra},
        "stats_equal_fresh_index": stats_equal,
        "stats_diff": stats_diff,
        "stats": got,
        "stats_fresh": want,
    });
    if bench.json {
        print_json(&out)?;
    } else {
        println!("{clients} clients for {load_s:.0} s on 127.0.0.1 (server in this process): {served} requests served ({:.1}/s), {errors} errors",
            served as f64 / load_s);
        for e in sh.errors.lock().unwrap().iter() {
            println!("  error: {e}");
        }
        println!("{:<22} {:>7} {:>10} {:>10}", "kind", "count", "p50 ms", "p95 ms");
        for (k, v) in lat.iter() {
            println!("{:<22} {:>7} {:>10.1} {:>10.1}", k, v.len(), percentile(v, 50.0), percentile(v, 95.0));
        }
        println!(
            "RSS (MiB) every {:.0} s: {}",
            args.sample_secs,
            rss.iter().map(|(t, m)| format!("{t:.0}s {m:.0}")).collect::<Vec<_>>().join(", ")
        );
        println!("RSS start {:.0} MiB, end {:.0} MiB, max {rss_max:.0} MiB", rss[0].1, rss[rss.len() - 1].1);
        println!("documents: {SEED_DOCS} seeded, {} uploads acknowledged, {} deleted; {} expected, {} present, {} lost, {} unexpected",
            acknowledged.len(), deleted.len(), expected.len(), present.len(), lost.len(), extra.len());
        println!("stats equal to a fresh index of the surviving documents alone: {stats_equal}");
        for d in &stats_diff {
            println!("  {} served {} / fresh {}", d[0], d[1], d[2]);
        }
    }
    // A stats difference is reported, not fatal: entity merging across batches and
    // deletions is not batch-independent.
    if errors > 0 || !lost.is_empty() || !extra.is_empty() {
        bail!("the load run failed: {errors} errors, {} lost, {} unexpected", lost.len(), extra.len());
    }
    Ok(())
}
