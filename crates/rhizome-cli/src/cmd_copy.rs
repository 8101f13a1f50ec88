//! `rhizome copy` (an index into another store) and `rhizome export` (the graph as files).

use std::path::Path;

use anyhow::Result;
use rhizome_engine::ExportFormat;

use crate::app::{print_json, App, CANCEL};

pub fn copy(mut app: App, from: Option<&str>, to: &str) -> Result<()> {
    if let Some(f) = from {
        app.store = f.to_string();
    }
    let engine = app.engine()?;
    let quiet = app.json;
    let last = std::cell::Cell::new(std::time::Instant::now());
    let progress = |done: u64, total: u64| {
        if !quiet && (last.get().elapsed().as_secs() >= 5 || done == total) {
            eprintln!("copied {done} of {total} documents");
            last.set(std::time::Instant::now());
        }
    };
    let o = engine.copy_to(to, &progress, &CANCEL)?;
    if app.json {
        return print_json(&o);
    }
    println!(
        "copied {} documents, {} entity summaries, {} synonym edges, {} communities and {} reports from {} to {} in {:.1} s",
        o.documents, o.summaries, o.synonyms, o.communities, o.reports, o.from, o.to, o.seconds
    );
    println!("{}", crate::cmd_misc::stats_line(&o.stats));
    Ok(())
}

pub fn export(app: App, format: &str, out: &Path) -> Result<()> {
    let format = ExportFormat::parse(format)?;
    let o = app.engine()?.export(format, out)?;
    if app.json {
        return print_json(&o);
    }
    let nodes: u64 = o.nodes.values().sum();
    let edges: u64 = o.edges.values().sum();
    println!("exported {nodes} nodes and {edges} edges of {} as {}:", app.store, o.format);
    for f in &o.files {
        println!("  {}", f.display());
    }
    if format == ExportFormat::Neo4jCsv {
        println!("load them with: sh {}", out.join("import.sh").display());
    }
    Ok(())
}
