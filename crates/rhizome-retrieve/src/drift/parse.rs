//! Reading the JSON replies of the primer and follow-up calls. LLM output is untrusted:
//! the object may sit in a code fence or in prose, fields may be missing or of the wrong
//! type. What cannot be read is an error (the caller drops the reply with a note); what
//! can be repaired is repaired and said in [`Step::problems`].

use serde_json::{Map, Value};

use crate::analyze::json_object;

/// One parsed step: an answer, its score (0-100) and the follow-up questions it proposes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    pub answer: String,
    pub score: f32,
    pub follow_ups: Vec<String>,
    /// Repairs made (a missing or unreadable score taken as 0, ...).
    pub problems: Vec<String>,
}

/// Keys accepted for the answer, the wanted one first.
const ANSWER_KEYS: [&str; 4] = ["intermediate_answer", "response", "answer", "intermediate answer"];
const FOLLOW_UP_KEYS: [&str; 4] = ["follow_up_queries", "follow_ups", "follow_up_questions", "followup_queries"];

/// Parse a reply whose answer is under `answer_key` (other usual names are accepted too).
/// Fails when the reply holds no JSON object or no usable answer text.
pub(crate) fn parse_step(reply: &str, answer_key: &str) -> Result<Step, String> {
    let o = json_object(reply).ok_or_else(|| format!("no JSON object in the reply ({})", preview(reply)))?;
    let mut problems = Vec::new();
    let answer = std::iter::once(answer_key)
        .chain(ANSWER_KEYS)
        .find_map(|k| field(&o, k).and_then(text_of))
        .ok_or_else(|| format!("no `{answer_key}` text in the reply ({})", preview(reply)))?;
    let score = match field(&o, "score") {
        None => {
            problems.push("no score: taken as 0".to_string());
            0.0
        }
        Some(v) => match number_of(v) {
            Some(s) => s.clamp(0.0, 100.0),
            None => {
                problems.push(format!("unreadable score {v}: taken as 0"));
                0.0
            }
        },
    };
    let follow_ups = FOLLOW_UP_KEYS.iter().find_map(|k| field(&o, k)).map(questions_of).unwrap_or_default();
    Ok(Step { answer, score, follow_ups, problems })
}

/// A field by key, compared case-insensitively.
fn field<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    o.get(key).or_else(|| o.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v))
}

/// Text of an answer: a non-empty string, or a list of strings joined by new lines.
fn text_of(v: &Value) -> Option<String> {
    let s = match v {
        Value::String(s) => s.trim().to_string(),
        Value::Array(items) => items
            .iter()
            .filter_map(|x| x.as_str().map(str::trim).filter(|s| !s.is_empty()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    (!s.is_empty()).then_some(s)
}

/// A score: a number, or a string starting with one (`"85"`, `"85/100"`, `"85%"`).
fn number_of(v: &Value) -> Option<f32> {
    let x = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => {
            let s = s.trim();
            let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
            s[..end].parse::<f64>().ok()?
        }
        _ => return None,
    };
    x.is_finite().then_some(x as f32)
}

/// Follow-up questions: a list of strings (or of objects with a `query`/`question`
/// field), or one string (one question per line). Bullets and numbering are stripped,
/// empty items dropped.
fn questions_of(v: &Value) -> Vec<String> {
    let raw: Vec<String> = match v {
        Value::Array(items) => items
            .iter()
            .filter_map(|x| match x {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => ["query", "question", "text"]
                    .iter()
                    .find_map(|k| field(o, k).and_then(Value::as_str))
                    .map(str::to_string),
                _ => None,
            })
            .collect(),
        Value::String(s) => s.lines().map(str::to_string).collect(),
        _ => Vec::new(),
    };
    raw.iter().map(|q| strip_bullet(q)).filter(|q| !q.is_empty()).collect()
}

/// A list item without its bullet (`-`, `*`, `•`) or numbering (`1.`, `2)`).
fn strip_bullet(item: &str) -> String {
    let t = item.trim().trim_start_matches(['-', '*', '•']).trim_start();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let t = match t[digits..].chars().next() {
        Some('.' | ')') if digits > 0 => &t[digits + 1..],
        _ => t,
    };
    t.trim().to_string()
}

/// The start of a reply, for notes.
pub(crate) fn preview(reply: &str) -> String {
    let t = reply.trim();
    let shown: String = t.chars().take(60).collect();
    if shown.len() < t.len() {
        format!("{shown:?}...")
    } else {
        format!("{shown:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_fenced_and_repaired_replies() {
        let s = parse_step(
            r#"{"intermediate_answer": "A", "score": 80, "follow_up_queries": ["Q1?", "Q2?"]}"#,
            "intermediate_answer",
        )
        .unwrap();
        assert_eq!((s.answer.as_str(), s.score, s.follow_ups.len()), ("A", 80.0, 2));
        assert!(s.problems.is_empty());

        let fenced = "Sure:\n```json\n{\"response\": [\"x\", \"y\"], \"score\": \"75/100\",\n\
            \"follow_up_queries\": \"1. First?\\n- Second?\"}\n```\nDone.";
        let s = parse_step(fenced, "response").unwrap();
        assert_eq!(s.answer, "x\ny");
        assert_eq!(s.score, 75.0);
        assert_eq!(s.follow_ups, ["First?", "Second?"]);
        assert_eq!(strip_bullet("2024 Olympics?"), "2024 Olympics?");
        assert_eq!(strip_bullet("12) Who?"), "Who?");

        let s = parse_step(r#"{"Response": "r", "score": 250, "follow_up_queries": [1, {"query": "Q"}]}"#, "response")
            .unwrap();
        assert_eq!((s.score, s.follow_ups.clone()), (100.0, vec!["Q".to_string()]));
        let s = parse_step(r#"{"response": "r", "score": "high"}"#, "response").unwrap();
        assert_eq!(s.score, 0.0);
        assert!(s.follow_ups.is_empty() && s.problems.len() == 1);
    }

    #[test]
    fn unusable_replies_are_errors() {
        for bad in ["", "no json here", "{\"score\": 50}", "{\"response\": \"  \"}", "[1, 2]", "{\"response\": "] {
            assert!(parse_step(bad, "response").is_err(), "{bad}");
        }
    }
}
