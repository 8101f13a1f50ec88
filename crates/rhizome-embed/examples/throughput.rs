//! Embedding throughput on a JSON corpus (a list of `{"title", "text"}` objects).
//!
//! `cargo run --release -p rhizome-embed --example throughput -- [--model NAME]... CORPUS.json
//! [N] [BATCH...]` embeds the first N texts (default 512) as passages with each model (default:
//! every known model that is installed; `--model` repeatable) once per batch size (default: 1
//! and 32) after a warm-up, and prints passages/s. `multilingual-e5-small:f32` and
//! `multilingual-e5-small:int8` pick the e5 matmuls (see `E5Matmul`; plain name = auto).
//! Models must be installed (`rhizome models fetch`).

use std::path::Path;
use std::time::Instant;

use rhizome_core::{EmbedKind, Embedder};
use rhizome_embed::{models, E5Embedder, E5Matmul, MiniLmEmbedder, E5_MODEL_ID};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut names = Vec::new();
    while let Some(i) = args.iter().position(|a| a == "--model") {
        args.remove(i);
        if i >= args.len() {
            return Err("--model needs a model name".into());
        }
        names.push(args.remove(i));
    }
    let dir = models::models_dir();
    if names.is_empty() {
        names =
            models::EMBEDDERS.iter().filter(|s| models::is_installed(s, &dir)).map(|s| s.name.to_string()).collect();
    }
    let path = args.first().ok_or("usage: throughput [--model NAME]... CORPUS.json [N] [BATCH...]")?;
    let n: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(512);
    let batches: Vec<usize> =
        if args.len() > 2 { args[2..].iter().map(|s| s.parse()).collect::<Result<_, _>>()? } else { vec![1, 32] };
    let corpus: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let texts: Vec<String> =
        corpus.iter().filter_map(|d| d.get("text").and_then(|t| t.as_str()).map(str::to_string)).take(n).collect();
    println!(
        "{} texts, {} rayon threads",
        texts.len(),
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "default".into())
    );
    for name in &names {
        let (tokens, max_tokens) = token_stats(name, &dir, &texts)?;
        println!("{name}: {tokens:.1} tokens/text on average (max_tokens {max_tokens})");
        load(name, &dir, 32)?.embed(&texts[..texts.len().min(64)], EmbedKind::Passage)?; // warm-up
        for &bs in &batches {
            let e = load(name, &dir, bs)?;
            let (t0, cpu0) = (Instant::now(), cpu_seconds());
            let v = e.embed(&texts, EmbedKind::Passage)?;
            let (secs, cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
            assert_eq!(v.len(), texts.len());
            println!(
                "  batch {bs:>3}: {:>7.1} passages/s ({:.2} s for {}; {:.2} CPU-s, {:.0}% CPU, \
                 {:.1} passages per CPU-s)",
                texts.len() as f64 / secs,
                secs,
                texts.len(),
                cpu,
                100.0 * cpu / secs,
                texts.len() as f64 / cpu
            );
        }
    }
    Ok(())
}

/// `multilingual-e5-small[:f32|:int8]` as the e5 matmul choice, if it names e5.
fn e5_matmul(name: &str) -> Option<E5Matmul> {
    match name.strip_prefix(E5_MODEL_ID)? {
        "" => Some(E5Matmul::Auto),
        ":f32" => Some(E5Matmul::F32),
        ":int8" => Some(E5Matmul::Int8),
        _ => None,
    }
}

/// The embedder `name` from the models dir, with batch size `bs`.
fn load(name: &str, dir: &Path, bs: usize) -> Result<Box<dyn Embedder>, Box<dyn std::error::Error>> {
    Ok(if let Some(mm) = e5_matmul(name) {
        let e = E5Embedder::load_with(&models::require(&models::E5_SMALL, dir)?, mm)?;
        println!("  ({name}: {:?} matmuls)", e.matmul());
        Box::new(e.with_batch_size(bs))
    } else if name == models::MINILM.name {
        Box::new(rhizome_embed::load_default(dir)?.with_batch_size(bs))
    } else {
        return Err(format!("unknown model {name}").into());
    })
}

/// Average tokens per passage (specials included, after truncation) and the token limit.
fn token_stats(name: &str, dir: &Path, texts: &[String]) -> Result<(f64, usize), Box<dyn std::error::Error>> {
    let (total, max): (usize, usize) = if e5_matmul(name).is_some() {
        let e = E5Embedder::load_with(&models::require(&models::E5_SMALL, dir)?, E5Matmul::F32)?;
        (texts.iter().map(|t| e.tokenize(t, EmbedKind::Passage).len()).sum(), e.max_tokens())
    } else {
        let e: MiniLmEmbedder = rhizome_embed::load_default(dir)?;
        (texts.iter().map(|t| e.tokenize(t).map(|v| v.len()).unwrap_or(0)).sum(), e.max_tokens())
    };
    Ok((total as f64 / texts.len().max(1) as f64, max))
}

/// User + system CPU time of this process (Linux `/proc/self/stat`; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}
