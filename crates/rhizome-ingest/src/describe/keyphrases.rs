//! Hashtags without an LLM: the document's entities ranked by TextRank over the graph of
//! entities mentioned in the same chunk, each started from how often it is mentioned.

use std::collections::{BTreeMap, HashMap};

use rhizome_core::MentionRecord;

/// Damping of the random walk (the share of each step that follows an edge).
const DAMPING: f32 = 0.85;
const ITERATIONS: usize = 30;
/// A keyphrase longer than this many characters is a sentence, not a tag.
const MAX_CHARS: usize = 40;

/// The `n` most central entity names of one document's `mentions` (entity names are the
/// noun phrases the extractor found: words of the document's language, a Chinese name
/// a segmented word), best first, as they tell what the document `text` is about. Left
/// out: a name of fewer than two letters, one mostly of digits (a date, a number), one
/// the text uses as a label (`Subject:`, a spreadsheet's column name), a single word seen
/// only at the start of sentences (a capital there says nothing), and one contained in a
/// better name ("Bridge" after "Halvorsen Bridge").
pub fn hashtags(mentions: &[MentionRecord], text: &str, n: usize) -> Vec<String> {
    // Entities in a stable order, with their names, mention counts and chunks.
    let mut entities: BTreeMap<&str, (&str, f32)> = BTreeMap::new();
    let mut by_chunk: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for m in mentions {
        let e = entities.entry(m.entity_id.as_str()).or_insert((m.name.as_str(), 0.0));
        e.1 += m.count.max(1) as f32;
        let chunk = m.chunk_id.as_deref().unwrap_or("");
        let list = by_chunk.entry(chunk).or_default();
        if !list.contains(&m.entity_id.as_str()) {
            list.push(m.entity_id.as_str());
        }
    }
    let ids: Vec<&str> = entities.keys().copied().collect();
    let index: HashMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut edges: Vec<HashMap<usize, f32>> = vec![HashMap::new(); ids.len()];
    for list in by_chunk.values() {
        // A chunk naming very many entities (a table) links each to its neighbours in the
        // list only, keeping the work linear.
        let window = if list.len() > 40 { 5 } else { list.len() };
        for (i, a) in list.iter().enumerate() {
            for b in list.iter().skip(i + 1).take(window) {
                let (x, y) = (index[a], index[b]);
                *edges[x].entry(y).or_default() += 1.0;
                *edges[y].entry(x).or_default() += 1.0;
            }
        }
    }
    let total: f32 = entities.values().map(|e| e.1).sum::<f32>().max(1.0);
    let start: Vec<f32> = ids.iter().map(|id| entities[id].1 / total).collect();
    let out_weight: Vec<f32> = edges.iter().map(|e| e.values().sum()).collect();
    let mut rank = start.clone();
    for _ in 0..ITERATIONS {
        let mut next: Vec<f32> = start.iter().map(|s| (1.0 - DAMPING) * s).collect();
        for (x, e) in edges.iter().enumerate() {
            if out_weight[x] == 0.0 {
                // No neighbours: its walk goes back to where walks start.
                for (y, s) in start.iter().enumerate() {
                    next[y] += DAMPING * rank[x] * s;
                }
                continue;
            }
            for (&y, w) in e {
                next[y] += DAMPING * rank[x] * w / out_weight[x];
            }
        }
        rank = next;
    }
    // A phrase or a name tells more than a common word ("Halvorsen Bridge", "DER" before
    // "structure"): a single lower-case word counts half, each further word a quarter more.
    let telling: Vec<f32> = ids.iter().zip(&rank).map(|(id, r)| r * specificity(entities[id].0)).collect();
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by(|&a, &b| telling[b].total_cmp(&telling[a]).then(ids[a].cmp(ids[b])));
    let mut chosen: Vec<String> = Vec::new();
    for i in order {
        if chosen.len() >= n {
            break;
        }
        let name = tidy(entities[ids[i]].0);
        if !is_tag(&name) || !tells(&name, text) {
            continue;
        }
        let folded = name.to_lowercase();
        if chosen.iter().any(|c| c.to_lowercase().contains(&folded) || folded.contains(&c.to_lowercase())) {
            continue;
        }
        chosen.push(name);
    }
    chosen
}

fn specificity(name: &str) -> f32 {
    let words = name.split_whitespace().count().max(1);
    let common = words == 1 && !name.chars().any(rhizome_core::lang::is_han) && !name.chars().any(char::is_uppercase);
    if common {
        0.5
    } else {
        (1.0 + 0.25 * (words - 1) as f32).min(1.5)
    }
}

