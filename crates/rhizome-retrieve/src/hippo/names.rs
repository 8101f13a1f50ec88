//! Question spans linked to entity nodes by exact name, for `hippo` without an LLM: the
//! names the question spells out ("the Green performer", "Lionel Messi's father") are
//! the surest anchors there are, surer than facts matched by embedding alone.
//!
//! Spans are runs of up to [`MAX_SPAN`] whitespace-separated words of the question that
//! begin and end with a capitalised word (names, not the question's common nouns), outer
//! punctuation trimmed and a possessive `'s` dropped, compared through the same name normalisation that
//! merges entities at indexing time ([`entity_id`]). The longest span wins, left to
//! right; a span made of stop words only links nothing.

use rhizome_core::ids::entity_id;
use rhizome_core::text::is_stop_word;

use crate::graph::Graph;

/// Longest span tried, in words.
pub(crate) const MAX_SPAN: usize = 6;

/// The entity nodes whose names the question contains, each once, in question order.
pub(crate) fn name_matches(graph: &Graph, question: &str) -> Vec<u32> {
    matches_by(question, |id| graph.entity(id))
}

/// The entity ids [`matches_by`] may look up for `question` (each once): a reader without
/// the graph reads which of them exist, then matches against those.
pub(crate) fn name_candidates(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    spans(question, |span| {
        for id in span_ids(span) {
            if !out.contains(&id) {
                out.push(id);
            }
        }
        false
    });
    out
}

/// The entities (as `find` gives them from an entity id) whose names the question
/// contains, each once, in question order: the longest span wins, left to right.
pub(crate) fn matches_by<T: PartialEq>(question: &str, find: impl Fn(&str) -> Option<T>) -> Vec<T> {
    let mut found: Vec<T> = Vec::new();
    spans(question, |span| match span_ids(span).into_iter().find_map(|id| find(&id)) {
        Some(e) => {
            if !found.contains(&e) {
                found.push(e);
            }
            true
        }
        None => false,
    });
    found
}

/// The entity ids a name span is looked up under: the span, and the span without a
/// leading "The".
fn span_ids(span: &str) -> Vec<String> {
    let without_article = span.strip_prefix("The ").unwrap_or(span);
    let mut ids = vec![entity_id(span)];
    if without_article != span {
        ids.push(entity_id(without_article));
    }
    ids
}

/// Walk the question's name spans, longest first at each word; `take` says whether a
/// span linked (then the walk goes on after it).
fn spans(question: &str, mut take: impl FnMut(&str) -> bool) {
    let words: Vec<(usize, usize)> = word_bounds(question);
    let mut i = 0;
    while i < words.len() {
        let mut step = 1;
        for len in (1..=MAX_SPAN.min(words.len() - i)).rev() {
            let span = clean(&question[words[i].0..words[i + len - 1].1]);
            if is_name(span) && take(span) {
                step = len;
                break;
            }
        }
        i += step;
    }
}

/// Byte ranges of the whitespace-separated words of `text`.
fn word_bounds(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

/// A span that reads as a name: its first and last words start with a capital letter or
/// a digit, and not every word is a stop word ("When", "The").
fn is_name(span: &str) -> bool {
    let words: Vec<&str> = span.split_whitespace().collect();
    let capital = |w: &&str| w.chars().next().is_some_and(|c| c.is_uppercase() || c.is_ascii_digit());
    match (words.first(), words.last()) {
        (Some(first), Some(last)) => {
            capital(first) && capital(last) && !words.iter().all(|w| is_stop_word(&w.to_lowercase()))
        }
        _ => false,
    }
}

/// A span without surrounding punctuation or a trailing possessive.
fn clean(span: &str) -> &str {
    let w = span.trim_matches(|c: char| !c.is_alphanumeric());
    let w = w.strip_suffix("'s").or_else(|| w.strip_suffix("\u{2019}s")).unwrap_or(w);
    w.trim_matches(|c: char| !c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::{clean, is_name};

    #[test]
    fn names_are_capitalised_spans() {
        assert!(is_name("Hello Love"));
        assert!(is_name("Johnnycake, West Virginia"));
        assert!(!is_name("When"));
        assert!(!is_name("owned"));
        assert!(!is_name("Who was"));
    }

    #[test]
    fn words_lose_punctuation_and_possessives() {
        assert_eq!(clean("Messi's"), "Messi");
        assert_eq!(clean("(Paris),"), "Paris");
        assert_eq!(clean("born?"), "born");
        assert_eq!(clean("?"), "");
    }
}
