//! Tokens and embedding time per kind of string of a HippoRAG OpenIE file (passages, entity
//! names, fact strings), as the import embeds them (e5, default settings).
//! `cargo run --release -p rhizome-embed --example openie_mix -- OPENIE.json [KIND] [--compare]`
//! KIND: passages, entities or facts (default: all three). `--compare` also times the
//! previous attention path (two gemm calls per head, see `attention::set_fused`) right after
//! each, and prints the ratio; `--compare-bf16` likewise the f32 fused kernel for long
//! sequences against the bf16 one (`attention::set_bf16`). CPU-seconds of the process
//! beside the wall time.
use std::collections::HashSet;
use std::time::Instant;

use rhizome_core::ids::normalize_name as norm;
use rhizome_core::{EmbedKind, Embedder};
use rhizome_embed::{models, E5Embedder};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: openie_mix OPENIE.json")?;
    let raw = std::fs::read_to_string(path)?.replace(": NaN", ": null");
    let v: serde_json::Value = serde_json::from_str(&raw)?;
    let docs = v["docs"].as_array().ok_or("no docs")?;
    let (mut passages, mut ents, mut facts) = (Vec::new(), HashSet::new(), HashSet::new());
    for d in docs {
        passages.push(d["passage"].as_str().unwrap_or("").to_string());
        for e in d["extracted_entities"].as_array().into_iter().flatten() {
            ents.insert(norm(e.as_str().unwrap_or("")));
        }
        for t in d["extracted_triples"].as_array().into_iter().flatten() {
            if let Some(t) = t.as_array().filter(|t| t.len() == 3) {
                let s: Vec<String> = t.iter().map(|x| norm(x.as_str().unwrap_or(""))).collect();
                ents.insert(s[0].clone());
                ents.insert(s[2].clone());
                facts.insert(s.join(" "));
            }
        }
    }
    let e = E5Embedder::load(&models::models_dir().join("multilingual-e5-small"))?;
    let sets: Vec<(&str, Vec<String>)> =
        vec![("passages", passages), ("entities", ents.into_iter().collect()), ("facts", facts.into_iter().collect())];
    let compare = std::env::args().any(|a| a == "--compare");
    let compare_bf16 = std::env::args().any(|a| a == "--compare-bf16");
    let only = std::env::args().skip(2).find(|a| !a.starts_with("--"));
    for (name, texts) in &sets {
        if only.as_deref().is_some_and(|o| o != *name) {
            continue;
        }
        let toks: Vec<usize> = texts.iter().map(|t| e.tokenize(t, EmbedKind::Passage).len()).collect();
        let sum: usize = toks.iter().sum();
        let sq: usize = toks.iter().map(|l| l * l).sum();
        let vectors = std::cell::RefCell::new(Vec::new());
        let run = |fused: bool, bf16: bool| -> Result<(f64, f64), Box<dyn std::error::Error>> {
            rhizome_embed::attention::set_fused(fused);
            rhizome_embed::attention::set_bf16(bf16);
            let (t0, c0) = (Instant::now(), cpu_seconds());
            let mut out = Vec::with_capacity(texts.len());
            for part in texts.chunks(4096) {
                out.extend(e.embed(part, EmbedKind::Passage)?);
            }
            let took = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
            vectors.borrow_mut().push(out);
            Ok(took)
        };
        // Cosines between the vectors of the first run and of the last: (mean, lowest).
        let agreement = || {
            let v = vectors.borrow();
            let cos: Vec<f32> = v[0].iter().zip(v.last().unwrap()).map(|(a, b)| rhizome_core::dot(a, b)).collect();
            (cos.iter().sum::<f32>() / cos.len().max(1) as f32, cos.iter().copied().fold(1.0f32, f32::min))
        };
        let (wall, cpu) = run(true, true)?;
        let n = texts.len();
        println!(
            "{name}: {n} strings, {sum} tokens ({:.1}/string), sum len^2 {sq}, embed {wall:.2} s ({cpu:.1} CPU-s)",
            sum as f64 / n as f64
        );
        if compare {
            let (w0, c0) = run(false, false)?;
            println!(
                "  previous attention: {w0:.2} s ({c0:.1} CPU-s): fused is {:.3}x wall, {:.3}x CPU",
                w0 / wall,
                c0 / cpu
            );
        }
        if compare_bf16 {
            let (w0, c0) = run(true, false)?;
            let (mean, low) = agreement();
            println!("  f32 fused attention: {w0:.2} s ({c0:.1} CPU-s): with bf16 {:.3}x wall, {:.3}x CPU; cosine of the two vectors: mean {mean:.6}, lowest {low:.6}",
                w0 / wall, c0 / cpu);
        }
    }
    Ok(())
}

/// CPU time of this process (user + system), seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}
