//! Query analysis: what kind of question this is, how hard, which concepts it names,
//! whether it needs reasoning, several sources or several hops, and, against a chat
//! history, whether it is a follow-up and what it asks on its own.
//!
//! Two paths, one result type ([`QueryAnalysis`]):
//! - **rules** (always available): cue words and structure per language (English,
//!   Vietnamese, Chinese; see [`detect_language`]), capitalised spans for names, pronoun
//!   and ellipsis resolution against the last turns of the history.
//! - **LLM** (when one is configured): the `rewrite_followup` prompt (only with a
//!   history) and the `analyze_query` prompt, each answered as a JSON object. The reply is
//!   untrusted: any missing or ill-typed field takes the rule-based value, and a reply that
//!   is not JSON at all (or a failed call) leaves the whole rule-based analysis in place;
//!   each fallback is said in [`QueryAnalysis::notes`].

mod cues;
mod followup;
mod lang;
mod llm;
pub(crate) use llm::{json_object, json_value};
mod rules;
mod text;

use rhizome_core::llm::{ChatMessage, PromptLlm, Role};
use rhizome_core::{Error, Result};
use serde::{Deserialize, Serialize};

pub use lang::{detect_language, Lang};

/// The kind of answer a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryType {
    /// A specific fact: who, what, when, where, how many.
    Factual,
    /// Causes, effects, explanations, themes: why, how does, impact.
    Analytical,
    /// Two or more things set side by side: compare, difference, versus.
    Comparative,
}

impl QueryType {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryType::Factual => "factual",
            QueryType::Analytical => "analytical",
            QueryType::Comparative => "comparative",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.trim().to_lowercase().as_str() {
            "factual" | "fact" => Some(QueryType::Factual),
            "analytical" | "analytic" | "analysis" => Some(QueryType::Analytical),
            "comparative" | "comparison" | "compare" => Some(QueryType::Comparative),
            _ => None,
        }
    }
}

/// How hard a question is, from [`QueryAnalysis::complexity_score`]: below 0.35 simple,
/// below 0.6 moderate, else complex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Complexity {
    Simple,
    Moderate,
    Complex,
}

impl Complexity {
    pub fn as_str(self) -> &'static str {
        match self {
            Complexity::Simple => "simple",
            Complexity::Moderate => "moderate",
            Complexity::Complex => "complex",
        }
    }

    /// The level of a score in [0, 1].
    pub fn from_score(score: f64) -> Self {
        if score < 0.35 {
            Complexity::Simple
        } else if score < 0.6 {
            Complexity::Moderate
        } else {
            Complexity::Complex
        }
    }

    /// The score range `[low, high)` of this level.
    fn range(self) -> (f64, f64) {
        match self {
            Complexity::Simple => (0.0, 0.34),
            Complexity::Moderate => (0.35, 0.59),
            Complexity::Complex => (0.6, 1.0),
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.trim().to_lowercase().as_str() {
            "simple" | "easy" | "low" => Some(Complexity::Simple),
            "moderate" | "medium" => Some(Complexity::Moderate),
            "complex" | "hard" | "high" => Some(Complexity::Complex),
            _ => None,
        }
    }
}

/// Which path produced the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnalysisSource {
    /// The LLM's JSON reply (fields it got wrong are rule-based; see the notes).
    Llm,
    /// The rule-based analysis.
    Rules,
}

/// The analysis of one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryAnalysis {
    /// The question as asked.
    pub question: String,
    pub language: Lang,
    pub query_type: QueryType,
    pub complexity: Complexity,
    /// In [0, 1], two decimals.
    pub complexity_score: f64,
    /// Names first (as written), then key terms; at most 8.
    pub key_concepts: Vec<String>,
    /// Answering needs inference beyond looking one fact up.
    pub requires_reasoning: bool,
    /// The answer likely combines several documents.
    pub multiple_sources: bool,
    /// One fact must be found to find the next: retrieve by hops.
    pub multi_hop: bool,
    /// The question made self-contained (equal to `question` unless it is a follow-up).
    pub standalone_question: String,
    /// The question depends on the chat history.
    pub is_follow_up: bool,
    pub source: AnalysisSource,
    /// What was assumed, resolved or fell back, in words.
    pub notes: Vec<String>,
    /// The cues the rules matched (question words, relative clauses, possessives...).
    pub cues: Vec<String>,
}