/// Words an extractor sometimes leaves at the end of a name ("Inspection Record The").
const TRAILING: &[&str] = &["The", "A", "An", "Of", "And", "In", "On"];

/// `name` with its white space folded and a trailing article or preposition dropped.
fn tidy(name: &str) -> String {
    let mut words: Vec<&str> = name.split_whitespace().collect();
    while words.len() > 1 && words.last().is_some_and(|w| TRAILING.contains(w)) {
        words.pop();
    }
    words.join(" ")
}

/// Whether `name` can be a tag: two letters or more (two Chinese characters: one alone
/// is rarely a word that tells), mostly letters, not too long.
fn is_tag(name: &str) -> bool {
    let letters = name.chars().filter(|c| c.is_alphabetic()).count();
    let others = name.chars().filter(|c| !c.is_alphabetic() && !c.is_whitespace()).count();
    letters > 1 && letters > others && name.chars().count() <= MAX_CHARS
}

/// Occurrences of a name looked at, at the most.
const LOOK: usize = 200;

/// Whether `text` uses `name` as a topic: not mostly as a label (followed by `:`), and,
/// for a single word of a spaced script, somewhere other than a sentence's start.
fn tells(name: &str, text: &str) -> bool {
    let (mut seen, mut labels, mut inside) = (0usize, 0usize, false);
    for (at, _) in text.match_indices(name).take(LOOK) {
        seen += 1;
        let after = text[at + name.len()..].trim_start_matches([' ', '\t']);
        if after.starts_with(':') {
            labels += 1;
        }
        let before = text[..at].trim_end_matches([' ', '\t']);
        // Next to Chinese, a capital is the name's own, wherever it stands.
        let in_chinese = after.starts_with(rhizome_core::lang::is_han)
            || before.ends_with(|c: char| rhizome_core::lang::is_han(c) || "。！？，、".contains(c));
        if in_chinese
            || (!before.is_empty() && !before.ends_with(['.', '!', '?', ':', '\n', '"', '\'', '(', '-', '*', '#']))
        {
            inside = true;
        }
    }
    let one_spaced_word = !name.contains(' ') && !name.chars().any(rhizome_core::lang::is_han);
    seen > 0 && labels * 2 <= seen && (inside || !one_spaced_word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(entity: &str, chunk: &str, count: u32) -> MentionRecord {
        MentionRecord {
            entity_id: format!("ent_{entity}"),
            name: entity.to_string(),
            entity_type: "ENTITY".into(),
            description: String::new(),
            doc_id: "doc_1".into(),
            chunk_id: Some(chunk.to_string()),
            count,
            importance: None,
        }
    }

    #[test]
    fn the_most_connected_and_mentioned_entities_first() {
        let mentions = vec![
            m("Halvorsen Bridge", "c1", 3),
            m("Kristiansund", "c1", 1),
            m("Halvorsen Bridge", "c2", 2),
            m("Bridge", "c2", 1),
            m("1932", "c2", 1),
            m("Nordlys", "c3", 1),
            m("Kristiansund", "c3", 1),
            m("x", "c3", 4),
        ];
        let text = "Harbour report. Kristiansund\nThe Halvorsen Bridge in Kristiansund was finished in 1932. \
            The Bridge is long. Nordlys called at Kristiansund. x";
        let tags = hashtags(&mentions, text, 3);
        assert_eq!(tags[0], "Halvorsen Bridge", "{tags:?}");
        assert!(tags.contains(&"Kristiansund".to_string()), "{tags:?}");
        assert!(!tags.iter().any(|t| t == "Bridge" || t == "1932" || t == "x"), "{tags:?}");
        assert!(hashtags(&[], text, 5).is_empty());
        // A label, a date, a sentence's first word and a trailing article are not tags.
        let mentions = vec![
            m("Subject", "c1", 5),
            m("3 Mar 2026", "c1", 5),
            m("Hội", "c1", 5),
            m("Cầu Long Biên", "c1", 1),
            m("Inspection Record The", "c1", 1),
        ];
        let text = "Subject: bridges\nDate: 3 Mar 2026\nHội đồng họp. Cầu Long Biên được khánh thành. An Inspection Record The end.";
        assert_eq!(hashtags(&mentions, text, 5), vec!["Cầu Long Biên".to_string(), "Inspection Record".to_string()]);
    }

    #[test]
    fn chinese_names_are_tags() {
        let text = "武汉长江大桥连接汉阳和武昌。";
        let tags =
            hashtags(&[m("武汉长江大桥", "c1", 2), m("长江", "c1", 1), m("汉", "c2", 1), m("汉阳", "c2", 1)], text, 5);
        assert_eq!(tags, vec!["武汉长江大桥".to_string(), "汉阳".to_string()]);
    }
}
