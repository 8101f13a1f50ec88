//! `rhizome index` and `rhizome import`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Context as _, Result};
use rhizome_core::{Extractor, Loader};
use rhizome_llm::{LlmExtractor, StageUsage};
use rhizome_ingest::chunk::TokenChunker;
use rhizome_ingest::extract::NlpExtractor;
use rhizome_ingest::import;
use rhizome_ingest::load::{default_loaders, load_path, CorpusLoader};
use rhizome_ingest::pipeline::{IndexReport, Pipeline, Prepared, Progress};
use serde_json::json;

use crate::app::{bind_embedder, print_json, App};
use crate::ImportKind;

pub(crate) static CANCEL: AtomicBool = AtomicBool::new(false);

/// Documents skipped at load time, reported with the run.
type Skips = Vec<(String, String)>;

enum Input {
    Documents(Vec<rhizome_core::Document>),
    Prepared(Vec<Prepared>),
}

fn llm_extractor(app: &App, llm: &crate::llm::Llm) -> LlmExtractor {
    let c = &app.config.llm;
    LlmExtractor {
        provider: llm.provider(),
        prompts: llm.prompts.clone(),
        schema: c.schema.clone(),
        gleanings: c.gleanings,
        temperature: c.temperature,
        max_tokens: c.max_tokens,
        runtime: llm.runtime.handle().clone(),
        parse_warnings: Default::default(),
    }
}

/// The configured extractor, and the LLM behind it when it has one.
fn make_extractor(app: &App) -> Result<(Box<dyn Extractor>, Option<crate::llm::Llm>)> {
    match app.config.extract.extractor.as_str() {
        "nlp" => Ok((Box::new(NlpExtractor::new(app.config.extract.max_entities_per_chunk)), None)),
        "llm" => {
            let Some(llm) = crate::llm::build(&app.config, &app.cli_index)? else {
                bail!(
                    "--extractor llm needs an LLM: set --llm-provider openai|local and --llm-model \
                     (or RHIZOME_LLM_PROVIDER / RHIZOME_LLM_MODEL)"
                );
            };
            Ok((Box::new(llm_extractor(app, &llm)), Some(llm)))
        }
        other => bail!("extract.extractor = {other:?}: use --extractor nlp or --extractor llm"),
    }
}

fn run_pipeline(app: &App, input: Input, skipped: Skips) -> Result<()> {
    run_pipeline_with(app, input, skipped, app.config.communities.enabled)
}

/// Run the pipeline; then, with `communities`, bring communities and reports up to date.
fn run_pipeline_with(app: &App, input: Input, skipped: Skips, communities: bool) -> Result<()> {
    let (extractor, llm) = make_extractor(app)?;
    let extractor_name = extractor.name().to_string();
    let mut store = app.open_writer(true)?;
    let embedder = app.embedder_for(&store)?;
    bind_embedder(&mut store, embedder.as_ref())?;
    let config = app.config.calibrated(embedder.cosine_scale());
    let chunker = TokenChunker { size: app.config.chunk.size, overlap: app.config.chunk.overlap };
    // Entity summaries need an LLM: the extractor's, or the configured one.
    let llm = match llm {
        Some(l) => Some(l),
        None if app.config.llm.summarize_min_descriptions > 0 => {
            crate::llm::build(&app.config, &app.cli_index)?
        }
        None => None,
    };
    let summarizer = llm.as_ref().map(|l| rhizome_llm::LlmSummarizer {
        provider: l.provider(),
        prompts: l.prompts.clone(),
        temperature: app.config.llm.temperature,
        max_tokens: app.config.llm.max_tokens,
        runtime: l.runtime.handle().clone(),
    });
    let progress = app.progress();
    for (path, reason) in &skipped {
        progress.warn(&format!("skipped {path}: {reason}"));
    }
    let pipeline = Pipeline {
        chunker: &chunker,
        extractor: extractor.as_ref(),
        embedder: embedder.as_ref(),
        config: &config,
        progress: &progress,
        cancel: &CANCEL,
        summarizer: summarizer.as_ref().map(|s| s as &dyn rhizome_core::Summarizer),
        summarize_min: app.config.llm.summarize_min_descriptions,
    };
    let t = std::time::Instant::now();
    let mut report = match input {
        Input::Documents(d) => pipeline.index_documents(&mut store, d)?,
        Input::Prepared(p) => pipeline.index_prepared(&mut store, p)?,
    };
    store.set_meta("extractor", &extractor_name)?;
    let communities = if communities {
        let t = std::time::Instant::now();
        // Reports use the configured LLM even when extraction did not.
        let report_llm = match &llm {
            Some(_) => None,
            None => crate::llm::build(&app.config, &app.cli_index)?,
        };
        let o = crate::cmd_communities::refresh(app, &mut store, embedder.as_ref(), llm.as_ref().or(report_llm.as_ref()), false)?;
        report.timings_ms.insert("communities".into(), t.elapsed().as_secs_f64() * 1e3);
        if let Some(l) = &report_llm {
            record_usage(&mut store, l)?;
        }
        Some(o)
    } else {
        None
    };
    report.timings_ms.insert("total".into(), t.elapsed().as_secs_f64() * 1e3);
    let usage = match &llm {
        Some(l) => Some(record_usage(&mut store, l)?),
        None => None,
    };
    print_report(app, &store, &report, &skipped, usage, communities)
}

