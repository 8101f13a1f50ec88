//! The names a document arrived under and the digest of its text, as the SQLite store
//! keeps them (see `sqlite/aliases.rs`). The digest is computed in SQL: `'txt_'` and the
//! first 16 hex digits of the SHA-256 of the text, as [`rhizome_core::ids::text_digest`].

use postgres::GenericClient;

use super::refresh::PgResult;

/// [`rhizome_core::ids::text_digest`] of the column `text`, in SQL.
pub const DIGEST_OF_TEXT: &str = "'txt_' || left(encode(sha256(convert_to(text, 'UTF8')), 'hex'), 16)";

/// The digest column (filled for documents written before it), its index, and the
/// aliases table.
pub fn migration() -> String {
    format!(
        r#"
ALTER TABLE documents ADD COLUMN IF NOT EXISTS digest TEXT COLLATE "C";
UPDATE documents SET digest = {DIGEST_OF_TEXT} WHERE digest IS NULL;
CREATE INDEX IF NOT EXISTS documents_digest ON documents(digest);
CREATE TABLE IF NOT EXISTS document_aliases(source TEXT COLLATE "C" PRIMARY KEY,
    doc_id TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS document_aliases_doc ON document_aliases(doc_id, seq);
"#
    )
}

/// After documents `ids` were inserted: their digests, and their sources taken from any
/// document that had them as aliases.
pub fn documents_written(c: &mut impl GenericClient, ids: &[&str]) -> PgResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    c.execute(&format!("UPDATE documents SET digest = {DIGEST_OF_TEXT} WHERE id = ANY($1)"), &[&ids])?;
    c.execute(
        "DELETE FROM document_aliases WHERE source IN (SELECT source FROM documents WHERE id = ANY($1))",
        &[&ids],
    )?;
    Ok(())
}

/// Write `(document id, source)` aliases, each of a stored document and not its own source.
pub fn write(c: &mut impl GenericClient, aliases: &[(String, String)]) -> PgResult<()> {
    for (doc_id, source) in aliases {
        c.execute(
            "INSERT INTO document_aliases(source, doc_id, seq)
             SELECT $2, $1, (SELECT coalesce(max(seq), 0) + 1 FROM document_aliases)
             WHERE EXISTS (SELECT 1 FROM documents WHERE id = $1 AND source <> $2)
             ON CONFLICT (source) DO UPDATE SET doc_id = excluded.doc_id, seq = excluded.seq
             WHERE document_aliases.doc_id <> excluded.doc_id",
            &[doc_id, source],
        )?;
    }
    Ok(())
}

/// Give each `(document id, name)`'s document that name as its source (see
/// [`rhizome_core::WriteBatch::renames`]).
pub fn rename(c: &mut impl GenericClient, renames: &[(String, String)]) -> PgResult<()> {
    for (doc_id, name) in renames {
        let n = c.execute(
            "UPDATE documents SET source = $2 WHERE id = $1
             AND NOT EXISTS (SELECT 1 FROM documents o WHERE o.source = $2 AND o.id <> $1)",
            &[doc_id, name],
        )?;
        if n > 0 {
            c.execute("DELETE FROM document_aliases WHERE source = $1", &[name])?;
        }
    }
    Ok(())
}

/// A document's aliases in the order they came.
pub fn of(c: &mut impl GenericClient, doc_id: &str) -> PgResult<Vec<String>> {
    Ok(c.query("SELECT source FROM document_aliases WHERE doc_id = $1 ORDER BY seq", &[&doc_id])?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// The complete document whose text has `digest`.
pub fn with_digest(c: &mut impl GenericClient, digest: &str) -> PgResult<Option<String>> {
    Ok(c.query_opt(
        "SELECT id FROM documents d WHERE digest = $1
         AND NOT EXISTS (SELECT 1 FROM partial_documents p WHERE p.doc_id = d.id) ORDER BY id LIMIT 1",
        &[&digest],
    )?
    .map(|r| r.get(0)))
}

/// Every name of a document: its source, then its aliases.
pub fn sources(c: &mut impl GenericClient, doc_id: &str) -> PgResult<Vec<String>> {
    let Some(own) = c.query_opt("SELECT source FROM documents WHERE id = $1", &[&doc_id])? else {
        return Ok(Vec::new());
    };
    let mut all = vec![own.get::<_, String>(0)];
    all.extend(of(c, doc_id)?);
    Ok(all)
}
