//! `rhizome communities`, and the community step at the end of `rhizome index`.

use anyhow::Result;
use rhizome_community::CommunityOutcome;
use rhizome_core::llm::PromptLlm;
use rhizome_core::Embedder;
use rhizome_store::SqliteStore;
use serde_json::json;

use crate::app::{bind_embedder, print_json, App};
use crate::llm::Llm;

/// Bring communities and reports up to date with the graph.
pub fn refresh(app: &App, store: &mut SqliteStore, embedder: &dyn Embedder, llm: Option<&Llm>, recompute: bool)
    -> Result<CommunityOutcome> {
    let prompt_llm = llm.map(|l| l.prompt_llm(&app.config));
    let outcome = rhizome_community::refresh(
        store,
        embedder,
        prompt_llm.as_ref().map(|p| p as &dyn PromptLlm),
        &app.config.communities,
        recompute,
        &crate::cmd_index::CANCEL,
    )?;
    Ok(outcome)
}

/// One line for the end of `rhizome index` / `rhizome communities`.
pub fn summary(o: &CommunityOutcome) -> String {
    let levels: Vec<String> = o.per_level.iter().enumerate().map(|(l, n)| format!("L{l} {n}")).collect();
    format!(
        "communities: {} ({}){}; reports: {} new by LLM, {} extractive, {} kept{}",
        o.communities,
        levels.join(", "),
        if o.recomputed { ", recomputed" } else { ", unchanged" },
        o.reports_llm,
        o.reports_extractive,
        o.reports_reused,
        if o.llm_failures > 0 { format!(", {} LLM reports failed (extractive ones stand in; see notes)", o.llm_failures) } else { String::new() },
    )
}

pub fn communities(app: App, force: bool) -> Result<()> {
    let mut store = app.open_writer(false)?;
    let embedder = app.embedder_for(&store)?;
    bind_embedder(&mut store, embedder.as_ref())?;
    let llm = crate::llm::build(&app.config, &app.cli_index)?;
    let t = std::time::Instant::now();
    let outcome = refresh(&app, &mut store, embedder.as_ref(), llm.as_ref(), force)?;
    let seconds = t.elapsed().as_secs_f64();
    let usage = match &llm {
        Some(l) => Some(crate::cmd_index::record_usage(&mut store, l)?),
        None => None,
    };
    if app.json {
        return print_json(&json!({"communities": outcome, "seconds": seconds, "llm_usage": usage}));
    }
    println!("{} in {seconds:.1} s", summary(&outcome));
    let t: Vec<String> = outcome.timings_ms.iter().map(|(k, v)| format!("{k} {:.1}s", v / 1e3)).collect();
    println!("time: {}", t.join(", "));
    for n in &outcome.notes {
        println!("note: {n}");
    }
    Ok(())
}