/// Add this run's LLM usage to the totals kept in the index; returns this run's.
pub(crate) fn record_usage(store: &mut rhizome_store::SqliteStore, llm: &crate::llm::Llm)
    -> Result<std::collections::BTreeMap<String, StageUsage>> {
    let run = llm.stack.usage();
    let mut total: std::collections::BTreeMap<String, StageUsage> = store
        .meta("llm_usage")?
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    for (stage, u) in &run {
        let t = total.entry(stage.clone()).or_default();
        t.calls += u.calls;
        t.cached_calls += u.cached_calls;
        t.failed_calls += u.failed_calls;
        t.prompt_tokens += u.prompt_tokens;
        t.completion_tokens += u.completion_tokens;
    }
    store.set_meta("llm_usage", &serde_json::to_string(&total)?)?;
    Ok(run)
}

fn print_report(app: &App, store: &rhizome_store::SqliteStore, r: &IndexReport, skipped: &Skips,
    usage: Option<std::collections::BTreeMap<String, StageUsage>>,
    communities: Option<rhizome_community::CommunityOutcome>) -> Result<()> {
    use rhizome_core::StoreRead;
    let stats = store.stats()?;
    if app.json {
        let skipped: Vec<_> = skipped.iter().map(|(p, why)| json!({"path": p, "reason": why})).collect();
        let pending = store.extraction_failures()?;
        return print_json(&json!({"report": r, "skipped": skipped, "stats": stats, "llm_usage": usage,
            "failed_chunks_pending": pending, "communities": communities}));
    }

    println!(
        "indexed {} new document(s) ({} unchanged, {} replaced, {} skipped): {} chunks, {} mentions, {} relations, {} facts",
        r.documents_indexed, r.documents_unchanged, r.documents_replaced, skipped.len(),
        r.chunks, r.entities_mentioned, r.relations, r.facts
    );
    if r.entities_merged > 0 {
        println!("entities merged into existing ones by similarity: {}", r.entities_merged);
    }
    if r.failures_retried > 0 {
        println!(
            "chunks whose extraction had failed: {} retried, {} now extracted",
            r.failures_retried, r.failures_recovered
        );
    }
    let pending = store.extraction_failures()?.len();
    if pending > 0 {
        println!("chunks without a graph after failed extraction: {pending} (run `rhizome index` again to retry them)");
    }
    if let Some(n) = r.synonym_edges {
        println!("synonymy edges rebuilt: {n}");
    }
    if let Some(o) = &communities {
        println!("{}", crate::cmd_communities::summary(o));
    }
    let t: Vec<String> = r.timings_ms.iter().map(|(k, v)| format!("{k} {:.1}s", v / 1e3)).collect();
    println!("time: {}", t.join(", "));
    println!("index {}: {}", app.cli_index.display(), crate::cmd_misc::stats_line(&stats));
    for (stage, u) in usage.iter().flatten() {
        println!(
            "llm {stage}: {} calls ({} cached, {} failed), {} prompt + {} completion tokens",
            u.calls, u.cached_calls, u.failed_calls, u.prompt_tokens, u.completion_tokens
        );
    }
    Ok(())
}

