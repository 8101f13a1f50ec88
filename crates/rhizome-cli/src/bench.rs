//! `rhizome bench ingest`: passages/s for extraction, embedding and the whole pipeline,
//! and peak memory. Embedding throughput is also given against a baseline measured in
//! the same run (one passage per forward pass), because shared machines are noisy.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Result;
use rhizome_core::{Chunker, EmbedKind, Extractor, Loader};
use rhizome_ingest::chunk::TokenChunker;
use rhizome_ingest::extract::NlpExtractor;
use rhizome_ingest::load::CorpusLoader;
use rhizome_ingest::pipeline::{embed_text, NoProgress, Pipeline};
use serde_json::json;

use rhizome_core::StoreWrite;
use rhizome_engine::load_embedder;

use crate::app::{print_json, App};
use crate::BenchCmd;

/// Peak resident memory of this process in MiB (VmHWM), where /proc has it.
pub fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub fn run(app: App, what: BenchCmd) -> Result<()> {
    match what {
        BenchCmd::Ingest { corpus, baseline_sample } => ingest(app, &corpus, baseline_sample),
        BenchCmd::Llm { prompt_tokens, gen_tokens } => llm(app, prompt_tokens, gen_tokens),
        BenchCmd::Embedders { corpus, questions, baseline_sample } => {
            crate::bench_embed::embedders(app, &corpus, &questions, baseline_sample)
        }
        BenchCmd::Communities { repeat, max_cluster_size } => {
            crate::bench_communities::communities(app, repeat, max_cluster_size)
        }
        BenchCmd::LargeFile { corpus, sizes, baseline_max_mb } => {
            crate::bench_large_file::large_file(app, &corpus, &sizes, baseline_max_mb)
        }
        BenchCmd::Serve { questions, methods, clients, limit, rounds } => {
            crate::bench_serve::serve(app, &questions, &methods, &clients, limit, rounds)
        }
        BenchCmd::Load { corpus, questions, clients, seconds, sample_secs, seed } => crate::bench_load::load(
            app,
            crate::bench_load::LoadArgs { corpus: &corpus, questions: &questions, clients, seconds, sample_secs, seed },
        ),
        BenchCmd::Backends { openie, questions, postgres, falkordb, methods, limit } => crate::bench_backends::backends(
            app, &openie, &questions, postgres.as_deref(), falkordb.as_deref(), &methods, limit),
        BenchCmd::Retrieval { questions, methods, limit } => {
            crate::bench_retrieval::retrieval(app, &questions, &methods, limit)
        }
    }
}

fn ingest(app: App, corpus: &std::path::Path, baseline_sample: usize) -> Result<()> {
    let docs = CorpusLoader.load(corpus)?;
    let n = docs.len() as f64;
    let chunker = TokenChunker { size: app.config.chunk.size, overlap: app.config.chunk.overlap };
    let extractor = NlpExtractor::new(app.config.extract.max_entities_per_chunk);
    let embedder = load_embedder(&app.config, None)?;

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
    let config = app.config.calibrated(embedder.cosine_scale());
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
    if app.json {
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
fn pipeline_run(config: &rhizome_core::Config, chunker: &TokenChunker, extractor: &NlpExtractor,
    embedder: &dyn rhizome_core::Embedder, docs: Vec<rhizome_core::Document>)
    -> Result<(rhizome_ingest::pipeline::IndexReport, f64)> {
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

/// Local model throughput: prompt processing and generation tokens/s.
fn llm(app: App, prompt_tokens: usize, gen_tokens: usize) -> Result<()> {
    let t = Instant::now();
    let chat = rhizome_engine::llm::load_local(&app.config)?;
    let load_s = t.elapsed().as_secs_f64();
    let r = rhizome_llm_local::bench(&chat, prompt_tokens, gen_tokens)?;
    if app.json {
        return print_json(&json!({"load_s": load_s, "bench": r, "peak_rss_mib": peak_rss_mib()}));
    }
    println!("{} ({} threads, loaded in {:.1} s)", r.model, r.threads, load_s);
    println!("prompt: {} tokens at {:.1} tokens/s", r.prompt_tokens, r.prompt_tok_per_s);
    println!("generation: {} tokens at {:.1} tokens/s", r.gen_tokens, r.gen_tok_per_s);
    Ok(())
}
