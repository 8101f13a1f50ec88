//! Recognition memory: an LLM keeps the linked facts that bear on the question, and the
//! parser of its reply.

use rhizome_core::llm::PromptCall;
use serde_json::Value;

use super::linking::Linked;
use crate::QueryEnv;

/// Recognition memory: the LLM keeps the linked facts that bear on the question (true:
/// the list was filtered). Without an LLM, or when its reply is unusable or keeps
/// nothing, the unfiltered list stays (false, with a note saying so).
pub(super) fn recognition_filter(
    env: &QueryEnv,
    question: &str,
    linked: Vec<Linked>,
    notes: &mut Vec<String>,
) -> (Vec<Linked>, bool) {
    let Some(llm) = env.llm else {
        notes.push("no LLM configured: linked facts not filtered (recognition memory skipped)".into());
        return (linked, false);
    };
    let listing: Vec<String> = linked.iter().enumerate().map(|(i, f)| format!("{}. {}", i + 1, f.text)).collect();
    let listing = listing.join("\n");
    let call = PromptCall::new("hippo_filter", "query.hippo", &[("question", question), ("facts", &listing)])
        .json()
        .max_tokens(200);
    let reply = match llm.run_one(call) {
        Ok(r) => r,
        Err(e) => {
            notes.push(format!("fact filter failed ({e}): the unfiltered facts were used"));
            return (linked, false);
        }
    };
    match parse_kept(&reply, linked.len()) {
        None => {
            notes.push("fact filter reply was unusable: the unfiltered facts were used".into());
            (linked, false)
        }
        Some(kept) if kept.is_empty() => {
            notes.push("fact filter kept no fact: the unfiltered facts were used".into());
            (linked, false)
        }
        Some(kept) => {
            notes.push(format!("fact filter kept {} of {} linked facts", kept.len(), linked.len()));
            let mut keep = vec![false; linked.len()];
            kept.iter().for_each(|&i| keep[i] = true);
            (linked.into_iter().zip(keep).filter(|(_, k)| *k).map(|(f, _)| f).collect(), true)
        }
    }
}

/// The fact numbers (1-based in the prompt, 0-based here) an LLM reply keeps: a JSON
/// object `{"relevant": [..]}` (possibly wrapped in prose or a code fence) or a bare
/// JSON list. Numbers may be given as strings; out-of-range and duplicate numbers are
/// dropped. None when the reply holds no such list, or when none of the items of a
/// non-empty list is a usable number.
pub(crate) fn parse_kept(reply: &str, n: usize) -> Option<Vec<usize>> {
    let value = crate::analyze::json_value(reply)?;
    let list = match &value {
        Value::Array(a) => a,
        Value::Object(o) => o
            .get("relevant")
            .or_else(|| o.get("facts"))
            .or_else(|| o.values().find(|v| v.is_array()))
            .and_then(Value::as_array)?,
        _ => return None,
    };
    let mut kept: Vec<usize> = Vec::new();
    for item in list {
        let number = match item {
            Value::Number(x) => x.as_u64(),
            Value::String(s) => s.trim().trim_end_matches('.').parse::<u64>().ok(),
            _ => None,
        };
        if let Some(i) = number.filter(|&i| i >= 1 && (i as usize) <= n).map(|i| i as usize - 1) {
            if !kept.contains(&i) {
                kept.push(i);
            }
        }
    }
    if kept.is_empty() && !list.is_empty() {
        return None;
    }
    kept.sort_unstable();
    Some(kept)
}
