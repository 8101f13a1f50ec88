//! `rhizome index` and `rhizome import`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Result};
use rhizome_core::Loader;
use rhizome_ingest::chunk::TokenChunker;
use rhizome_ingest::extract::NlpExtractor;
use rhizome_ingest::import;
use rhizome_ingest::load::{default_loaders, load_path, CorpusLoader};
use rhizome_ingest::pipeline::{IndexReport, Pipeline, Prepared, Progress};
use serde_json::json;

use crate::app::{bind_embedder, print_json, App};
use crate::ImportKind;

static CANCEL: AtomicBool = AtomicBool::new(false);

/// Documents skipped at load time, reported with the run.
type Skips = Vec<(String, String)>;

enum Input {
    Documents(Vec<rhizome_core::Document>),
    Prepared(Vec<Prepared>),
}

fn run_pipeline(app: &App, input: Input, skipped: Skips) -> Result<()> {
    let extractor_name = app.config.extract.extractor.as_str();
    if extractor_name != "nlp" {
        bail!("extract.extractor = {extractor_name:?} is not available; use --extractor nlp");
    }
    let mut store = app.open_store(true)?;
    let embedder = app.embedder_for(&store)?;
    bind_embedder(&mut store, &embedder)?;
    let chunker = TokenChunker { size: app.config.chunk.size, overlap: app.config.chunk.overlap };
    let extractor = NlpExtractor::new(app.config.extract.max_entities_per_chunk);
    let progress = app.progress();
    for (path, reason) in &skipped {
        progress.warn(&format!("skipped {path}: {reason}"));
    }
    let pipeline = Pipeline {
        chunker: &chunker,
        extractor: &extractor,
        embedder: &embedder,
        config: &app.config,
        progress: &progress,
        cancel: &CANCEL,
    };
    let t = std::time::Instant::now();
    let mut report = match input {
        Input::Documents(d) => pipeline.index_documents(&mut store, d)?,
        Input::Prepared(p) => pipeline.index_prepared(&mut store, p)?,
    };
    report.timings_ms.insert("total".into(), t.elapsed().as_secs_f64() * 1e3);
    store.set_meta("extractor", extractor_name)?;
    print_report(app, &store, &report, &skipped)
}

fn print_report(app: &App, store: &rhizome_store::SqliteStore, r: &IndexReport, skipped: &Skips)
    -> Result<()> {
    use rhizome_core::StoreRead;
    let stats = store.stats()?;
    if app.json {
        let skipped: Vec<_> = skipped.iter().map(|(p, why)| json!({"path": p, "reason": why})).collect();
        return print_json(&json!({"report": r, "skipped": skipped, "stats": stats}));
    }
    println!(
        "indexed {} new document(s) ({} unchanged, {} replaced, {} skipped): {} chunks, {} mentions, {} relations, {} facts",
        r.documents_indexed, r.documents_unchanged, r.documents_replaced, skipped.len(),
        r.chunks, r.entities_mentioned, r.relations, r.facts
    );
    if let Some(n) = r.synonym_edges {
        println!("synonymy edges rebuilt: {n}");
    }
    let t: Vec<String> = r.timings_ms.iter().map(|(k, v)| format!("{k} {:.1}s", v / 1e3)).collect();
    println!("time: {}", t.join(", "));
    println!("index {}: {}", app.cli_index.display(), crate::cmd_misc::stats_line(&stats));
    Ok(())
}

pub fn index(mut app: App, paths: &[PathBuf], extractor: Option<String>) -> Result<()> {
    if let Some(x) = extractor {
        app.config.extract.extractor = x;
    }
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
    run_pipeline(&app, Input::Documents(docs), skipped)
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
