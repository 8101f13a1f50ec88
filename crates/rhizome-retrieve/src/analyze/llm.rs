//! The LLM path: the `rewrite_followup` and `analyze_query` prompts, each answered with a
//! JSON object, read defensively (fenced or chatty replies are fine; a missing or ill-typed
//! field keeps the rule-based value and is named in a note).

use rhizome_core::llm::{ChatMessage, PromptCall, PromptLlm, Role};
use serde_json::{Map, Value};

use super::followup::{dialogue, Rewrite};
use super::{round2, AnalysisSource, Complexity, Lang, QueryAnalysis, QueryType};

const STAGE: &str = "query.analyze";
/// Turns of history shown to the LLM, and characters kept per turn.
const HISTORY_TURNS: usize = 8;
const TURN_CHARS: usize = 800;

/// The history as the prompt shows it: `user: ...` / `assistant: ...` lines, the last
/// [`HISTORY_TURNS`] turns, each cut at [`TURN_CHARS`] characters.
pub(crate) fn format_history(history: &[ChatMessage]) -> String {
    let turns = dialogue(history);
    let from = turns.len().saturating_sub(HISTORY_TURNS);
    turns[from..]
        .iter()
        .map(|m| {
            let role = if m.role == Role::User { "user" } else { "assistant" };
            let text: String = m.content.trim().chars().take(TURN_CHARS).collect();
            format!("{role}: {}", text.replace('\n', " "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Follow-up rewriting by the LLM; the rule-based `rules` where the reply falls short.
pub(crate) fn rewrite(
    llm: &dyn PromptLlm,
    q: &str,
    history: &[ChatMessage],
    rules: Rewrite,
    notes: &mut Vec<String>,
) -> Rewrite {
    let h = format_history(history);
    let call = PromptCall::new("rewrite_followup", STAGE, &[("history", &h), ("question", q)]).json().max_tokens(300);
    let reply = match llm.run_one(call) {
        Ok(r) => r,
        Err(e) => {
            notes.push(format!("LLM follow-up rewriting failed ({e}); rule-based rewriting used"));
            return rules;
        }
    };
    let Some(obj) = json_object(&reply) else {
        notes.push("LLM follow-up reply is not a JSON object; rule-based rewriting used".into());
        return rules;
    };
    let flag = obj.get("is_follow_up").and_then(boolean);
    let text = obj
        .get("standalone_question")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty() && t.chars().count() <= 4 * q.chars().count() + 400);
    let (is_follow_up, standalone) = match (flag, text) {
        (Some(false), _) => (false, q.to_string()),
        (Some(true), Some(t)) => (true, t.to_string()),
        (None, Some(t)) => (t != q, t.to_string()),
        (Some(true), None) | (None, None) => {
            notes.push("LLM follow-up reply lacks a usable standalone_question; rule-based rewriting used".into());
            return rules;
        }
    };
    if flag.is_none() {
        notes.push("LLM follow-up reply lacks is_follow_up; taken from whether the question changed".into());
    }
    let mut out = Rewrite { is_follow_up, standalone, notes: Vec::new(), cues: Vec::new() };
    if is_follow_up {
        out.notes.push(format!("follow-up rewritten by the LLM: {:?}", out.standalone));
    }
    out
}

/// The LLM's analysis of `rules.standalone_question`, field by field over `rules`.
pub(crate) fn analyze(llm: &dyn PromptLlm, rules: QueryAnalysis, notes: &mut Vec<String>) -> QueryAnalysis {
    let call = PromptCall::new("analyze_query", STAGE, &[("question", rules.standalone_question.as_str())])
        .json()
        .max_tokens(400);
    let reply = match llm.run_one(call) {
        Ok(r) => r,
        Err(e) => {
            notes.push(format!("LLM analysis failed ({e}); rule-based analysis used"));
            return rules;
        }
    };
    let Some(obj) = json_object(&reply) else {
        notes.push("LLM analysis reply is not a JSON object; rule-based analysis used".into());
        return rules;
    };
    let mut a = rules.clone();
    a.source = AnalysisSource::Llm;
    let mut fallback: Vec<&str> = Vec::new();
    let mut take = |field: &'static str, ok: bool| {
        if !ok {
            fallback.push(field);
        }
    };

    // The script settles Chinese and (diacritics) Vietnamese; the LLM may know better only
    // where the detector fell back to English.
    match obj.get("language").and_then(Value::as_str).and_then(Lang::parse) {
        Some(l) if rules.language == Lang::En || l == rules.language => a.language = l,
        Some(l) => notes.push(format!(
            "LLM analysis: language {} ignored, the script says {}",
            l.code(),
            rules.language.code()
        )),
        None => take("language", false),
    }
    match obj.get("query_type").and_then(Value::as_str).and_then(QueryType::parse) {
        Some(t) => a.query_type = t,
        None => take("query_type", false),
    }
    let level = obj.get("complexity").and_then(Value::as_str).and_then(Complexity::parse);
    let score = obj.get("complexity_score").and_then(number).filter(|s| (0.0..=1.0).contains(s));
    match (level, score) {
        (Some(l), Some(s)) => {
            a.complexity = l;
            a.complexity_score = round2(s);
        }
        (None, Some(s)) => {
            a.complexity_score = round2(s);
            a.complexity = Complexity::from_score(a.complexity_score);
            take("complexity", false);
        }
        (Some(l), None) => {
            let (lo, hi) = l.range();
            a.complexity = l;
            a.complexity_score = round2(rules.complexity_score.clamp(lo, hi));
            take("complexity_score", false);
        }
        (None, None) => {
            take("complexity", false);
            take("complexity_score", false);
        }
    }
    match obj.get("key_concepts").and_then(concepts) {
        Some(k) => {
            // Only terms the question contains: a translated or invented term is dropped.
            let q = rules.standalone_question.to_lowercase();
            let (kept, dropped): (Vec<String>, Vec<String>) =
                k.into_iter().partition(|c| q.contains(&c.to_lowercase()));
            if !dropped.is_empty() {
                notes.push(format!("LLM analysis: key concepts not in the question dropped: {}", dropped.join(", ")));
            }
            if kept.is_empty() {
                take("key_concepts", false);
            } else {
                a.key_concepts = kept;
            }
        }
        None => take("key_concepts", false),
    }
    for (field, slot) in [
        ("requires_reasoning", &mut a.requires_reasoning),
        ("multiple_sources", &mut a.multiple_sources),
        ("multi_hop", &mut a.multi_hop),
    ] {
        match obj.get(field).and_then(boolean) {
            Some(b) => *slot = b,
            None => take(field, false),
        }
    }
    if !fallback.is_empty() {
        notes.push(format!("LLM analysis: missing or invalid {}; rule-based values used", fallback.join(", ")));
    }
    a
}

/// Opening braces [`json_object`] tries a balanced object at. Each try scans the rest of
/// the reply, so without a bound a reply of many `{` took time quadratic in its length
/// (16 KB: seconds; found by the fuzzer).
const OBJECT_TRIES: usize = 32;

/// The first JSON object in `text`: the whole text, or a balanced `{...}` inside it
/// starting at one of its first [`OBJECT_TRIES`] opening braces (code fences and prose
/// around it are ignored).
pub(crate) fn json_object(text: &str) -> Option<Map<String, Value>> {
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(text.trim()) {
        return Some(o);
    }
    let mut from = 0;
    let mut tries = 0;
    while let Some(open) = text[from..].find('{').map(|i| i + from) {
        tries += 1;
        if tries > OBJECT_TRIES {
            return None;
        }
        if let Some(close) = balanced_end(&text[open..]) {
            if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(&text[open..open + close]) {
                return Some(o);
            }
        }
        from = open + 1;
    }
    None
}

/// The JSON object or list in `text`: the whole text when it is one, else the widest
/// `{...}` or `[...]` span that parses (code fences and prose around it are ignored).
pub(crate) fn json_value(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        if v.is_object() || v.is_array() {
            return Some(v);
        }
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (t.find(open), t.rfind(close)) {
            if a < b {
                if let Ok(v) = serde_json::from_str::<Value>(&t[a..=b]) {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// Byte length of the balanced `{...}` at the start of `s` (strings and escapes honoured).
fn balanced_end(s: &str) -> Option<usize> {
    let (mut depth, mut in_str, mut escaped) = (0usize, false, false);
    for (i, c) in s.char_indices() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_lowercase().as_str() {
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite())
}

/// A non-empty list of distinct, non-empty strings (at most 8, 120 characters each).
fn concepts(v: &Value) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for item in v.as_array()? {
        let s = item.as_str()?.trim();
        if !s.is_empty() && s.chars().count() <= 120 && !out.iter().any(|x| x.to_lowercase() == s.to_lowercase()) {
            out.push(s.to_string());
        }
    }
    out.truncate(8);
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_object_in_chatty_replies() {
        let o = json_object("Sure!\n```json\n{\"a\": \"}{\", \"b\": [1, {\"c\": 2}]}\n```\nDone.").unwrap();
        assert_eq!(o["a"], "}{");
        assert_eq!(o["b"][1]["c"], 2);
        assert!(json_object("no json here { broken").is_none());
        assert!(json_object("[1, 2]").is_none());
        // Many opening braces: bounded work, and an object after a few is still found.
        assert!(json_object(&"{".repeat(100_000)).is_none());
        assert_eq!(json_object("{ {{ {\"a\": 1}").unwrap()["a"], 1);
        assert_eq!(json_object("{\"x\": 1} {\"y\": 2}").unwrap()["x"], 1);
    }
}
