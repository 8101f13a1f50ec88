//! `rhizome analyze [--history FILE] "Q"`: query analysis, with no index needed. With an
//! LLM configured the analysis is LLM-assisted; the LLM cache lives in the index only when
//! the index exists (analysing never creates one).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use rhizome_core::llm::{ChatMessage, PromptLlm};
use rhizome_core::{Config, StoreRead};
use rhizome_llm::prompt::Prompts;
use rhizome_llm::{BlockingLlm, Limited, Retry};
use rhizome_retrieve::analyze::{
    analyze as run_analysis, parse_history, standalone_question, AnalysisSource, QueryAnalysis,
};
use rhizome_retrieve::{route, Method};
use rhizome_store::SqliteStore;

use crate::app::{print_json, App};

pub fn analyze(app: App, question: &str, history: Option<&Path>) -> Result<()> {
    if question.trim().is_empty() {
        anyhow::bail!("the question is empty; ask something, e.g. rhizome analyze \"Who founded OpenAI?\"");
    }
    let history = match history {
        Some(p) => read_history(p)?,
        None => Vec::new(),
    };
    let index_exists = app.cli_index.join(rhizome_store::DB_FILE).exists();
    let (full, bare) = llm_for(&app)?;
    let full_view = full.as_ref().map(|l| l.prompt_llm(&app.config));
    let llm = view(&full_view, &bare);
    let a = run_analysis(question, &history, llm)?;
    if app.json {
        return print_json(&a);
    }
    let facts = if index_exists && a.multi_hop {
        SqliteStore::open(&app.cli_index, false)
            .and_then(|s| s.stats())
            .ok()
            .map(|s| s.nodes.get("Fact").copied().unwrap_or(0))
    } else {
        None
    };
    print_summary(&a, facts);
    Ok(())
}

/// For `rhizome query --history FILE`: the question made self-contained against the
/// history (LLM-assisted when one is configured), said on stderr when it changed. Without
/// a history, the question as asked.
pub fn resolve_follow_up(app: &App, question: &str, history: Option<&Path>) -> Result<String> {
    let Some(path) = history else { return Ok(question.to_string()) };
    if question.trim().is_empty() {
        return Ok(question.to_string()); // `query` reports the empty question
    }
    let history = read_history(path)?;
    let (full, bare) = llm_for(app)?;
    let full_view = full.as_ref().map(|l| l.prompt_llm(&app.config));
    let llm = view(&full_view, &bare);
    let s = standalone_question(question, &history, llm)?;
    if s.is_follow_up {
        eprintln!("follow-up, asked as: {}", s.question);
    }
    Ok(s.question)
}

type LlmPair = (Option<crate::llm::Llm>, Option<(tokio::runtime::Runtime, BlockingLlm)>);

/// The configured LLM: the full stack (with the cache) when the index exists; otherwise
/// the provider with retries and limits only, so that analysing creates no index.
fn llm_for(app: &App) -> Result<LlmPair> {
    if app.cli_index.join(rhizome_store::DB_FILE).exists() {
        Ok((crate::llm::build(&app.config, &app.cli_index)?, None))
    } else {
        Ok((None, bare_llm(&app.config)?))
    }
}

fn view<'a>(full: &'a Option<BlockingLlm>, bare: &'a Option<(tokio::runtime::Runtime, BlockingLlm)>)
    -> Option<&'a dyn PromptLlm> {
    match (full, bare) {
        (Some(v), _) => Some(v),
        (None, Some((_, b))) => Some(b),
        (None, None) => None,
    }
}

fn read_history(path: &Path) -> Result<Vec<ChatMessage>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "--history {}: cannot read the file; pass a JSON file of messages like \
             [{{\"role\": \"user\", \"content\": \"Who is Aage Bohr?\"}}]",
            path.display()
        )
    })?;
    Ok(parse_history(&format!("--history {}", path.display()), &text)?)
}

/// The configured provider behind retries and limits, without the index cache.
fn bare_llm(config: &Config) -> Result<Option<(tokio::runtime::Runtime, BlockingLlm)>> {
    let Some(base) = crate::llm::base_provider(config)? else { return Ok(None) };
    let c = &config.llm;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let retry = Retry {
        inner: base,
        max_retries: c.max_retries,
        base_delay: Duration::from_millis(c.retry_base_ms),
        max_delay: Duration::from_millis(c.retry_max_ms.max(c.retry_base_ms)),
    };
    let limited = Limited::new(retry, c.concurrency, Some(c.requests_per_minute), Some(c.tokens_per_minute));
    let dir = Some(Path::new(&c.prompts_dir)).filter(|p| !p.as_os_str().is_empty());
    let llm = BlockingLlm {
        provider: Arc::new(limited),
        prompts: Arc::new(Prompts::load(dir)?),
        runtime: runtime.handle().clone(),
        temperature: c.temperature,
        max_tokens: c.max_tokens,
    };
    Ok(Some((runtime, llm)))
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
