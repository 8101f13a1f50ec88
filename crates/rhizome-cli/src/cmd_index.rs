//! `rhizome index` and `rhizome import`: parse, call the engine, print.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use rhizome_engine::{IndexInput, IndexOutcome};
use rhizome_llm::StageUsage;
use serde_json::json;

use crate::app::{print_json, App, CANCEL};
use crate::ImportKind;

pub fn index(app: App, paths: &[PathBuf], dry_run: bool) -> Result<()> {
    let engine = app.engine()?;
    if dry_run {
        let plan = engine.dry_run(paths)?;
        if app.json {
            return print_json(&json!({"dry_run": true, "documents_new": plan.documents_new,
                "documents_replaced": plan.documents_replaced, "documents_unchanged": plan.documents_unchanged,
                "documents_duplicate": plan.documents_duplicate, "chunks": plan.chunks,
                "extractor": plan.extractor, "llm": plan.llm, "skipped": plan.skipped}));
        }
        println!(
            "dry run: {} new document(s) ({} unchanged, {} replaced, {} same content as an indexed one), {} chunks; extractor {}: {} LLM calls ({} already cached), ~{} prompt + ~{} completion tokens",
            plan.documents_new, plan.documents_unchanged, plan.documents_replaced, plan.documents_duplicate, plan.chunks, plan.extractor, plan.llm.calls, plan.llm.cached_calls,
            plan.llm.estimated_prompt_tokens, plan.llm.estimated_completion_tokens
        );
        return Ok(());
    }
    let out = engine.index(IndexInput::Paths(paths.to_vec()), &app.progress(), &CANCEL)?;
    print_outcome(&app, &out)
}

pub fn import(app: App, what: ImportKind) -> Result<()> {
    let input = match what {
        ImportKind::HipporagOpenie { file } => IndexInput::HipporagOpenie(file),
        ImportKind::EdgesCsv { file } => IndexInput::EdgesCsv(file),
        ImportKind::Corpus { file } => IndexInput::Corpus(file),
        ImportKind::GraphragParquet { dir } => return import_graphrag(&app, &dir),
    };
    let out = app.engine()?.index(input, &app.progress(), &CANCEL)?;
    print_outcome(&app, &out)
}

fn print_outcome(app: &App, o: &IndexOutcome) -> Result<()> {
    if !app.json {
        let n = o.warnings.len();
        for w in o.warnings.iter().take(5) {
            eprintln!("warning: {w}");
        }
        if n > 5 {
            eprintln!("warning: ... and {} more malformed record(s) dropped", n - 5);
        }
    }
    if app.json {
        return print_json(&json!({"report": o.report, "skipped": o.skipped, "stats": o.stats,
            "llm_usage": o.llm_usage, "failed_chunks_pending": o.failed_chunks_pending,
            "described": o.described, "communities": o.communities, "warnings": o.warnings}));
    }
    let r = &o.report;
    println!(
        "indexed {} new document(s) ({} unchanged, {} replaced, {} skipped): {} chunks, {} mentions, {} relations, {} facts",
        r.documents_new, r.documents_unchanged, r.documents_replaced, o.skipped.len(),
        r.chunks, r.entities_mentioned, r.relations, r.facts
    );
    if r.documents_duplicate > 0 {
        println!(
            "{} document(s) with the same content as an indexed one: not indexed again, kept as other names of it",
            r.documents_duplicate
        );
    }
    if r.claims > 0 || r.claim_replies_unreadable > 0 {
        println!(
            "claims about entities: {} written; {} claim replies could not be read (their chunks kept their entities)",
            r.claims, r.claim_replies_unreadable
        );
    }
    if r.entities_merged > 0 {
        println!("entities merged into existing ones by similarity: {}", r.entities_merged);
    }
    if r.failures_retried > 0 {
        println!(
            "chunks whose extraction had failed: {} retried, {} now extracted",
            r.failures_retried, r.failures_recovered
        );
    }
    let pending = o.failed_chunks_pending.len();
    if pending > 0 {
        println!("chunks without a graph after failed extraction: {pending} (run `rhizome index` again to retry them)");
    }
    if let Some(n) = r.synonym_edges {
        println!("synonymy edges rebuilt: {n}");
    }
    if let Some(d) = o.described.as_ref().filter(|d| d.described > 0) {
        println!("{}", crate::cmd_documents::summary(d));
    }
    if let Some(c) = &o.communities {
        println!("{}", crate::cmd_communities::summary(c));
    }
    print_timings(&r.timings_ms);
    println!("index {}: {}", app.store, crate::cmd_misc::stats_line(&o.stats));
    print_usage(o.llm_usage.as_ref());
    Ok(())
}

fn print_timings(t: &BTreeMap<String, f64>) {
    let t: Vec<String> = t.iter().map(|(k, v)| format!("{k} {:.1}s", v / 1e3)).collect();
    println!("time: {}", t.join(", "));
}

pub fn print_usage(usage: Option<&BTreeMap<String, StageUsage>>) {
    for (stage, u) in usage.into_iter().flatten() {
        println!(
            "llm {stage}: {} calls ({} cached, {} failed), {} prompt + {} completion tokens",
            u.calls, u.cached_calls, u.failed_calls, u.prompt_tokens, u.completion_tokens
        );
    }
}

/// `import graphrag-parquet`: GraphRAG's graph, communities, reports and claims.
#[cfg(feature = "graphrag-parquet")]
fn import_graphrag(app: &App, dir: &std::path::Path) -> Result<()> {
    let o = app.engine()?.import_graphrag(dir, &app.progress(), &CANCEL)?;
    for w in &o.warnings {
        eprintln!("warning: {w}");
    }
    if app.json {
        return print_json(&json!({"report": o.report, "graphrag": {"read": o.read, "written": o.written},
            "warnings": o.warnings, "stats": o.stats}));
    }
    let (c, r, done) = (&o.read, &o.report, &o.written);
    println!(
        "GraphRAG folder {}: {} document(s), {} text units, {} entities, {} relationships, {} communities, \
         {} reports, {} covariates",
        dir.display(),
        c.documents,
        c.text_units,
        c.entities,
        c.relationships,
        c.communities,
        c.community_reports,
        c.covariates
    );
    println!(
        "indexed {} new document(s) ({} unchanged, {} replaced): {} chunks, {} mentions, {} relations",
        r.documents_new, r.documents_unchanged, r.documents_replaced, r.chunks, r.entities_mentioned, r.relations
    );
    println!(
        "covariates: {} written, {} already present; communities: {}; reports: {} written, {} unchanged",
        done.covariates_written,
        done.covariates_present,
        done.communities,
        done.reports_written,
        done.reports_unchanged
    );
    print_timings(&r.timings_ms);
    println!("index {}: {}", app.store, crate::cmd_misc::stats_line(&o.stats));
    Ok(())
}

/// Without the `graphrag-parquet` feature: say how to get it.
#[cfg(not(feature = "graphrag-parquet"))]
fn import_graphrag(_app: &App, dir: &std::path::Path) -> Result<()> {
    anyhow::bail!(
        "{}: this rhizome was built without GraphRAG parquet support; rebuild it with \
         `cargo build --release -p rhizome-cli --features graphrag-parquet` (a default feature: \
         do not pass --no-default-features)",
        dir.display()
    )
}
