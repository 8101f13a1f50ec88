//! BM25 over chunks (k1 = 1.2, b = 0.75), with an inverted index in SQLite.
//! Terms come from [`rhizome_core::text::bm25_terms`], so Chinese, Vietnamese and English
//! are all matched.

use std::collections::HashMap;

use rhizome_core::{text::bm25_terms, Result, Scored};
use rusqlite::{params, Connection};

use crate::sql;

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

    pub fn load(conn: &Connection) -> Result<Self> {
        let mut stmt = conn.prepare("SELECT chunk_rowid, len FROM bm25_docs").map_err(sql)?;
        let len: HashMap<i64, u32> = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, u32>(1)?)))
            .map_err(sql)?
            .collect::<Result<_, _>>()
            .map_err(sql)?;
        let total: u64 = len.values().map(|&x| x as u64).sum();
        let avg = if len.is_empty() { 1.0 } else { total as f32 / len.len() as f32 };
        Ok(DocLengths { len, avg })
    }
}

/// Version of the term rules (`rhizome_core::text::bm25_terms`) the postings were made
/// with. Raise it whenever those rules change: an index made with older rules has its
/// postings rebuilt from the stored chunks when it is opened.
pub const TERMS_VERSION: &str = "3";

/// The text indexed for a chunk: its document's title (a corpus passage's title often
/// names its subject), then the chunk.
pub fn chunk_text(title: &str, text: &str) -> String {
    if text.starts_with(title) { text.to_string() } else { format!("{title}\n{text}") }
}

/// Rebuild every posting when the index was made with other term rules. Runs in one
/// transaction; the chunks themselves are untouched.
pub fn ensure_current(conn: &Connection) -> Result<bool> {
    if crate::schema::get_meta(conn, "bm25_terms")?.as_deref() == Some(TERMS_VERSION) {
        return Ok(false);
    }
    conn.execute_batch("BEGIN IMMEDIATE").map_err(sql)?;
    let run = || -> Result<()> {
        conn.execute("DELETE FROM bm25_postings", []).map_err(sql)?;
        conn.execute("DELETE FROM bm25_docs", []).map_err(sql)?;
        let rows: Vec<(i64, String, String)> = {
            let mut stmt = conn
                .prepare(
                    "SELECT c.rowid, d.title, c.text FROM chunks c
                     JOIN documents d ON d.id = c.doc_id ORDER BY c.rowid",
                )
                .map_err(sql)?;
            let v = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(sql)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(sql)?;
            v
        };
        for (rowid, title, text) in rows {
            index_chunk(conn, rowid, &chunk_text(&title, &text))?;
        }
        crate::schema::set_meta(conn, "bm25_terms", TERMS_VERSION)
    };
    match run() {
        Ok(()) => conn.execute_batch("COMMIT").map_err(sql)?,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e);
        }
    }
    Ok(true)
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

/// Add one chunk's postings.
pub fn index_chunk(conn: &Connection, rowid: i64, text: &str) -> Result<()> {
    let (keys, len) = term_frequencies(text);
    let mut ins = conn
        .prepare_cached("INSERT INTO bm25_postings(term, chunk_rowid, tf) VALUES (?1, ?2, ?3)")
        .map_err(sql)?;
    for (term, n) in keys {
        ins.execute(params![term, rowid, n]).map_err(sql)?;
    }
    conn.execute(
        "INSERT OR REPLACE INTO bm25_docs(chunk_rowid, len) VALUES (?1, ?2)",
        params![rowid, len],
    )
    .map_err(sql)?;
    Ok(())
}

/// Remove one chunk's postings.
pub fn unindex_chunk(conn: &Connection, rowid: i64) -> Result<()> {
    conn.execute("DELETE FROM bm25_postings WHERE chunk_rowid = ?1", [rowid]).map_err(sql)?;
    conn.execute("DELETE FROM bm25_docs WHERE chunk_rowid = ?1", [rowid]).map_err(sql)?;
    Ok(())
}

/// The distinct terms of a query, sorted (the order postings are scored in).
pub fn query_terms(query: &str) -> Vec<String> {
    let mut terms = bm25_terms(query);
    terms.sort();
    terms.dedup();
    terms
}

/// Score chunks for `query`; returns (chunk rowid, score), best first, at most `k`.
pub fn search(conn: &Connection, lengths: &DocLengths, query: &str, k: usize)
    -> Result<Vec<(i64, f32)>> {
    let mut stmt = conn
        .prepare_cached("SELECT chunk_rowid, tf FROM bm25_postings WHERE term = ?1")
        .map_err(sql)?;
    let mut postings = Vec::new();
    for term in &query_terms(query) {
        let p: Vec<(i64, u32)> = stmt
            .query_map([term], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql)?
            .collect::<Result<_, _>>()
            .map_err(sql)?;
        postings.push(p);
    }
    Ok(rank(lengths, &postings, k))
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
        let df = postings.len() as f32;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for &(rowid, tf) in postings {
            let dl = *lengths.len.get(&rowid).unwrap_or(&0) as f32;
            let tf = tf as f32;
            let s = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / lengths.avg));
            *scores.entry(rowid).or_default() += s;
        }
    }
    let mut out: Vec<(i64, f32)> = scores.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(k);
    out
}

/// Map rowids to chunk ids, keeping order. A chunk deleted since its postings were read
/// (another process's delete committed between the two reads) is left out, not an error:
/// under 16 clients uploading and deleting, the "no rows" error reached a query as a 500.
pub fn to_scored(conn: &Connection, hits: Vec<(i64, f32)>) -> Result<Vec<Scored>> {
    use rusqlite::OptionalExtension;
    let mut stmt = conn.prepare_cached("SELECT id FROM chunks WHERE rowid = ?1").map_err(sql)?;
    let mut out = Vec::with_capacity(hits.len());
    for (rowid, score) in hits {
        if let Some(id) = stmt.query_row([rowid], |r| r.get::<_, String>(0)).optional().map_err(sql)? {
            out.push(Scored { id, score });
        }
    }
    Ok(out)
}
