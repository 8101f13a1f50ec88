//! Schema creation and metadata.

use rhizome_core::{Error, Result};
use rusqlite::Connection;

use super::meta::{get_meta, set_meta};
use super::sql;
use super::{aliases, communities, tags};

pub const SCHEMA_VERSION: &str = "1";

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents(
    id TEXT PRIMARY KEY, source TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS documents_source ON documents(source);
CREATE TABLE IF NOT EXISTS chunks(
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL, text TEXT NOT NULL, tokens INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ordinal);
CREATE TABLE IF NOT EXISTS entities(
    id TEXT PRIMARY KEY, name TEXT NOT NULL, entity_type TEXT NOT NULL, description TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entity_support(
    entity_id TEXT NOT NULL, doc_id TEXT NOT NULL, chunk_id TEXT, name TEXT NOT NULL,
    entity_type TEXT NOT NULL, description TEXT NOT NULL, count INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS entity_support_entity ON entity_support(entity_id);
CREATE INDEX IF NOT EXISTS entity_support_doc ON entity_support(doc_id);
CREATE INDEX IF NOT EXISTS entity_support_chunk ON entity_support(chunk_id);
CREATE TABLE IF NOT EXISTS relations(
    id TEXT PRIMARY KEY, source_id TEXT NOT NULL, target_id TEXT NOT NULL,
    rel_type TEXT NOT NULL, description TEXT NOT NULL, weight REAL NOT NULL);
CREATE INDEX IF NOT EXISTS relations_source ON relations(source_id);
CREATE INDEX IF NOT EXISTS relations_target ON relations(target_id);
CREATE TABLE IF NOT EXISTS relation_support(
    relation_id TEXT NOT NULL, doc_id TEXT NOT NULL, chunk_id TEXT, source_id TEXT NOT NULL,
    target_id TEXT NOT NULL, rel_type TEXT NOT NULL, description TEXT NOT NULL, weight REAL NOT NULL);
CREATE INDEX IF NOT EXISTS relation_support_rel ON relation_support(relation_id);
CREATE INDEX IF NOT EXISTS relation_support_doc ON relation_support(doc_id);
CREATE TABLE IF NOT EXISTS facts(
    id TEXT PRIMARY KEY, subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL,
    subject_id TEXT NOT NULL, object_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fact_support(
    fact_id TEXT NOT NULL, doc_id TEXT NOT NULL, chunk_id TEXT, subject TEXT NOT NULL,
    predicate TEXT NOT NULL, object TEXT NOT NULL, subject_id TEXT NOT NULL, object_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS fact_support_fact ON fact_support(fact_id);
CREATE INDEX IF NOT EXISTS fact_support_doc ON fact_support(doc_id);
CREATE INDEX IF NOT EXISTS fact_support_chunk ON fact_support(chunk_id);
CREATE TABLE IF NOT EXISTS similar(
    a TEXT NOT NULL, b TEXT NOT NULL, score REAL NOT NULL, doc_id TEXT NOT NULL, PRIMARY KEY(a, b));
CREATE INDEX IF NOT EXISTS similar_doc ON similar(doc_id);
CREATE TABLE IF NOT EXISTS synonyms(a TEXT NOT NULL, b TEXT NOT NULL, score REAL NOT NULL,
    PRIMARY KEY(a, b));
CREATE INDEX IF NOT EXISTS synonyms_b ON synonyms(b);
CREATE TABLE IF NOT EXISTS vectors(kind TEXT NOT NULL, id TEXT NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY(kind, id));
CREATE TABLE IF NOT EXISTS bm25_postings(term TEXT NOT NULL, chunk_rowid INTEGER NOT NULL,
    tf INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS bm25_postings_term ON bm25_postings(term);
CREATE INDEX IF NOT EXISTS bm25_postings_chunk ON bm25_postings(chunk_rowid);
CREATE TABLE IF NOT EXISTS entity_summaries(entity_id TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL, summary TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS llm_cache(key TEXT PRIMARY KEY, provider TEXT NOT NULL,
    response TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS extraction_failures(chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL,
    error TEXT NOT NULL, attempts INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS partial_documents(doc_id TEXT PRIMARY KEY, chunks_done INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS bm25_docs(chunk_rowid INTEGER PRIMARY KEY, len INTEGER NOT NULL);
"#;

/// Set pragmas, create tables, check the schema version.
pub fn prepare(conn: &Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(sql)?;
    conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(sql)?;
    // Checkpoint the WAL at 16 MB instead of SQLite's 4 MB: a batch write dirties a few
    // MB, so the default checkpointed (two fsyncs) after nearly every batch.
    conn.pragma_update(None, "wal_autocheckpoint", 4096).map_err(sql)?;
    conn.execute_batch(SCHEMA).map_err(sql)?;
    conn.execute_batch(communities::SCHEMA).map_err(sql)?;
    communities::backfill_members(conn)?;
    // Columns added after the first release: indexes made before get them on open.
    add_column(conn, "entity_support", "importance", "REAL")?;
    add_column(conn, "entities", "importance", "REAL")?;
    add_column(conn, "documents", "language", "TEXT")?;
    add_column(conn, "documents", "indexed_at", "INTEGER")?;
    // Provenance: a paged document's pages (JSON `Pagination`), a chunk's character range
    // and pages.
    add_column(conn, "documents", "pages", "TEXT")?;
    add_column(conn, "chunks", "char_start", "INTEGER NOT NULL DEFAULT 0")?;
    add_column(conn, "chunks", "char_end", "INTEGER NOT NULL DEFAULT 0")?;
    add_column(conn, "chunks", "page_first", "INTEGER")?;
    add_column(conn, "chunks", "page_last", "INTEGER")?;
    // The same content under another name: one document, the other names its aliases.
    add_column(conn, "documents", "digest", "TEXT")?;
    // What is known about a document besides its text (JSON `DocumentMeta`).
    add_column(conn, "documents", "meta", "TEXT")?;
    conn.execute_batch(aliases::SCHEMA).map_err(sql)?;
    aliases::prepare(conn)?;
    tags::prepare(conn)?;
    match get_meta(conn, "schema_version")? {
        None => set_meta(conn, "schema_version", SCHEMA_VERSION),
        Some(v) if v == SCHEMA_VERSION => Ok(()),
        Some(v) => Err(Error::Store(format!("index schema version {v}, this rhizome reads version {SCHEMA_VERSION}"))),
    }
}

/// Whether the database at `db` holds a complete schema (`schema_version` is written
/// last by [`prepare`]); read without writing anything.
pub fn is_ready(db: &std::path::Path) -> bool {
    let Ok(conn) = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return false;
    };
    matches!(get_meta(&conn, "schema_version"), Ok(Some(_)))
}

/// Add `column` to `table` unless it is there (SQLite has no ADD COLUMN IF NOT EXISTS);
/// another process adding it at the same moment is not an error.
fn add_column(conn: &Connection, table: &str, column: &str, decl: &str) -> Result<()> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info({table})")).map_err(sql)?;
    let names: Vec<String> =
        stmt.query_map([], |r| r.get::<_, String>(1)).map_err(sql)?.collect::<Result<_, _>>().map_err(sql)?;
    if !names.iter().any(|n| n == column) {
        match conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}")) {
            Err(e) if e.to_string().contains("duplicate column name") => {}
            r => r.map_err(sql)?,
        }
    }
    Ok(())
}