pub fn index(app: App, paths: &[PathBuf], dry_run: bool) -> Result<()> {
    let loaders = default_loaders();
    let mut docs = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        let out = load_path(p, &loaders);
        docs.extend(out.documents);
        skipped.extend(out.skipped.into_iter().map(|s| (s.path, s.reason)));
    }
    if docs.is_empty() && !skipped.is_empty() && skipped.len() == paths.len() {
        for (p, why) in &skipped {
            eprintln!("warning: skipped {p}: {why}");
        }
        bail!("nothing to index: every input was skipped");
    }
    if dry_run {
        return dry_run_report(&app, docs, skipped);
    }
    run_pipeline(&app, Input::Documents(docs), skipped)
}

/// What `index` would do: new documents, chunks, and the LLM calls and tokens it would
/// spend (cached calls excluded). Writes nothing but the (empty) LLM cache table.
fn dry_run_report(app: &App, docs: Vec<rhizome_core::Document>, skipped: Skips) -> Result<()> {
    use rhizome_core::{Chunker, StoreRead};
    let existing = rhizome_store::SqliteStore::open(&app.cli_index, false).ok();
    let mut new_docs = Vec::new();
    for d in docs {
        let known = match &existing {
            Some(s) => s.has_document(&d.id)?,
            None => false,
        };
        if !known {
            new_docs.push(d);
        }
    }
    let chunker = TokenChunker { size: app.config.chunk.size, overlap: app.config.chunk.overlap };
    let chunks: Vec<rhizome_core::Chunk> = new_docs.iter().flat_map(|d| chunker.chunk(d)).collect();
    let refs: Vec<&rhizome_core::Chunk> = chunks.iter().collect();
    let plan = match app.config.extract.extractor.as_str() {
        "llm" => {
            let llm = crate::llm::build(&app.config, &app.cli_index)?
                .context("--extractor llm needs an LLM: set --llm-provider and --llm-model")?;
            let planner = llm_extractor(app, &llm);
            planner.plan(&refs, Some(llm.cache.as_ref()))?
        }
        _ => rhizome_llm::ExtractionPlan { chunks: chunks.len() as u64, ..Default::default() },
    };
    let out = json!({
        "dry_run": true,
        "documents_new": new_docs.len(),
        "chunks": chunks.len(),
        "extractor": app.config.extract.extractor,
        "llm": plan,
        "skipped": skipped.iter().map(|(p, w)| json!({"path": p, "reason": w})).collect::<Vec<_>>(),
    });
    if app.json {
        return print_json(&out);
    }
    println!(
        "dry run: {} new document(s), {} chunks; extractor {}: {} LLM calls ({} already cached), ~{} prompt + ~{} completion tokens",
        new_docs.len(), chunks.len(), app.config.extract.extractor, plan.calls, plan.cached_calls,
        plan.estimated_prompt_tokens, plan.estimated_completion_tokens
    );
    Ok(())
}

pub fn import(app: App, what: ImportKind) -> Result<()> {
    let (imported, skipped) = match what {
        ImportKind::HipporagOpenie { file } => (import::hipporag_openie(&file)?, vec![]),
        ImportKind::EdgesCsv { file } => (import::edges_csv(&file)?, vec![]),
        ImportKind::Corpus { file } => {
            if !file.is_file() {
                bail!("{}: no such file; give a .json or .jsonl corpus file", file.display());
            }
            let docs = CorpusLoader.load(&file)?;
            return run_pipeline(&app, Input::Documents(docs), vec![]);
        }
        ImportKind::GraphragParquet { dir } => return import_graphrag(&app, &dir),
    };
    let skipped: Skips = skipped;
    if !imported.dropped.is_empty() {
        let n = imported.dropped.len();
        for d in imported.dropped.iter().take(5) {
            eprintln!("warning: {d}");
        }
        if n > 5 {
            eprintln!("warning: ... and {} more malformed record(s) dropped", n - 5);
        }
    }
    run_pipeline(&app, Input::Prepared(imported.items), skipped)
}

