//! `rhizome analyze [--history FILE] "Q"`: query analysis, with no index needed. With an
//! LLM configured the analysis is LLM-assisted; the LLM cache lives in the index only when
//! the index exists (analysing never creates one).

use std::path::Path;

use anyhow::{Context as _, Result};
use rhizome_core::llm::ChatMessage;
use rhizome_retrieve::analyze::{parse_history, AnalysisSource, QueryAnalysis};
use rhizome_retrieve::{route, Method};

use crate::app::{print_json, App};

pub fn analyze(app: App, question: &str, history: Option<&Path>) -> Result<()> {
    let history = match history {
        Some(p) => read_history(p)?,
        None => Vec::new(),
    };
    let engine = app.engine()?;
    let a = engine.analyze(question, &history)?;
    if app.json {
        return print_json(&a);
    }
    let facts = if engine.exists() && a.multi_hop {
        engine.stats().ok().map(|s| s.nodes.get("Fact").copied().unwrap_or(0))
    } else {
        None
    };
    print_summary(&a, facts);
    Ok(())
}

/// A `--history` file: a JSON array of `{"role", "content"}` messages.
pub fn read_history(path: &Path) -> Result<Vec<ChatMessage>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "--history {}: cannot read the file; pass a JSON file of messages like \
             [{{\"role\": \"user\", \"content\": \"Who is Aage Bohr?\"}}]",
            path.display()
        )
    })?;
    Ok(parse_history(&format!("--history {}", path.display()), &text)?)
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// A readable summary; `facts` is the index's fact count when it matters (a multi-hop
/// question and an index).
fn print_summary(a: &QueryAnalysis, facts: Option<u64>) {
    println!("Question:         {}", a.question);
    if a.is_follow_up {
        println!("Follow-up:        yes -> {}", a.standalone_question);
    } else {
        println!("Follow-up:        no");
    }
    println!("Language:         {}", a.language.code());
    println!("Type:             {}", a.query_type.as_str());
    println!("Complexity:       {} ({:.2})", a.complexity.as_str(), a.complexity_score);
    println!("Key concepts:     {}", a.key_concepts.join(", "));
    println!("Needs reasoning:  {}", yes(a.requires_reasoning));
    println!("Several sources:  {}", yes(a.multiple_sources));
    println!("Multi-hop:        {}", yes(a.multi_hop));
    let routed = match (facts, a.multi_hop) {
        (None, true) => format!("{} if the index has facts, else {}", Method::Hippo, Method::Multihop),
        (n, _) => {
            let r = route(a, n.unwrap_or(0));
            format!("{} ({})", r.method, r.reason)
        }
    };
    println!("--method auto:    {routed}");
    let by = if a.source == AnalysisSource::Llm { "LLM" } else { "rules" };
    println!("Analysis by:      {by}");
    if !a.cues.is_empty() {
        println!("Cues:             {}", a.cues.join("; "));
    }
    for n in &a.notes {
        println!("Note:             {n}");
    }
}
