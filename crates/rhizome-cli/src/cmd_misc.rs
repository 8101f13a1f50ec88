//! `rhizome stats`, `delete`, `models`.

use anyhow::Result;
use rhizome_core::Stats;
use serde_json::json;

use crate::app::{print_json, App, CANCEL};
use crate::ModelsCmd;

pub fn stats_line(s: &Stats) -> String {
    let nodes: Vec<String> = s.nodes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let edges: Vec<String> = s.edges.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!("nodes: {}; edges: {}", nodes.join(", "), edges.join(", "))
}

pub fn stats(app: App) -> Result<()> {
    let s = app.engine()?.stats()?;
    if app.json {
        return print_json(&s);
    }
    println!("index {}", app.store);
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
    let o = app.engine()?.delete(doc, &CANCEL)?;
    if app.json {
        return print_json(
            &json!({"deleted": o.deleted, "synonym_edges": o.synonym_edges, "communities": o.communities}),
        );
    }
    let t = &o.deleted;
    println!(
        "deleted {} document(s), {} chunks, {} entities, {} relations, {} facts",
        t.documents, t.chunks, t.entities, t.relations, t.facts
    );
    if let Some(c) = &o.communities {
        println!("{}", crate::cmd_communities::summary(c));
    }
    Ok(())
}

pub fn models(app: App, what: ModelsCmd) -> Result<()> {
    let dir = rhizome_models::models_dir();
    match what {
        ModelsCmd::Fetch { llm } => {
            let specs = rhizome_models::to_fetch(&llm).map_err(anyhow::Error::msg)?;
            for spec in specs {
                if !app.json {
                    eprintln!("fetching {} into {} ...", spec.name, dir.display());
                }
                let p = rhizome_models::fetch(spec, &dir)?;
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
            let rows: Vec<_> = rhizome_models::listing(&dir)
                .into_iter()
                .map(|(name, installed, path)| json!({"name": name, "installed": installed, "path": path}))
                .collect();
            if app.json {
                return print_json(&json!({"models_dir": dir, "models": rows}));
            }
            for r in rows {
                let name = r["name"].as_str().unwrap_or("");
                let llm = rhizome_models::find_llm(name).is_some();
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
