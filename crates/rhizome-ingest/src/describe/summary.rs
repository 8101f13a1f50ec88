//! The extractive summary: the document's most central sentences, in the order they
//! stand.

use std::collections::HashMap;

use rhizome_core::lang::Lang;
use rhizome_core::text::{sentences, terms_in};

/// Sentences read from the start of a document at the most (a long book is summarised
/// from its beginning: time stays bounded).
const MAX_SENTENCES: usize = 4000;
/// A sentence with fewer terms than this is a heading or a fragment, not a candidate.
const MIN_TERMS: usize = 5;
/// A sentence with more terms than this is a run-on (a table, a list), not a candidate.
const MAX_TERMS: usize = 90;
/// A candidate this close (cosine of term vectors) to a chosen sentence says the same.
const REDUNDANT: f32 = 0.6;

/// The `n` most central sentences of `text` (in `lang`), in document order, joined by
/// spaces and cut at a sentence boundary before `max_chars` characters (the first
/// sentence is always kept, cut at a word if it alone is longer). Central: the cosine
/// of a sentence's tf-idf vector with the whole document's, a sentence near the start
/// favoured a little. Empty when the text has no sentence.
pub fn extractive_summary(text: &str, lang: Lang, n: usize, max_chars: usize) -> String {
    let all: Vec<&str> = sentences(text).into_iter().take(MAX_SENTENCES).map(|(_, s)| s).collect();
    if all.is_empty() || n == 0 {
        return String::new();
    }
    let bags: Vec<HashMap<String, f32>> = all.iter().map(|s| bag(lang, s)).collect();
    let mut df: HashMap<&str, f32> = HashMap::new();
    for b in &bags {
        for t in b.keys() {
            *df.entry(t.as_str()).or_default() += 1.0;
        }
    }
    let count = bags.len() as f32;
    let idf = |t: &str| (1.0 + count / df.get(t).copied().unwrap_or(1.0)).ln();
    let weighted: Vec<HashMap<&str, f32>> =
        bags.iter().map(|b| b.iter().map(|(t, tf)| (t.as_str(), tf * idf(t))).collect()).collect();
    let mut whole: HashMap<&str, f32> = HashMap::new();
    for w in &weighted {
        for (t, v) in w {
            *whole.entry(t).or_default() += v;
        }
    }
    let candidates: Vec<usize> = (0..all.len()).filter(|&i| (MIN_TERMS..=MAX_TERMS).contains(&bags[i].len())).collect();
    // A document of headings and fragments only: its first sentences are its summary.
    let pool: Vec<usize> = if candidates.is_empty() { (0..all.len()).collect() } else { candidates };
    let mut scored: Vec<(usize, f32)> = pool
        .into_iter()
        .map(|i| {
            let early = 0.1 / (1.0 + i as f32 / 5.0);
            (i, cosine(&weighted[i], &whole) + early)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut chosen: Vec<usize> = Vec::new();
    for (i, _) in scored {
        if chosen.len() >= n {
            break;
        }
        if chosen.iter().any(|&j| cosine(&weighted[i], &weighted[j]) > REDUNDANT) {
            continue;
        }
        chosen.push(i);
    }
    chosen.sort_unstable();
    let mut out = String::new();
    for i in chosen {
        let s = all[i].split_whitespace().collect::<Vec<_>>().join(" ");
        let sep = usize::from(!out.is_empty() && !joins_without_space(&out, &s));
        if out.is_empty() && s.chars().count() > max_chars {
            return cut(&s, max_chars);
        }
        if out.chars().count() + sep + s.chars().count() > max_chars {
            break;
        }
        if sep == 1 {
            out.push(' ');
        }
        out.push_str(&s);
    }
    out
}

/// Term frequencies of one sentence (a Vietnamese word's folded twin left out: it would
/// count the word twice).
fn bag(lang: Lang, sentence: &str) -> HashMap<String, f32> {
    let mut out: HashMap<String, f32> = HashMap::new();
    for t in terms_in(lang, sentence) {
        if t.chars().any(char::is_alphanumeric) {
            *out.entry(t).or_default() += 1.0;
        }
    }
    out
}

fn cosine(a: &HashMap<&str, f32>, b: &HashMap<&str, f32>) -> f32 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let dot: f32 = small.iter().filter_map(|(t, v)| large.get(t).map(|w| v * w)).sum();
    let norm = |m: &HashMap<&str, f32>| m.values().map(|v| v * v).sum::<f32>().sqrt();
    let d = norm(a) * norm(b);
    if d > 0.0 {
        dot / d
    } else {
        0.0
    }
}

/// `s` cut to at most `max` characters, at its last space before that when it has one.
fn cut(s: &str, max: usize) -> String {
    let head: String = s.chars().take(max).collect();
    match head.rfind(' ') {
        Some(i) if i > 0 => head[..i].to_string(),
        _ => head,
    }
}

/// Chinese and Japanese sentences follow each other without a space (and a sentence
/// after a Chinese full stop starts without one, whatever its script).
fn joins_without_space(before: &str, next: &str) -> bool {
    let cjk = |c: char| rhizome_core::lang::is_han(c) || ('\u{3000}'..='\u{303F}').contains(&c) || c == '\u{FF0C}';
    let last = before.chars().next_back();
    last.is_some_and(|c| "。！？".contains(c)) || (last.is_some_and(cjk) && next.chars().next().is_some_and(cjk))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_central_sentences_in_their_order() {
        let text = "Annual report.\n\nThe Halvorsen Bridge was completed in 1932 after four years of work. \
            Lunch was served at noon. The bridge crosses the fjord and carries the coast road. \
            Repairs to the bridge deck and the bridge bearings began in 2019. The weather was fine.";
        let s = extractive_summary(text, Lang::En, 2, 400);
        assert!(s.contains("Halvorsen Bridge was completed"), "{s}");
        assert!(s.contains("bridge deck") || s.contains("crosses the fjord"), "{s}");
        assert!(!s.contains("Lunch") && !s.contains("weather"), "{s}");
        let first = s.find("Halvorsen").unwrap();
        assert!(s[first..].len() < s.len() || first == 0, "document order: {s}");
        assert!(extractive_summary(text, Lang::En, 3, 80).chars().count() <= 80);
        assert_eq!(extractive_summary("", Lang::En, 3, 400), "");
    }

    #[test]
    fn chinese_sentences_join_without_spaces() {
        let text = "武汉长江大桥是长江上的第一座大桥，一九五七年建成通车。大桥连接武昌和汉阳两地的交通。\
            桥上有铁路也有公路，是武汉的重要交通设施。今天天气很好。";
        let s = extractive_summary(text, Lang::Zh, 2, 400);
        assert!(s.contains("武汉长江大桥") && !s.contains("。 "), "{s}");
    }
}
