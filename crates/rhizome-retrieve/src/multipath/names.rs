//! An in-memory index over entity names (the store has full text over chunks only):
//! BM25 over name terms and case-insensitive substring search. Built once per graph and
//! shared through [`memo`], or, when the whole graph is not held, once per graph version
//! from the entity rows ([`crate::GraphCache::name_search`]): entity numbers are the whole
//! graph's either way.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use rhizome_core::text::bm25_terms;

use crate::Graph;

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// A value derived from one graph, computed once per `Arc<Graph>` and kept while that
/// graph lives. `slot` is the caller's static cache; dead graphs are dropped from it.
pub(crate) fn memo<T: Send + Sync>(
    slot: &Mutex<Vec<(Weak<Graph>, Arc<T>)>>,
    g: &Arc<Graph>,
    build: impl FnOnce(&Graph) -> T,
) -> Arc<T> {
    let mut entries = slot.lock().unwrap_or_else(|e| e.into_inner());
    entries.retain(|(w, _)| w.strong_count() > 0);
    if let Some((_, v)) = entries.iter().find(|(w, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(g))) {
        return v.clone();
    }
    let v = Arc::new(build(g));
    entries.push((Arc::downgrade(g), v.clone()));
    v
}

/// BM25 postings and lowercased names of every entity of a graph.
pub(crate) struct NameIndex {
    /// Every lowercased name, each followed by a line break (one string: a substring
    /// search scans it once instead of starting over per name).
    haystack: String,
    /// Byte offset of each name in `haystack`, and its length in characters.
    starts: Vec<usize>,
    chars: Vec<u32>,
    postings: HashMap<String, Vec<(u32, u16)>>,
    lens: Vec<u16>,
    avg_len: f32,
}

static NAME_INDEXES: Mutex<Vec<(Weak<Graph>, Arc<NameIndex>)>> = Mutex::new(Vec::new());

impl NameIndex {
    /// The index of `g`, built on first use.
    pub(crate) fn of(g: &Arc<Graph>) -> Arc<NameIndex> {
        memo(&NAME_INDEXES, g, |g| NameIndex::new(g.entity_names.iter().map(String::as_str)))
    }

    /// Over `names`, numbered in the order given.
    pub(crate) fn new<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> NameIndex {
        let mut postings: HashMap<String, Vec<(u32, u16)>> = HashMap::new();
        let mut lens = Vec::with_capacity(names.len());
        let mut haystack = String::new();
        let mut starts = Vec::with_capacity(names.len());
        let mut chars = Vec::with_capacity(names.len());
        for (i, name) in names.enumerate() {
            let terms = bm25_terms(name);
            lens.push(terms.len().min(u16::MAX as usize) as u16);
            let mut tf: HashMap<String, u16> = HashMap::new();
            for t in terms {
                *tf.entry(t).or_default() += 1;
            }
            let mut tf: Vec<(String, u16)> = tf.into_iter().collect();
            tf.sort();
            for (t, n) in tf {
                postings.entry(t).or_default().push((i as u32, n));
            }
            let lower = name.to_lowercase().replace('\n', " ");
            starts.push(haystack.len());
            chars.push(lower.chars().count() as u32);
            haystack.push_str(&lower);
            haystack.push('\n');
        }
        let avg_len =
            if lens.is_empty() { 1.0 } else { lens.iter().map(|&l| l as f32).sum::<f32>() / lens.len() as f32 };
        NameIndex { haystack, starts, chars, postings, lens, avg_len: avg_len.max(1.0) }
    }

    /// BM25 of `query` against entity names: the best `k` as (entity, score / best score),
    /// so the top hit scores 1. Ties by entity number.
    pub(crate) fn search(&self, query: &str, k: usize) -> Vec<(u32, f32)> {
        let mut terms = bm25_terms(query);
        terms.sort();
        terms.dedup();
        let n = self.lens.len() as f32;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for t in &terms {
            let Some(list) = self.postings.get(t) else { continue };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(e, tf) in list {
                let tf = tf as f32;
                let dl = self.lens[e as usize] as f32;
                *scores.entry(e).or_default() += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / self.avg_len));
            }
        }
        normalise(top(scores.into_iter().collect(), k))
    }

    /// Entities whose name contains `needle` (case-insensitive), scored by the share of
    /// the name it covers (an exact name scores 1). Best `k`.
    pub(crate) fn substring(&self, needle: &str, k: usize) -> Vec<(u32, f32)> {
        let needle = needle.to_lowercase();
        let nlen = needle.chars().count();
        // One Latin letter or one CJK character matches nearly everything.
        let min = if needle.chars().any(rhizome_core::text::is_cjk) { 2 } else { 3 };
        if nlen < min {
            return Vec::new();
        }
        if needle.contains('\n') {
            return Vec::new();
        }
        let mut hits: Vec<(u32, f32)> = Vec::new();
        for (pos, _) in self.haystack.match_indices(needle.as_str()) {
            let e = self.starts.partition_point(|&s| s <= pos) - 1;
            if hits.last().is_some_and(|h| h.0 == e as u32) {
                continue;
            }
            hits.push((e as u32, nlen as f32 / self.chars[e].max(1) as f32));
        }
        top(hits, k)
    }
}

/// Best `k` by score, ties by number.
pub(crate) fn top(mut v: Vec<(u32, f32)>, k: usize) -> Vec<(u32, f32)> {
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(k);
    v
}

fn normalise(mut v: Vec<(u32, f32)>) -> Vec<(u32, f32)> {
    if let Some(max) = v.first().map(|x| x.1).filter(|m| *m > 0.0) {
        v.iter_mut().for_each(|x| x.1 /= max);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::{EntityRow, GraphData};

    fn graph(names: &[&str]) -> Arc<Graph> {
        let entities = names
            .iter()
            .enumerate()
            .map(|(i, n)| EntityRow { id: format!("e{i}"), name: n.to_string(), entity_type: "T".into() })
            .collect();
        Arc::new(Graph::build(GraphData { entities, ..Default::default() }))
    }

    #[test]
    fn bm25_and_substring_over_names() {
        let g = graph(&["Aage Bohr", "Niels Bohr", "Nobel Prize in Physics", "微软", "OpenAI"]);
        let ix = NameIndex::of(&g);
        assert!(Arc::ptr_eq(&ix, &NameIndex::of(&g)), "built once per graph");
        let hits = ix.search("Aage Bohr", 5);
        assert_eq!(hits[0], (0, 1.0));
        assert_eq!(hits[1].0, 1);
        assert!(hits[1].1 < 1.0);
        assert_eq!(ix.substring("bohr", 5).iter().map(|x| x.0).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(ix.substring("OPENAI", 5), [(4, 1.0)]);
        assert_eq!(ix.substring("微软", 5), [(3, 1.0)]);
        assert!(ix.substring("b", 5).is_empty());
        assert!(ix.search("", 5).is_empty());
    }
}
