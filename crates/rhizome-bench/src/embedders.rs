//! `rhizome bench embedders`: every embedding model on the same passages in one run —
//! passages/s (batched, and against the same model one passage at a time) and dense-only
//! Recall@2/@5 of the question set over the corpus (cosine ranking in memory: no index,
//! no BM25, no graph, so the figure is the model's alone). Ratios are against
//! all-MiniLM-L6-v2 measured in the same run.

use std::path::Path;
use std::time::Instant;

use rhizome_core::{dot, EmbedKind, Loader};
use rhizome_eval::{load_questions, recall_at_k};
use rhizome_ingest::load::CorpusLoader;
use rhizome_ingest::pipeline::embed_text;
use serde_json::json;

use rhizome_engine::load_embedder;

use crate::common::{print_json, Bench, Result};

pub fn embedders(bench: Bench, corpus: &Path, questions: &Path, baseline_sample: usize) -> Result<()> {
    let docs = CorpusLoader.load(corpus)?;
    let qs = load_questions(questions)?;
    let passages: Vec<String> = docs.iter().map(|d| embed_text(&d.title, &d.text)).collect();
    let keys: Vec<(String, String)> = docs.iter().map(|d| (d.title.clone(), d.text.clone())).collect();
    let questions_text: Vec<String> = qs.iter().map(|q| q.question.clone()).collect();
    let mut rows = Vec::new();
    for model in [rhizome_embed::MINILM_MODEL_ID, rhizome_embed::E5_MODEL_ID] {
        let mut config = bench.config.clone();
        config.embed.model = model.to_string();
        let e = load_embedder(&config, None)?;
        let sample = &passages[..baseline_sample.clamp(1, passages.len().max(1)).min(passages.len())];
        let t = Instant::now();
        for p in sample {
            e.embed(std::slice::from_ref(p), EmbedKind::Passage)?;
        }
        let one_at_a_time = sample.len() as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        let pv = e.embed(&passages, EmbedKind::Passage)?;
        let batched = passages.len() as f64 / t.elapsed().as_secs_f64();
        let qv = e.embed(&questions_text, EmbedKind::Query)?;
        let (mut r2, mut r5) = (0.0, 0.0);
        for (q, v) in qs.iter().zip(&qv) {
            let mut order: Vec<(f32, usize)> = pv.iter().enumerate().map(|(i, p)| (dot(v, p), i)).collect();
            order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            // Distinct passages in rank order (a corpus may repeat one).
            let mut ranked: Vec<(String, String)> = Vec::new();
            for &(_, i) in &order {
                if ranked.len() >= 5 {
                    break;
                }
                if !ranked.contains(&keys[i]) {
                    ranked.push(keys[i].clone());
                }
            }
            r2 += recall_at_k(&q.supporting, &ranked, 2);
            r5 += recall_at_k(&q.supporting, &ranked, 5);
        }
        let n = qs.len().max(1) as f64;
        rows.push(json!({
            "model": model,
            "passages_per_s": batched,
            "one_at_a_time_passages_per_s": one_at_a_time,
            "dense_recall": {"2": r2 / n, "5": r5 / n},
        }));
    }
    let base = rows[0]["passages_per_s"].as_f64().unwrap_or(1.0).max(1e-9);
    for r in &mut rows {
        let x = r["passages_per_s"].as_f64().unwrap_or(0.0) / base;
        r["speed_vs_minilm"] = json!(x);
    }
    let out = json!({"passages": passages.len(), "questions": qs.len(), "models": rows});
    if bench.json {
        return print_json(&out);
    }
    println!("{} passages, {} questions (dense retrieval only)", passages.len(), qs.len());
    for r in &rows {
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        println!(
            "{:<24} {:>7.1} passages/s ({:.2}x MiniLM; one at a time {:.1}/s)  R@2 {:.3}  R@5 {:.3}",
            r["model"].as_str().unwrap_or(""),
            f("passages_per_s"),
            f("speed_vs_minilm"),
            f("one_at_a_time_passages_per_s"),
            r["dense_recall"]["2"].as_f64().unwrap_or(0.0),
            r["dense_recall"]["5"].as_f64().unwrap_or(0.0)
        );
    }
    Ok(())
}
