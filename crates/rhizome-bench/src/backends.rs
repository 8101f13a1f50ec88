//! `rhizome bench backends`: the same import and the same questions on every store backend
//! in one run, as ratios to the embedded SQLite index.
//!
//! Embedding is the same work whatever the store, and on these machines it is most of an
//! import, so it is taken out: a warm-up import into a scratch SQLite index (and one pass
//! of the questions) fills an in-memory cache of every vector, and the timed imports and
//! queries read their vectors from it. What is left is what the backend changes: writing
//! batches, the support refresh, synonymy, communities and reports; for queries, every
//! store read a method makes (the question's own embedding is apart, as asked). The
//! warm-up's figures are printed too, for scale.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use rhizome_core::Embedder;
use rhizome_engine::{Engine, IndexInput, Method, NoProgress, QueryRequest, WriteOptions};
use rhizome_eval::{load_questions, percentile};
use serde_json::json;

use crate::common::{bail, parse_methods, print_json, Bench, Result};

struct Figures {
    import_s: f64,
    /// Per method: query latencies without the question's embedding (ms).
    query_ms: Vec<(Method, Vec<f64>)>,
}

fn run_one(
    bench: &Bench,
    url: &str,
    openie: &Path,
    qs: &[String],
    methods: &[Method],
    embedder: &Arc<dyn Embedder>,
) -> Result<Figures> {
    let engine = Engine::open(url, bench.config.clone(), WriteOptions::default())?;
    engine.set_embedder(embedder.clone());
    if engine.exists() && engine.stats()?.nodes.get("Document").copied().unwrap_or(0) > 0 {
        bail!("{url} already holds documents: give an empty store (a new directory, database or graph)");
    }
    let cancel = AtomicBool::new(false);
    let t = Instant::now();
    engine.index(IndexInput::HipporagOpenie(openie.to_path_buf()), &NoProgress, &cancel)?;
    let import_s = t.elapsed().as_secs_f64();
    let mut query_ms = Vec::new();
    for &m in methods {
        let mut ms = Vec::with_capacity(qs.len());
        for q in qs {
            let o = engine.query(&QueryRequest::new(q, m), None)?;
            let total = o.timings_ms.get("total").copied().unwrap_or(0.0);
            ms.push(total - o.timings_ms.get("embed_query").copied().unwrap_or(0.0));
        }
        query_ms.push((m, ms));
    }
    Ok(Figures { import_s, query_ms })
}

pub fn backends(
    bench: Bench,
    openie: &Path,
    questions: &Path,
    postgres: Option<&str>,
    falkordb: Option<&str>,
    methods: &[String],
    limit: usize,
) -> Result<()> {
    let methods: Vec<Method> = parse_methods(methods)?;
    let qs: Vec<String> = load_questions(questions)?.into_iter().take(limit).map(|q| q.question).collect();
    let tmp = tempfile::tempdir()?;
    let model = rhizome_engine::load_embedder(&bench.config, None)?;
    // Every vector computed once, for the whole run.
    let cached: Arc<dyn Embedder> = Arc::new(rhizome_embed::MemoEmbedder::new(model, usize::MAX));

    // Warm-up: every vector of the import and of the questions' answers, into the cache.
    let warm_url = tmp.path().join("warm-up").display().to_string();
    let warm = run_one(&bench, &warm_url, openie, &qs, &methods, &cached)?;

    let sqlite_url = tmp.path().join("sqlite").display().to_string();
    let mut rows: Vec<(String, Figures)> =
        vec![("sqlite".into(), run_one(&bench, &sqlite_url, openie, &qs, &methods, &cached)?)];
    for (name, url) in [("postgres", postgres), ("falkordb", falkordb)] {
        if let Some(u) = url {
            rows.push((name.into(), run_one(&bench, u, openie, &qs, &methods, &cached)?));
        }
    }
    let base = &rows[0].1;
    let p = |f: &Figures, i: usize, q: f64| percentile(&f.query_ms[i].1, q);
    let mut out = Vec::new();
    for (name, f) in &rows {
        let mut row = json!({"backend": name, "import_s": f.import_s, "import_ratio": f.import_s / base.import_s});
        for (i, (m, _)) in f.query_ms.iter().enumerate() {
            row[m.as_str()] = json!({
                "p50_ms": p(f, i, 50.0), "p95_ms": p(f, i, 95.0),
                "p50_ratio": p(f, i, 50.0) / p(base, i, 50.0).max(1e-9),
                "p95_ratio": p(f, i, 95.0) / p(base, i, 95.0).max(1e-9),
            });
        }
        out.push(row);
    }
    if bench.json {
        return print_json(&json!({"warm_up_import_s": warm.import_s, "questions": qs.len(), "backends": out}));
    }
    println!(
        "{} questions; the warm-up import with embedding took {:.1} s (embedding is then cached: \
              the figures below are the store's part)",
        qs.len(),
        warm.import_s
    );
    print!("{:<10} {:>10} {:>7}", "backend", "import s", "ratio");
    for m in &methods {
        print!(" {:>24}", format!("{} p50/p95 ms (ratio)", m.as_str()));
    }
    println!();
    for (name, f) in &rows {
        print!("{:<10} {:>10.1} {:>6.2}x", name, f.import_s, f.import_s / base.import_s);
        for i in 0..methods.len() {
            print!(
                " {:>24}",
                format!(
                    "{:.1}/{:.1} ({:.2}x)",
                    p(f, i, 50.0),
                    p(f, i, 95.0),
                    p(f, i, 50.0) / p(base, i, 50.0).max(1e-9)
                )
            );
        }
        println!();
    }
    Ok(())
}
