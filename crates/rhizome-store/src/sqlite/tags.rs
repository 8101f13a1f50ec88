//! The document index (`document_tags`): (document, key, value) rows from each document's
//! language, date and metadata ([`rhizome_core::filter::doc_tags`]), written with the
//! document and its metadata and removed with it, read by (key, value) range; and the
//! reads of a document's names and of support rows that a filter's scope makes.

use rhizome_core::filter::doc_tags;
use rhizome_core::{Result, SupportRows};
use rusqlite::{params, Connection};

use super::meta::{get_meta, set_meta};
use super::{rows, sql};

pub const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS document_tags(key TEXT NOT NULL, value TEXT NOT NULL, doc_id TEXT NOT NULL,
    PRIMARY KEY(key, value, doc_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS document_tags_doc ON document_tags(doc_id);
"#;

/// The meta key saying every document's rows are written (an index made before the
/// table gets them on open).
const FILLED: &str = "document_tags";

/// Create the table; fill it from the stored documents once.
pub fn prepare(conn: &Connection) -> Result<()> {
    conn.execute_batch(SCHEMA).map_err(sql)?;
    if get_meta(conn, FILLED)?.is_some() {
        return Ok(());
    }
    let ids: Vec<String> = rows::list(conn, "SELECT id FROM documents", [], |r| r.get(0))?;
    retag(conn, ids.iter().map(String::as_str))?;
    set_meta(conn, FILLED, "1")
}

/// Write again the index rows of `doc_ids` from their stored rows (none for a document
/// that is gone).
pub fn retag<'a>(conn: &Connection, doc_ids: impl IntoIterator<Item = &'a str>) -> Result<()> {
    let mut del = conn.prepare_cached("DELETE FROM document_tags WHERE doc_id = ?1").map_err(sql)?;
    let mut read =
        conn.prepare_cached("SELECT language, indexed_at, meta FROM documents WHERE id = ?1").map_err(sql)?;
    let mut ins = conn
        .prepare_cached("INSERT OR IGNORE INTO document_tags(key, value, doc_id) VALUES (?1, ?2, ?3)")
        .map_err(sql)?;
    for id in doc_ids {
        del.execute([id]).map_err(sql)?;
        let found: Vec<(Option<String>, Option<i64>, Option<String>)> = read
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sql)?
            .collect::<rusqlite::Result<_>>()
            .map_err(sql)?;
        for (lang, at, meta) in found {
            let meta = crate::meta_from_json(meta);
            for (k, v) in doc_tags(lang.as_deref(), at.map(|t| t.max(0) as u64), &meta) {
                ins.execute(params![k, v, id]).map_err(sql)?;
            }
        }
    }
    Ok(())
}

/// [`rhizome_core::StoreRead::tagged_documents`].
pub fn tagged(conn: &Connection, key: &str, from: &str, to: Option<&str>) -> Result<Vec<String>> {
    let mut ids: Vec<String> = match to {
        Some(to) => rows::list(
            conn,
            "SELECT doc_id FROM document_tags WHERE key = ?1 AND value >= ?2 AND value < ?3",
            params![key, from, to],
            |r| r.get(0),
        )?,
        None => rows::list(
            conn,
            "SELECT doc_id FROM document_tags WHERE key = ?1 AND value >= ?2",
            params![key, from],
            |r| r.get(0),
        )?,
    };
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// [`rhizome_core::StoreRead::document_names`]: through the indexes on `documents.source`
/// and on the aliases' names.
pub fn names(conn: &Connection, prefix: &str) -> Result<Vec<(String, String)>> {
    let (lo, hi) = (prefix.to_string(), format!("{prefix}\u{10ffff}"));
    let q = "SELECT id, source FROM documents WHERE source >= ?1 AND source < ?2
             UNION ALL SELECT doc_id, source FROM document_aliases WHERE source >= ?1 AND source < ?2";
    rows::list(conn, q, params![lo, hi], |r| Ok((r.get(0)?, r.get(1)?)))
}

/// [`rhizome_core::StoreRead::support_rows`].
pub fn support_rows(conn: &Connection, entity_ids: &[String], relation_ids: &[String]) -> Result<SupportRows> {
    let mut mentions = Vec::new();
    let q = "SELECT entity_id, name, entity_type, description, doc_id, chunk_id, count, importance
             FROM entity_support WHERE entity_id = ?1 ORDER BY rowid";
    for id in entity_ids {
        mentions.extend(rows::all(conn, q, [id], rows::mention_row)?);
    }
    let mut relations = Vec::new();
    let q = "SELECT relation_id, source_id, target_id, rel_type, description, weight, doc_id, chunk_id
             FROM relation_support WHERE relation_id = ?1 ORDER BY rowid";
    for id in relation_ids {
        relations.extend(rows::all(conn, q, [id], rows::relation_support_row)?);
    }
    Ok((mentions, relations))
}
