//! multilingual-e5-small timings: single-question latency and index-time batch throughput.
//!
//! `cargo run --release -p rhizome-embed --example e5_timing -- QUESTIONS.json CORPUS.json
//! [ENTITIES.txt] [ROUNDS]` (MuSiQue formats; entity names one per line) prints, per round:
//! - `query`: p50/p90 of embedding one question (`EmbedKind::Query`, one call per question,
//!   the first 100 questions), as retrieval does;
//! - `entities`: up to 2000 entity names (from the entities file, else the corpus titles) in
//!   one call, as passages;
//! - `passages`: the first 300 corpus texts in one call.
//!
//! `E5_TIMING_ONLY=query` (or `batch`) runs only that part (for `perf record`);
//! `E5_TIMING_CONCURRENT=K` makes the query part run K threads at once, each embedding every
//! question (one per call), as a server answering K questions at a time; the p50/p90 are
//! over all K x 100 calls. `E5_TIMING_BATCH=N` sets the embedder's batch size; `E5_TIMING_GROUP=K` embeds the questions K per call instead of one (times are per call).
//! `E5_TIMING_DUMP=FILE` first writes every vector (questions one per call, then entities
//! and passages as one call each) to FILE as little-endian f32, to compare builds bit for bit.
//! Rounds alternate nothing: run it twice back to back to compare two builds on a shared
//! machine. `RAYON_NUM_THREADS` sets the thread count. The model must be installed.

use std::time::Instant;

use rhizome_core::{EmbedKind, Embedder};
use rhizome_embed::{models, E5Embedder};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: e5_timing QUESTIONS.json CORPUS.json [ENTITIES.txt] [ROUNDS]";
    let questions: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(args.first().ok_or(usage)?)?)?;
    let corpus: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(args.get(1).ok_or(usage)?)?)?;
    let rounds: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(3);
    let qs: Vec<String> = questions
        .iter()
        .filter_map(|q| q.get("question").and_then(|t| t.as_str()).map(str::to_string))
        .take(100)
        .collect();
    let passages: Vec<String> =
        corpus.iter().filter_map(|d| d.get("text").and_then(|t| t.as_str()).map(str::to_string)).take(300).collect();
    let mut entities: Vec<String> = match args.get(2) {
        Some(p) => std::fs::read_to_string(p)?.lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect(),
        None => corpus.iter().filter_map(|d| d["title"].as_str().map(str::to_string)).collect(),
    };
    entities.truncate(2000);
    let mut e = E5Embedder::load(&models::require(&models::E5_SMALL, &models::models_dir())?)?;
    if let Some(bs) = std::env::var("E5_TIMING_BATCH").ok().and_then(|b| b.parse().ok()) {
        e = e.with_batch_size(bs);
    }
    println!(
        "{:?} matmuls, {} rayon threads; {} questions, {} entities, {} passages",
        e.matmul(),
        rayon::current_num_threads(),
        qs.len(),
        entities.len(),
        passages.len()
    );
    let qtok: usize = qs.iter().map(|q| e.tokenize(q, EmbedKind::Query).len()).sum();
    println!("  {:.1} tokens per question", qtok as f64 / qs.len().max(1) as f64);
    e.embed(&qs[..8.min(qs.len())], EmbedKind::Query)?; // warm-up
    if let Ok(path) = std::env::var("E5_TIMING_DUMP") {
        let mut vecs = Vec::new();
        for q in &qs {
            vecs.extend(e.embed(std::slice::from_ref(q), EmbedKind::Query)?);
        }
        vecs.extend(e.embed(&entities, EmbedKind::Passage)?);
        vecs.extend(e.embed(&passages, EmbedKind::Passage)?);
        let bytes: Vec<u8> = vecs.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(&path, bytes)?;
        println!("wrote {} vectors to {path}", vecs.len());
    }
    let only = std::env::var("E5_TIMING_ONLY").unwrap_or_default();
    let concurrent: usize = std::env::var("E5_TIMING_CONCURRENT").ok().and_then(|g| g.parse().ok()).unwrap_or(1).max(1);
    let group: usize = std::env::var("E5_TIMING_GROUP").ok().and_then(|g| g.parse().ok()).unwrap_or(1).max(1);
    for round in 0..rounds {
        if only == "batch" {
            let (ent, entc) = timed(|| e.embed(&entities, EmbedKind::Passage))?;
            let (pas, pasc) = timed(|| e.embed(&passages, EmbedKind::Passage))?;
            println!("round {round}: entities {ent:.2} s ({entc:.2} CPU-s), passages {pas:.2} s ({pasc:.2} CPU-s)");
            continue;
        }
        let cpu0 = cpu_seconds();
        let one = || -> Vec<f64> {
            qs.chunks(group)
                .map(|q| {
                    let t = Instant::now();
                    let v = e.embed(q, EmbedKind::Query);
                    assert!(v.is_ok());
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect()
        };
        let mut ms: Vec<f64> = if concurrent > 1 {
            std::thread::scope(|s| {
                let hs: Vec<_> = (0..concurrent).map(|_| s.spawn(one)).collect();
                hs.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
            })
        } else {
            one()
        };
        let qcpu = (cpu_seconds() - cpu0) * 1e3 / ms.len().max(1) as f64;
        ms.sort_by(f64::total_cmp);
        let pct = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
        if only == "query" {
            println!("round {round}: query p50 {:.2} ms p90 {:.2} ms, {qcpu:.2} CPU-ms", pct(0.5), pct(0.9));
            continue;
        }
        let (ent, entc) = timed(|| e.embed(&entities, EmbedKind::Passage))?;
        let (pas, pasc) = timed(|| e.embed(&passages, EmbedKind::Passage))?;
        println!(
            "round {round}: query p50 {:.2} ms p90 {:.2} ms {qcpu:.2} CPU-ms | entities {:.0}/s ({:.2} s, {entc:.2} CPU-s) | \
             passages {:.1}/s ({:.2} s, {pasc:.2} CPU-s)",
            pct(0.5),
            pct(0.9),
            entities.len() as f64 / ent,
            ent,
            passages.len() as f64 / pas,
            pas
        );
    }
    Ok(())
}

/// Wall and CPU seconds of one embedding call.
fn timed<T>(f: impl FnOnce() -> rhizome_core::Result<T>) -> rhizome_core::Result<(f64, f64)> {
    let (t, c) = (Instant::now(), cpu_seconds());
    f()?;
    Ok((t.elapsed().as_secs_f64(), cpu_seconds() - c))
}

/// User + system CPU time of this process (Linux `/proc/self/stat`; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}
