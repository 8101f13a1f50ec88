//! `rhizome communities`, and the community step at the end of `rhizome index`.

use anyhow::Result;
use rhizome_engine::CommunityOutcome;
use serde_json::json;

use crate::app::{print_json, App, CANCEL};

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
        if o.llm_failures > 0 {
            format!(", {} LLM reports failed (extractive ones stand in; see notes)", o.llm_failures)
        } else {
            String::new()
        },
    )
}

pub fn communities(app: App, force: bool) -> Result<()> {
    let t = std::time::Instant::now();
    let (outcome, usage) = app.engine()?.communities(force, &CANCEL)?;
    let seconds = t.elapsed().as_secs_f64();
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
