//! Embedding throughput on a JSON corpus (a list of `{"title", "text"}` objects).
//!
//! `cargo run --release -p rhizome-embed --example throughput -- CORPUS.json [N] [BATCH...]`
//! embeds the first N texts (default 512) once per batch size (default: 1 and 32) after a
//! warm-up, and prints passages/s. The model must be installed (`rhizome models fetch`).

use std::time::Instant;

use rhizome_core::{EmbedKind, Embedder};
use rhizome_embed::models;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().ok_or("usage: throughput CORPUS.json [N] [BATCH...]")?;
    let n: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(512);
    let batches: Vec<usize> = if args.len() > 2 {
        args[2..].iter().map(|s| s.parse()).collect::<Result<_, _>>()?
    } else {
        vec![1, 32]
    };
    let corpus: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let texts: Vec<String> = corpus
        .iter()
        .filter_map(|d| d.get("text").and_then(|t| t.as_str()).map(str::to_string))
        .take(n)
        .collect();
    let dir = models::models_dir();
    let base = models::load_default(&dir)?;
    let tokens: usize = texts.iter().map(|t| base.tokenize(t).map(|v| v.len()).unwrap_or(0)).sum();
    println!(
        "{} texts, {:.1} tokens/text on average (max_tokens {}), {} rayon threads",
        texts.len(),
        tokens as f64 / texts.len() as f64,
        base.max_tokens(),
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "default".into())
    );
    base.embed(&texts[..texts.len().min(64)], EmbedKind::Passage)?; // warm-up
    for bs in batches {
        let e = models::load_default(&dir)?.with_batch_size(bs);
        let (t0, cpu0) = (Instant::now(), cpu_seconds());
        let v = e.embed(&texts, EmbedKind::Passage)?;
        let (secs, cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
        assert_eq!(v.len(), texts.len());
        println!(
            "batch {bs:>3}: {:>7.1} passages/s ({:.2} s for {}; {:.2} CPU-s, {:.0}% CPU, \
             {:.1} passages per CPU-s)",
            texts.len() as f64 / secs,
            secs,
            texts.len(),
            cpu,
            100.0 * cpu / secs,
            texts.len() as f64 / cpu
        );
    }
    Ok(())
}

/// User + system CPU time of this process (Linux `/proc/self/stat`; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}
