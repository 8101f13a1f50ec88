//! The LLM's answer to `query_entities`: its reply parsed into names, keeping only those
//! the question contains.

use super::tokens::fold;

/// Parse the reply to `query_entities`: names separated by commas (or `;`, `、`, new
/// lines), optionally after a `Names:` label, bullets and quotes stripped; `NONE` is an
/// empty list. Names the question does not contain (compared folded) are dropped. None
/// when the reply is unusable: empty, or naming only things absent from the question.
pub(crate) fn parse_llm_names(reply: &str, question: &str) -> Option<Vec<String>> {
    let text = reply.trim();
    if text.is_empty() {
        return None;
    }
    let folded_q = fold(question);
    let mut items = Vec::new();
    for line in text.lines() {
        let mut line = line.trim();
        for label in ["names:", "entities:", "answer:", "proper nouns:"] {
            if line.get(..label.len()).is_some_and(|h| h.eq_ignore_ascii_case(label)) {
                line = line[label.len()..].trim();
            }
        }
        items.extend(line.split([',', ';', '，', '、', '；']).map(clean_item));
    }
    items.retain(|s| !s.is_empty());
    if items.len() == 1 && matches!(items[0].to_lowercase().as_str(), "none" | "none." | "no names") {
        return Some(Vec::new());
    }
    let mut out: Vec<String> = Vec::new();
    for item in &items {
        let f = fold(item);
        if f.is_empty() || item.chars().count() > 100 || !folded_q.contains(&f) {
            continue;
        }
        if !out.iter().any(|o| fold(o) == f) {
            out.push(item.clone());
        }
    }
    if out.is_empty() {
        None
    } else {
        Some(out)
    }
}

/// An item of a name list without bullets, numbering and surrounding quotes or brackets.
fn clean_item(s: &str) -> String {
    let mut t = s.trim();
    t = t.trim_start_matches(['-', '*', '•']).trim_start();
    if let Some((num, rest)) = t.split_once(['.', ')']) {
        if !num.is_empty() && num.chars().all(|c| c.is_ascii_digit()) {
            t = rest.trim_start();
        }
    }
    t.trim_matches(|c: char| "\"'`“”‘’«»[](){}<>".contains(c) || c.is_whitespace())
        .trim_end_matches('.')
        .trim()
        .to_string()
}
