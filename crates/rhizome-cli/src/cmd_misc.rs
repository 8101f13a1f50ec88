//! `rhizome stats`, `delete`, `models`.

use std::sync::atomic::AtomicBool;

use anyhow::{bail, Result};
use rhizome_core::{Stats, StoreRead, StoreWrite};
use serde_json::json;

use crate::app::{print_json, App};
use crate::ModelsCmd;

pub fn stats_line(s: &Stats) -> String {
    let nodes: Vec<String> = s.nodes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let edges: Vec<String> = s.edges.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!("nodes: {}; edges: {}", nodes.join(", "), edges.join(", "))
}

pub fn stats(app: App) -> Result<()> {
    let store = app.open_reader()?;
    let s = store.stats()?;
    if app.json {
        return print_json(&s);
    }
    println!("index {}", app.cli_index.display());
    println!("nodes:");
    for (k, v) in &s.nodes {
        println!("  {k:<14}{v:>10}");
    }
    println!("edges:");
    for (k, v) in &s.edges {
        println!("  {k:<14}{v:>10}");
    }
    Ok(())
}

pub fn delete(app: App, doc: &str) -> Result<()> {
    let mut store = app.open_writer(false)?;
    let mut targets = store.documents_from_source(doc)?;
    if targets.is_empty() {
        if let Some(d) = store.find_document(doc)? {
            targets.push(d);
        }
    }
    if targets.is_empty() {
        bail!("no document with id or source {doc:?} in {}; `rhizome stats` shows what is indexed", app.cli_index.display());
    }
    let mut total = rhizome_core::DeleteReport::default();
    for d in &targets {
        let r = store.delete_document(&d.id)?;
        total.documents += r.documents;
        total.chunks += r.chunks;
        total.entities += r.entities;
        total.facts += r.facts;
        total.relations += r.relations;
    }
    let syn = if store.synonyms_dirty()? {
        // The index's own model decides the threshold's calibration.
        let scale = store.embedding_model()?.map_or(1.0, |m| rhizome_embed::cosine_scale(&m));
        let c = app.config.calibrated(scale).synonymy;
        Some(store.rebuild_synonyms(c.top_k, c.threshold, &AtomicBool::new(false))?)
    } else {
        None
    };
    // Communities follow the graph, as after indexing: "index A and B, delete B" leaves
    // the communities of "index A". A deletion never spends LLM calls: communities it
    // changed get extractive reports, which the next `index` or `communities` run with an
    // LLM replaces (from the LLM cache when the community is one it reported on before).
    let communities = if app.config.communities.enabled && store.communities_version()?.is_some() {
        let embedder = app.embedder_for(&store)?;
        Some(crate::cmd_communities::refresh(&app, &mut store, embedder.as_ref(), None, false)?)
    } else {
        None
    };
    if app.json {
        return print_json(&json!({"deleted": total, "synonym_edges": syn, "communities": communities}));
    }
    println!(
        "deleted {} document(s), {} chunks, {} entities, {} relations, {} facts",
        total.documents, total.chunks, total.entities, total.relations, total.facts
    );
    if let Some(o) = &communities {
        println!("{}", crate::cmd_communities::summary(o));
    }
    Ok(())
}

pub fn models(app: App, what: ModelsCmd) -> Result<()> {
    let dir = rhizome_embed::models_dir();
    match what {
        ModelsCmd::Fetch { llm } => {
            let mut specs: Vec<&rhizome_embed::ModelSpec> = rhizome_embed::models::ALL.to_vec();
            for name in &llm {
                specs.push(rhizome_embed::models::find_llm(name).ok_or_else(|| {
                    let known: Vec<_> = rhizome_embed::models::LLMS.iter().map(|s| s.name).collect();
                    anyhow::anyhow!("unknown local model {name:?}; known: {}", known.join(", "))
                })?);
            }
            for spec in specs {
                if !app.json {
                    eprintln!("fetching {} into {} ...", spec.name, dir.display());
                }
                let p = rhizome_embed::fetch(spec, &dir)?;
                if !app.json {
                    println!("{}: {}", spec.name, p.display());
                }
            }
            if app.json {
                return models(app, ModelsCmd::List);
            }
            Ok(())
        }
        ModelsCmd::List => {
            let rows: Vec<_> = rhizome_embed::models::ALL
                .iter()
                .chain(rhizome_embed::models::LLMS.iter())
                .map(|s| json!({"name": s.name, "installed": rhizome_embed::is_installed(s, &dir),
                    "path": rhizome_embed::model_path(s, &dir)}))
                .collect();
            if app.json {
                return print_json(&json!({"models_dir": dir, "models": rows}));
            }
            for r in rows {
                let name = r["name"].as_str().unwrap_or("");
                let llm = rhizome_embed::models::find_llm(name).is_some();
                let state = match (r["installed"].as_bool() == Some(true), llm) {
                    (true, _) => "installed".to_string(),
                    (false, false) => "missing (run `rhizome models fetch`)".to_string(),
                    (false, true) => format!("missing (run `rhizome models fetch --llm {name}`)"),
                };
                println!("{name:<24} {state}");
            }
            Ok(())
        }
    }
}