/// `import graphrag-parquet`: the pipeline on GraphRAG's documents, without entity
/// summaries (GraphRAG's descriptions are summaries already) and without community
/// detection (GraphRAG's communities are imported); then its covariates, communities and
/// reports ([`rhizome_ingest::import_graphrag::finish`]).
#[cfg(feature = "graphrag-parquet")]
fn import_graphrag(app: &App, dir: &std::path::Path) -> Result<()> {
    use rhizome_core::StoreRead;
    use rhizome_ingest::import_graphrag as gr;
    let mut gi = gr::read(dir)?;
    for w in &gi.imported.dropped {
        eprintln!("warning: {w}");
    }
    let mut store = app.open_writer(true)?;
    let embedder = app.embedder_for(&store)?;
    bind_embedder(&mut store, embedder.as_ref())?;
    let config = app.config.calibrated(embedder.cosine_scale());
    let chunker = TokenChunker { size: config.chunk.size, overlap: config.chunk.overlap };
    let extractor = NlpExtractor::new(config.extract.max_entities_per_chunk);
    let progress = app.progress();
    let pipeline = Pipeline {
        chunker: &chunker,
        extractor: &extractor,
        embedder: embedder.as_ref(),
        config: &config,
        progress: &progress,
        cancel: &CANCEL,
        summarizer: None,
        summarize_min: 0,
    };
    let t = std::time::Instant::now();
    let mut report = pipeline.index_prepared(&mut store, std::mem::take(&mut gi.imported.items))?;
    let t_finish = std::time::Instant::now();
    let done = gr::finish(&mut store, embedder.as_ref(), &gi)?;
    report.timings_ms.insert("covariates_communities_reports".into(), t_finish.elapsed().as_secs_f64() * 1e3);
    report.timings_ms.insert("total".into(), t.elapsed().as_secs_f64() * 1e3);
    store.set_meta("extractor", "graphrag-parquet")?;
    for w in &done.warnings {
        eprintln!("warning: {w}");
    }
    let stats = store.stats()?;
    if app.json {
        return print_json(&json!({"report": report, "graphrag": {"read": gi.counts, "written": done},
            "warnings": gi.imported.dropped, "stats": stats}));
    }
    let (c, r) = (&gi.counts, &report);
    println!(
        "GraphRAG folder {}: {} document(s), {} text units, {} entities, {} relationships, {} communities, \
         {} reports, {} covariates",
        dir.display(), c.documents, c.text_units, c.entities, c.relationships, c.communities,
        c.community_reports, c.covariates
    );
    println!(
        "indexed {} new document(s) ({} unchanged, {} replaced): {} chunks, {} mentions, {} relations",
        r.documents_indexed, r.documents_unchanged, r.documents_replaced, r.chunks,
        r.entities_mentioned, r.relations
    );
    println!(
        "covariates: {} written, {} already present; communities: {}; reports: {} written, {} unchanged",
        done.covariates_written, done.covariates_present, done.communities, done.reports_written,
        done.reports_unchanged
    );
    let t: Vec<String> = r.timings_ms.iter().map(|(k, v)| format!("{k} {:.1}s", v / 1e3)).collect();
    println!("time: {}", t.join(", "));
    println!("index {}: {}", app.cli_index.display(), crate::cmd_misc::stats_line(&stats));
    Ok(())
}

/// Without the `graphrag-parquet` feature: say how to get it.
#[cfg(not(feature = "graphrag-parquet"))]
fn import_graphrag(_app: &App, dir: &std::path::Path) -> Result<()> {
    bail!(
        "{}: this rhizome was built without GraphRAG parquet support; rebuild it with \
         `cargo build --release -p rhizome-cli --features graphrag-parquet` (a default feature: \
         do not pass --no-default-features)",
        dir.display()
    )
}
