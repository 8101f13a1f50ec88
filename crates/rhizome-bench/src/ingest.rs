//! `rhizome bench ingest`: passages/s for extraction, embedding and the whole pipeline,
//! and peak memory. Embedding throughput is also given against a baseline measured in
//! the same run (one passage per forward pass), because shared machines are noisy.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rhizome_core::{Chunker, EmbedKind, Extractor, Loader};
use rhizome_ingest::chunk::TokenChunker;
use rhizome_ingest::extract::NlpExtractor;
use rhizome_ingest::load::CorpusLoader;
use rhizome_ingest::pipeline::{embed_text, NoProgress, Pipeline};
use serde_json::json;

use rhizome_core::StoreWrite;
use rhizome_engine::load_embedder;

use crate::common::{peak_rss_mib, print_json, Bench, Result};

pub fn ingest(bench: Bench, corpus: &std::path::Path, baseline_sample: usize) -> Result<()> {
    let docs = CorpusLoader.load(corpus)?;
    let n = docs.len() as f64;
    let chunker = TokenChunker { size: bench.config.chunk.size, overlap: bench.config.chunk.overlap };
    let extractor = NlpExtractor::new(bench.config.extract.max_entities_per_chunk);
    let embedder = load_embedder(&bench.config, None)?;

    // Extraction alone (chunk + extract, one thread per core as in the pipeline).
    let t = Instant::now();
    let chunks: Vec<_> = docs.iter().flat_map(|d| chunker.chunk(d)).collect();
    let mut entities = 0usize;
    for c in &chunks {
        entities += extractor.extract(c)?.entities.len();
    }
    let extract_s = t.elapsed().as_secs_f64();

    // Embedding alone: batched (configured) vs baseline (one passage per call), same run.
    let titles: std::collections::HashMap<_, _> = docs.iter().map(|d| (d.id.clone(), d.title.clone())).collect();
    let texts: Vec<String> = chunks.iter().map(|c| embed_text(&titles[&c.doc_id], &c.text)).collect();
    let sample: Vec<String> = texts.iter().take(baseline_sample.max(1)).cloned().collect();
    let t = Instant::now();
    for s in &sample {
        embedder.embed(std::slice::from_ref(s), EmbedKind::Passage)?;
    }
    let baseline_ps = sample.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    embedder.embed(&sample, EmbedKind::Passage)?;
    let batched_sample_ps = sample.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    embedder.embed(&texts, EmbedKind::Passage)?;
    let embed_s = t.elapsed().as_secs_f64();

    // The whole pipeline into a fresh temporary index.
    let config = bench.config.calibrated(embedder.cosine_scale());
    let sample_docs: Vec<_> = docs.iter().take(baseline_sample.max(1)).cloned().collect();
    let (report, total_s) = pipeline_run(&config, &chunker, &extractor, embedder.as_ref(), docs)?;
    // The previous approach on a sample, same run: every fact embedded (before
    // `embed.fact_vectors=auto` left the LLM-free extractor's facts without vectors).
    let mut previous = config.clone();
    previous.embed.fact_vectors = "always".into();
    let m = sample_docs.len() as f64;
    let (_, prev_s) = pipeline_run(&previous, &chunker, &extractor, embedder.as_ref(), sample_docs.clone())?;
    let (_, now_s) = pipeline_run(&config, &chunker, &extractor, embedder.as_ref(), sample_docs)?;

    let out = json!({
        "corpus": corpus.display().to_string(),
        "passages": n,
        "chunks": chunks.len(),
        "entities_extracted": entities,
        "extraction_passages_per_s": n / extract_s,
        "embedding": {
            "model": embedder.model_id(),
            "passages_per_s": n / embed_s,
            "baseline_one_at_a_time_passages_per_s": baseline_ps,
            "batched_same_sample_passages_per_s": batched_sample_ps,
            "speedup_vs_baseline": batched_sample_ps / baseline_ps,
            "baseline_sample": sample.len(),
        },
        "total_passages_per_s": n / total_s,
        "total_s": total_s,
        "sample_pipeline": {
            "passages": m,
            "passages_per_s": m / now_s,
            "previous_all_facts_embedded_passages_per_s": m / prev_s,
            "speedup_vs_previous": prev_s / now_s,
        },
        "pipeline_timings_ms": report.timings_ms,
        "vectors_written": report.vectors,
        "peak_rss_mib": peak_rss_mib(),
        "threads": std::thread::available_parallelism().map(|x| x.get()).unwrap_or(1),
    });
    if bench.json {
        return print_json(&out);
    }
    println!("corpus: {} ({} passages, {} chunks)", corpus.display(), n, chunks.len());
    println!("extraction: {:.0} passages/s ({} entities)", n / extract_s, entities);
    println!(
        "embedding ({}): {:.1} passages/s; same-run baseline (one at a time) {:.1}/s; batched on the same sample {:.1}/s = {:.2}x baseline",
        embedder.model_id(), n / embed_s, baseline_ps, batched_sample_ps, batched_sample_ps / baseline_ps
    );
    println!("total pipeline: {:.1} passages/s ({:.1} s)", n / total_s, total_s);
    println!(
        "pipeline on the first {m} passages: {:.1} passages/s; previous approach (every fact embedded) {:.1}/s = {:.2}x",
        m / now_s, m / prev_s, prev_s / now_s
    );
    if let Some(m) = peak_rss_mib() {
        println!("peak memory: {m:.0} MiB");
    }
    Ok(())
}

/// Index `docs` into a fresh temporary index with `config`; the report and seconds taken.
fn pipeline_run(
    config: &rhizome_core::Config,
    chunker: &TokenChunker,
    extractor: &NlpExtractor,
    embedder: &dyn rhizome_core::Embedder,
    docs: Vec<rhizome_core::Document>,
) -> Result<(rhizome_ingest::pipeline::IndexReport, f64)> {
    let dir = std::env::temp_dir().join(format!("rhizome-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut store = rhizome_store::SqliteStore::open(&dir, true)?;
    store.set_embedding_model(embedder.model_id(), embedder.dim())?;
    let cancel = AtomicBool::new(false);
    let pipeline = Pipeline {
        chunker,
        extractor,
        embedder,
        config,
        progress: &NoProgress,
        cancel: &cancel,
        summarizer: None,
        summarize_min: 0,
    };
    let t = Instant::now();
    let report = pipeline.index_documents(&mut store, docs);
    let secs = t.elapsed().as_secs_f64();
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    Ok((report?, secs))
}
