//! BM25 postings in SQLite (`bm25_postings`, `bm25_docs`), scored by [`crate::bm25`].

use std::collections::HashMap;

use rhizome_core::{Result, Scored};
use rusqlite::{params, Connection, OptionalExtension};

use super::{meta, sql};
use crate::bm25::{chunk_text, query_terms, rank, term_frequencies, DocLengths, TERMS_VERSION};

/// Every indexed chunk's length.
pub fn lengths(conn: &Connection) -> Result<DocLengths> {
    let mut stmt = conn.prepare("SELECT chunk_rowid, len FROM bm25_docs").map_err(sql)?;
    let len: HashMap<i64, u32> = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, u32>(1)?)))
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    Ok(DocLengths::from_map(len))
}

/// Rebuild every posting when the index was made with other term rules. Runs in one
/// transaction; the chunks themselves are untouched.
pub fn ensure_current(conn: &Connection) -> Result<bool> {
    if meta::get_meta(conn, "bm25_terms")?.as_deref() == Some(TERMS_VERSION) {
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
        meta::set_meta(conn, "bm25_terms", TERMS_VERSION)
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

/// Add one chunk's postings.
pub fn index_chunk(conn: &Connection, rowid: i64, text: &str) -> Result<()> {
    let (keys, len) = term_frequencies(text);
    let mut ins =
        conn.prepare_cached("INSERT INTO bm25_postings(term, chunk_rowid, tf) VALUES (?1, ?2, ?3)").map_err(sql)?;
    for (term, n) in keys {
        ins.execute(params![term, rowid, n]).map_err(sql)?;
    }
    conn.execute("INSERT OR REPLACE INTO bm25_docs(chunk_rowid, len) VALUES (?1, ?2)", params![rowid, len])
        .map_err(sql)?;
    Ok(())
}

/// Remove one chunk's postings.
pub fn unindex_chunk(conn: &Connection, rowid: i64) -> Result<()> {
    conn.execute("DELETE FROM bm25_postings WHERE chunk_rowid = ?1", [rowid]).map_err(sql)?;
    conn.execute("DELETE FROM bm25_docs WHERE chunk_rowid = ?1", [rowid]).map_err(sql)?;
    Ok(())
}

/// Score chunks for `query`; returns (chunk rowid, score), best first, at most `k`.
pub fn search(conn: &Connection, lengths: &DocLengths, query: &str, k: usize) -> Result<Vec<(i64, f32)>> {
    let mut stmt = conn.prepare_cached("SELECT chunk_rowid, tf FROM bm25_postings WHERE term = ?1").map_err(sql)?;
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

/// Map rowids to chunk ids, keeping order. A chunk deleted since its postings were read
/// (another process's delete committed between the two reads) is left out, not an error:
/// under 16 clients uploading and deleting, the "no rows" error reached a query as a 500.
pub fn to_scored(conn: &Connection, hits: Vec<(i64, f32)>) -> Result<Vec<Scored>> {
    let mut stmt = conn.prepare_cached("SELECT id FROM chunks WHERE rowid = ?1").map_err(sql)?;
    let mut out = Vec::with_capacity(hits.len());
    for (rowid, score) in hits {
        if let Some(id) = stmt.query_row([rowid], |r| r.get::<_, String>(0)).optional().map_err(sql)? {
            out.push(Scored { id, score });
        }
    }
    Ok(out)
}
