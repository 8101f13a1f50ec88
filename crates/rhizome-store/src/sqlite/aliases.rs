//! The names a document arrived under and the digest of its text: content that arrives
//! again under another name is indexed once, and the new name is kept as an alias
//! ([`rhizome_core::WriteBatch::aliases`]). A name is one document's at a time.

use rhizome_core::ids::text_digest;
use rhizome_core::{Document, Result};
use rusqlite::{params, Connection, OptionalExtension};

use super::{rows, sql};

pub const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS document_aliases(source TEXT PRIMARY KEY, doc_id TEXT NOT NULL,
    seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS document_aliases_doc ON document_aliases(doc_id, seq);
"#;

/// After the `digest` column exists: its index, and the digest of every document written
/// before digests were kept.
pub fn prepare(conn: &Connection) -> Result<()> {
    conn.execute_batch("CREATE INDEX IF NOT EXISTS documents_digest ON documents(digest)").map_err(sql)?;
    let old: Vec<(String, String)> =
        rows::list(conn, "SELECT id, text FROM documents WHERE digest IS NULL", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    for (id, text) in old {
        conn.execute("UPDATE documents SET digest = ?2 WHERE id = ?1", params![id, text_digest(&text)]).map_err(sql)?;
    }
    Ok(())
}

/// Record a newly written document's digest and take its source from any document that
/// had it as an alias.
pub fn document_written(conn: &Connection, d: &Document) -> Result<()> {
    conn.execute("UPDATE documents SET digest = ?2 WHERE id = ?1", params![d.id, text_digest(&d.text)]).map_err(sql)?;
    conn.execute("DELETE FROM document_aliases WHERE source = ?1", [&d.source]).map_err(sql)?;
    Ok(())
}

/// Write `(document id, source)` aliases, each of a stored document and not its own source.
pub fn write(conn: &Connection, aliases: &[(String, String)]) -> Result<()> {
    for (doc_id, source) in aliases {
        let own: Option<String> = conn
            .query_row("SELECT source FROM documents WHERE id = ?1", [doc_id], |r| r.get(0))
            .optional()
            .map_err(sql)?;
        if own.is_none_or(|s| &s == source) {
            continue;
        }
        conn.execute(
            "INSERT INTO document_aliases(source, doc_id, seq)
             VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) + 1 FROM document_aliases))
             ON CONFLICT(source) DO UPDATE SET doc_id = excluded.doc_id, seq = excluded.seq
             WHERE doc_id <> excluded.doc_id",
            params![source, doc_id],
        )
        .map_err(sql)?;
    }
    Ok(())
}

/// Give each `(document id, name)`'s document that name as its source (see
/// [`rhizome_core::WriteBatch::renames`]).
pub fn rename(conn: &Connection, renames: &[(String, String)]) -> Result<()> {
    for (doc_id, name) in renames {
        let n = conn
            .execute(
                "UPDATE documents SET source = ?2 WHERE id = ?1
                 AND NOT EXISTS (SELECT 1 FROM documents o WHERE o.source = ?2 AND o.id <> ?1)",
                params![doc_id, name],
            )
            .map_err(sql)?;
        if n > 0 {
            conn.execute("DELETE FROM document_aliases WHERE source = ?1", [name]).map_err(sql)?;
        }
    }
    Ok(())
}

/// A document's aliases in the order they came.
pub fn of(conn: &Connection, doc_id: &str) -> Result<Vec<String>> {
    rows::list(conn, "SELECT source FROM document_aliases WHERE doc_id = ?1 ORDER BY seq", [doc_id], |r| r.get(0))
}

/// The complete document whose text has `digest`.
pub fn with_digest(conn: &Connection, digest: &str) -> Result<Option<String>> {
    conn.query_row(
        "SELECT id FROM documents d WHERE digest = ?1
         AND NOT EXISTS (SELECT 1 FROM partial_documents p WHERE p.doc_id = d.id) ORDER BY id LIMIT 1",
        [digest],
        |r| r.get(0),
    )
    .optional()
    .map_err(sql)
}

/// Every name of a document: its source, then its aliases.
pub fn sources(conn: &Connection, doc_id: &str) -> Result<Vec<String>> {
    let own: Option<String> =
        conn.query_row("SELECT source FROM documents WHERE id = ?1", [doc_id], |r| r.get(0)).optional().map_err(sql)?;
    let Some(own) = own else { return Ok(Vec::new()) };
    let mut all = vec![own];
    all.extend(of(conn, doc_id)?);
    Ok(all)
}