/// Analyse `question` (with the chat `history` it follows, oldest first; may be empty).
/// With `llm`, the LLM path (falling back to rules field by field); without, the rules.
/// Fails only on an empty question.
pub fn analyze(question: &str, history: &[ChatMessage], llm: Option<&dyn PromptLlm>) -> Result<QueryAnalysis> {
    let q = question.trim();
    let (rewrite, mut notes) = follow_up(q, history, llm)?;
    notes.extend(rewrite.notes.iter().cloned());
    let mut a = rules::analyze(q, &rewrite.standalone, detect_language(q));
    a.is_follow_up = rewrite.is_follow_up;
    a.cues.extend(rewrite.cues.iter().cloned());
    match llm {
        Some(l) => a = llm::analyze(l, a, &mut notes),
        None => notes.push("no LLM configured: rule-based analysis".into()),
    }
    a.notes = notes;
    Ok(a)
}

/// A question made self-contained against a chat history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standalone {
    /// The question to retrieve with (the question itself unless it is a follow-up).
    pub question: String,
    pub is_follow_up: bool,
    /// What was resolved or fell back.
    pub notes: Vec<String>,
}

/// Only the follow-up step of [`analyze`]: `question` made self-contained against
/// `history` (LLM-assisted with `llm`, one call and only when there is a history). Fails
/// only on an empty question.
pub fn standalone_question(question: &str, history: &[ChatMessage], llm: Option<&dyn PromptLlm>) -> Result<Standalone> {
    let (rewrite, mut notes) = follow_up(question.trim(), history, llm)?;
    notes.extend(rewrite.notes);
    Ok(Standalone { question: rewrite.standalone, is_follow_up: rewrite.is_follow_up, notes })
}

fn follow_up(
    q: &str,
    history: &[ChatMessage],
    llm: Option<&dyn PromptLlm>,
) -> Result<(followup::Rewrite, Vec<String>)> {
    if q.is_empty() {
        return Err(Error::bad_input("question", "it is empty; ask something, e.g. \"Who founded OpenAI?\""));
    }
    let rule_rewrite = followup::rewrite(q, detect_language(q), history);
    let mut notes = Vec::new();
    let rewrite = match llm {
        Some(l) if has_dialogue(history) => llm::rewrite(l, q, history, rule_rewrite, &mut notes),
        _ => rule_rewrite,
    };
    Ok((rewrite, notes))
}

/// The rule-based analysis alone (no LLM). Fails only on an empty question.
pub fn analyze_rules(question: &str, history: &[ChatMessage]) -> Result<QueryAnalysis> {
    analyze(question, history, None)
}

/// Read a chat history: a JSON array of `{"role": "user"|"assistant"|"system",
/// "content": "..."}` messages, oldest first (an object `{"messages": [...]}` is accepted
/// too). `input` names where it came from, for errors.
pub fn parse_history(input: &str, json: &str) -> Result<Vec<ChatMessage>> {
    let fix = "expected a JSON array of messages like [{\"role\": \"user\", \"content\": \"Who is Aage Bohr?\"}, {\"role\": \"assistant\", \"content\": \"...\"}]";
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| Error::bad_input(input, format!("not valid JSON ({e}); {fix}")))?;
    let list = match &value {
        serde_json::Value::Array(a) => a,
        serde_json::Value::Object(o) => match o.get("messages") {
            Some(serde_json::Value::Array(a)) => a,
            _ => return Err(Error::bad_input(input, format!("a JSON object without a \"messages\" array; {fix}"))),
        },
        _ => return Err(Error::bad_input(input, format!("not a list of messages; {fix}"))),
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        let role = m.get("role").and_then(|r| r.as_str()).map(|r| r.trim().to_lowercase());
        let role = match role.as_deref() {
            Some("user") | Some("human") => Role::User,
            Some("assistant") | Some("ai") | Some("bot") => Role::Assistant,
            Some("system") => Role::System,
            other => {
                return Err(Error::bad_input(
                    input,
                    format!("message {i}: role {other:?} is not user, assistant or system; {fix}"),
                ))
            }
        };
        let Some(content) = m.get("content").and_then(|c| c.as_str()) else {
            return Err(Error::bad_input(input, format!("message {i}: no \"content\" string; {fix}")));
        };
        out.push(ChatMessage { role, content: content.to_string() });
    }
    Ok(out)
}

/// True when the history holds at least one user or assistant message with text.
fn has_dialogue(history: &[ChatMessage]) -> bool {
    history.iter().any(|m| m.role != Role::System && !m.content.trim().is_empty())
}

fn round2(x: f64) -> f64 {
    (x.clamp(0.0, 1.0) * 100.0).round() / 100.0
}
