//! BM25 over chunks (k1 = 1.2, b = 0.75): term rules and scoring shared by every backend,
//! so that rankings are equal (each backend keeps its own postings).
//! Terms come from [`rhizome_core::text::bm25_terms`], so Chinese, Vietnamese and English
//! are all matched.

use std::collections::HashMap;

use rhizome_core::text::bm25_terms;

// The pruned search is PostgreSQL's (SQLite's postings are small enough to read whole).
#[cfg_attr(not(feature = "postgres"), allow(dead_code, unused_imports))]
mod maxscore;
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub use maxscore::{read_all_max, set_read_all_max, top_k, PostingSource};

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Length of every indexed chunk, loaded once per store generation.
#[derive(Debug, Default)]
pub struct DocLengths {
    pub len: HashMap<i64, u32>,
    pub avg: f32,
}

impl DocLengths {
    /// From each chunk's length.
    pub fn from_map(len: HashMap<i64, u32>) -> Self {
        let total: u64 = len.values().map(|&x| x as u64).sum();
        let avg = if len.is_empty() { 1.0 } else { total as f32 / len.len() as f32 };
        DocLengths { len, avg }
    }
}

/// Version of the term rules (`rhizome_core::text::bm25_terms`) the postings were made
/// with. Raise it whenever those rules change: an index made with older rules has its
/// postings rebuilt from the stored chunks when it is opened.
pub const TERMS_VERSION: &str = "3";

/// The text indexed for a chunk: its document's title (a corpus passage's title often
/// names its subject), then the chunk.
pub fn chunk_text(title: &str, text: &str) -> String {
    if text.starts_with(title) {
        text.to_string()
    } else {
        format!("{title}\n{text}")
    }
}

/// A text's terms with their frequencies (sorted by term), and its length in terms.
pub fn term_frequencies(text: &str) -> (Vec<(String, u32)>, u32) {
    let terms = bm25_terms(text);
    let mut tf: HashMap<&str, u32> = HashMap::new();
    for t in &terms {
        *tf.entry(t.as_str()).or_default() += 1;
    }
    let mut keys: Vec<(String, u32)> = tf.into_iter().map(|(t, n)| (t.to_string(), n)).collect();
    keys.sort();
    (keys, terms.len() as u32)
}

/// The distinct terms of a query, sorted (the order postings are scored in).
pub fn query_terms(query: &str) -> Vec<String> {
    let mut terms = bm25_terms(query);
    terms.sort();
    terms.dedup();
    terms
}

/// A term's weight over `n` chunks of which `df` hold it.
fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// What one posting (`tf` occurrences in chunk `rowid`) adds to the chunk's score.
fn contribution(lengths: &DocLengths, idf: f32, rowid: i64, tf: u32) -> f32 {
    let dl = *lengths.len.get(&rowid).unwrap_or(&0) as f32;
    let tf = tf as f32;
    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / lengths.avg))
}

/// Best first, ties by rowid, at most `k`.
fn best(mut out: Vec<(i64, f32)>, k: usize) -> Vec<(i64, f32)> {
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(k);
    out
}

/// BM25 scores from the postings of each query term (in [`query_terms`] order): (chunk
/// rowid, score), best first (ties by rowid), at most `k`. Shared by every backend, so
/// that rankings are equal.
pub fn rank(lengths: &DocLengths, postings: &[Vec<(i64, u32)>], k: usize) -> Vec<(i64, f32)> {
    let n = lengths.len.len() as f32;
    let mut scores: HashMap<i64, f32> = HashMap::new();
    for postings in postings {
        if postings.is_empty() {
            continue;
        }
        let w = idf(n, postings.len() as f32);
        for &(rowid, tf) in postings {
            *scores.entry(rowid).or_default() += contribution(lengths, w, rowid, tf);
        }
    }
    best(scores.into_iter().collect(), k)
}
