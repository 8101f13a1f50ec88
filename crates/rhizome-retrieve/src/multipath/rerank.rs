//! Optional LLM reranking of the chosen chunks (prompt `rerank`). The reply is untrusted:
//! passage numbers are read from a JSON object, a bare JSON list, or failing both the
//! numbers in the text; out-of-range and repeated numbers are ignored.

use rhizome_core::llm::{PromptCall, PromptLlm};

/// Characters of each passage shown to the LLM.
const PASSAGE_CHARS: usize = 1200;

/// A new order of `passages` (indices into it): the LLM's ranking first, then the
/// passages it left out in their previous order. Err says why the reply was not usable.
pub(super) fn rerank(llm: &dyn PromptLlm, question: &str, passages: &[(String, String)]) -> Result<Vec<usize>, String> {
    if passages.len() < 2 {
        return Ok((0..passages.len()).collect());
    }
    let listing: Vec<String> = passages
        .iter()
        .enumerate()
        .map(|(i, (title, text))| {
            let text: String = text.chars().take(PASSAGE_CHARS).collect();
            if title.is_empty() {
                format!("[{}] {text}", i + 1)
            } else {
                format!("[{}] {title}: {text}", i + 1)
            }
        })
        .collect();
    let listing = listing.join("\n\n");
    let call = PromptCall::new("rerank", "query.multipath", &[("question", question), ("passages", &listing)])
        .json()
        .max_tokens(200);
    let reply = llm.run_one(call).map_err(|e| format!("LLM call failed: {e}"))?;
    let picked = parse_ranking(&reply, passages.len());
    if picked.is_empty() {
        return Err("the LLM reply held no passage numbers".into());
    }
    let mut order = picked;
    for i in 0..passages.len() {
        if !order.contains(&i) {
            order.push(i);
        }
    }
    Ok(order)
}

/// Passage numbers (1-based in the reply) as 0-based indices below `n`, first occurrence
/// kept.
pub(crate) fn parse_ranking(reply: &str, n: usize) -> Vec<usize> {
    let numbers = json_numbers(reply).unwrap_or_else(|| loose_numbers(reply));
    let mut out = Vec::new();
    for k in numbers {
        if (1..=n as u64).contains(&k) && !out.contains(&((k - 1) as usize)) {
            out.push((k - 1) as usize);
        }
    }
    out
}

/// Numbers from `{"ranking": [...]}` (any key holding a list) or a bare `[...]`.
fn json_numbers(reply: &str) -> Option<Vec<u64>> {
    let list = |v: &serde_json::Value| -> Option<Vec<u64>> {
        let a = v.as_array()?;
        Some(
            a.iter()
                .filter_map(|x| {
                    x.as_u64().or_else(|| x.as_str().and_then(|s| s.trim().trim_matches(['[', ']']).parse().ok()))
                })
                .collect(),
        )
    };
    if let (Some(a), Some(b)) = (reply.find('{'), reply.rfind('}')) {
        if a < b {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&reply[a..=b]) {
                if let Some(x) = v.get("ranking").and_then(list) {
                    return Some(x);
                }
                if let Some(x) = v.as_object().and_then(|o| o.values().find_map(list)) {
                    return Some(x);
                }
            }
        }
    }
    if let (Some(a), Some(b)) = (reply.find('['), reply.rfind(']')) {
        if a < b {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&reply[a..=b]) {
                return list(&v);
            }
        }
    }
    None
}

/// Every run of ASCII digits in the text, in order.
fn loose_numbers(reply: &str) -> Vec<u64> {
    reply
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty() && s.len() < 6)
        .filter_map(|s| s.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse_ranking;

    #[test]
    fn parses_untrusted_replies() {
        assert_eq!(parse_ranking(r#"{"ranking": [3, 1, 2]}"#, 3), [2, 0, 1]);
        assert_eq!(parse_ranking("Sure:\n```json\n{\"order\": [\"2\", 9, 2, 1]}\n```", 3), [1, 0]);
        assert_eq!(parse_ranking("[2, 1]", 2), [1, 0]);
        assert_eq!(parse_ranking("Passage 2 then passage 1", 2), [1, 0]);
        assert!(parse_ranking(r#"{"entities": []}"#, 3).is_empty());
        assert!(parse_ranking("", 3).is_empty());
        assert!(parse_ranking("[0, 99999999999999999999]", 3).is_empty());
    }
}
