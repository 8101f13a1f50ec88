//! The LLM as judge in `tog`: after a depth, whether the beam's paths suffice
//! (`tog_check`); at the end, the answer over the numbered paths and their supporting
//! passages (`tog_answer`).

use std::collections::HashMap;

use rhizome_core::llm::PromptCall;
use serde_json::Value;

use super::beam::Path;
use crate::graph::Graph;
use crate::Context;

/// A path with its relations' texts (descriptions included): `A -[r]-> B: ... ; B -[s]-> C`.
pub(crate) fn described(path: &Path, texts: &HashMap<u32, String>, g: &Graph) -> String {
    path.hops
        .iter()
        .map(|h| texts.get(&h.rel).cloned().unwrap_or_else(|| crate::paths::render_hop(g, h.rel)))
        .collect::<Vec<_>>()
        .join(" ; ")
}

/// The paths numbered `[P1] ...`, one a line, with their scores.
pub(crate) fn numbered(paths: &[Path], texts: &HashMap<u32, String>, g: &Graph) -> String {
    paths
        .iter()
        .enumerate()
        .map(|(i, p)| format!("[P{}] {} (score {:.2})", i + 1, described(p, texts, g), p.score()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `tog_check` call for the current beam (`listing`: [`numbered`]).
pub(crate) fn check_call(question: &str, listing: &str) -> PromptCall {
    PromptCall::new("tog_check", "query.tog", &[("question", question), ("paths", listing)]).json().max_tokens(200)
}

/// A `tog_check` verdict.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub sufficient: bool,
    pub answer: String,
}

/// Parse a `tog_check` reply: a JSON object with `sufficient` (a boolean, or a string
/// `true`/`yes`/`false`/`no`) and an optional `answer`. None when there is no such
/// object. A "sufficient" verdict with an empty answer is not trusted: not sufficient.
pub(crate) fn parse_verdict(reply: &str) -> Option<Verdict> {
    let v = crate::analyze::json_value(reply)?;
    let sufficient = match v.get("sufficient")? {
        Value::Bool(b) => *b,
        Value::String(s) => match s.trim().to_lowercase().as_str() {
            "true" | "yes" => true,
            "false" | "no" => false,
            _ => return None,
        },
        _ => return None,
    };
    let answer = v.get("answer").and_then(Value::as_str).unwrap_or("").trim().to_string();
    Some(Verdict { sufficient: sufficient && !answer.is_empty(), answer })
}

/// Supporting passages numbered `[S1] (source — title) text`, or `(none)`.
pub(crate) fn passages(chunks: &[Context]) -> String {
    if chunks.is_empty() {
        return "(none)".into();
    }
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let from = if c.title.is_empty() { c.source.clone() } else { format!("{} — {}", c.source, c.title) };
            format!("[S{}] ({from}) {}", i + 1, c.text)
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The `tog_answer` call.
pub(crate) fn answer_call(question: &str, listing: &str, passages: &str, max_tokens: u32) -> PromptCall {
    PromptCall::new("tog_answer", "query.tog", &[("question", question), ("paths", listing), ("passages", passages)])
        .max_tokens(max_tokens.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_parse_defensively() {
        let v = parse_verdict("```json\n{\"sufficient\": true, \"answer\": \"Nobel Prize\"}\n```").unwrap();
        assert_eq!(v, Verdict { sufficient: true, answer: "Nobel Prize".into() });
        assert!(!parse_verdict(r#"{"sufficient": "no"}"#).unwrap().sufficient);
        assert!(parse_verdict(r#"{"sufficient": "yes", "answer": "x"}"#).unwrap().sufficient);
        assert!(!parse_verdict(r#"{"sufficient": true, "answer": ""}"#).unwrap().sufficient);
        assert!(parse_verdict("Yes, they suffice.").is_none());
        assert!(parse_verdict(r#"{"sufficient": 3}"#).is_none());
    }
}
