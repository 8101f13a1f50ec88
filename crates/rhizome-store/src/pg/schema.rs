//! Tables, metadata and versions. Every text column compares bytewise (`COLLATE "C"`),
//! as SQLite does, so that every ORDER BY (and so every tie) is the same on both stores
//! whatever the database's own collation.

use postgres::GenericClient;
use rhizome_core::{Error, Result};

use super::{pg_err, PgUrl};

pub const SCHEMA_VERSION: &str = "1";

/// Key of the transaction advisory lock schema creation runs under.
pub(crate) const SCHEMA_LOCK: i64 = 0x7268_697a_6f6d_6501;

/// `T` stands for a bytewise-compared text column.
const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS meta(key T PRIMARY KEY, value T NOT NULL);
CREATE TABLE IF NOT EXISTS documents(id T PRIMARY KEY, source T NOT NULL, title T NOT NULL,
    text T NOT NULL, language T, indexed_at BIGINT, pages T, meta T);
CREATE INDEX IF NOT EXISTS documents_source ON documents(source);
CREATE INDEX IF NOT EXISTS documents_title ON documents(title, id);
CREATE TABLE IF NOT EXISTS chunks(rowid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id T NOT NULL UNIQUE, doc_id T NOT NULL, ordinal INT NOT NULL, text T NOT NULL, tokens INT NOT NULL,
    char_start INT NOT NULL DEFAULT 0, char_end INT NOT NULL DEFAULT 0, page_first INT, page_last INT);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ordinal);
CREATE TABLE IF NOT EXISTS entities(id T PRIMARY KEY, name T NOT NULL, entity_type T NOT NULL,
    description T NOT NULL, importance DOUBLE PRECISION);
CREATE TABLE IF NOT EXISTS entity_support(seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entity_id T NOT NULL, doc_id T NOT NULL, chunk_id T, name T NOT NULL, entity_type T NOT NULL,
    description T NOT NULL, count INT NOT NULL, importance DOUBLE PRECISION);
CREATE INDEX IF NOT EXISTS entity_support_entity ON entity_support(entity_id);
CREATE INDEX IF NOT EXISTS entity_support_doc ON entity_support(doc_id);
CREATE INDEX IF NOT EXISTS entity_support_chunk ON entity_support(chunk_id);
CREATE TABLE IF NOT EXISTS relations(seq BIGINT GENERATED ALWAYS AS IDENTITY, id T PRIMARY KEY, source_id T NOT NULL, target_id T NOT NULL,
    rel_type T NOT NULL, description T NOT NULL, weight DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS relations_source ON relations(source_id);
CREATE INDEX IF NOT EXISTS relations_target ON relations(target_id);
CREATE TABLE IF NOT EXISTS relation_support(seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    relation_id T NOT NULL, doc_id T NOT NULL, chunk_id T, source_id T NOT NULL, target_id T NOT NULL,
    rel_type T NOT NULL, description T NOT NULL, weight DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS relation_support_rel ON relation_support(relation_id);
CREATE INDEX IF NOT EXISTS relation_support_doc ON relation_support(doc_id);
CREATE TABLE IF NOT EXISTS facts(id T PRIMARY KEY, subject T NOT NULL, predicate T NOT NULL,
    object T NOT NULL, subject_id T NOT NULL, object_id T NOT NULL);
CREATE TABLE IF NOT EXISTS fact_support(seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fact_id T NOT NULL, doc_id T NOT NULL, chunk_id T, subject T NOT NULL, predicate T NOT NULL,
    object T NOT NULL, subject_id T NOT NULL, object_id T NOT NULL);
CREATE INDEX IF NOT EXISTS fact_support_fact ON fact_support(fact_id);
CREATE INDEX IF NOT EXISTS fact_support_doc ON fact_support(doc_id);
-- SIMILAR_TO edges (`similar` is a keyword in PostgreSQL).
CREATE TABLE IF NOT EXISTS similar_chunks(a T NOT NULL, b T NOT NULL, score DOUBLE PRECISION NOT NULL,
    doc_id T NOT NULL, PRIMARY KEY(a, b));
CREATE INDEX IF NOT EXISTS similar_doc ON similar_chunks(doc_id);
CREATE TABLE IF NOT EXISTS synonyms(a T NOT NULL, b T NOT NULL, score DOUBLE PRECISION NOT NULL,
    PRIMARY KEY(a, b));
CREATE INDEX IF NOT EXISTS synonyms_b ON synonyms(b);
CREATE TABLE IF NOT EXISTS vectors(kind T NOT NULL, id T NOT NULL, vec vector NOT NULL,
    PRIMARY KEY(kind, id));
CREATE TABLE IF NOT EXISTS bm25_postings(term T NOT NULL, chunk_rowid BIGINT NOT NULL, tf INT NOT NULL);
CREATE INDEX IF NOT EXISTS bm25_postings_term_chunk ON bm25_postings(term, chunk_rowid) INCLUDE (tf);
CREATE INDEX IF NOT EXISTS bm25_postings_chunk ON bm25_postings(chunk_rowid);
CREATE TABLE IF NOT EXISTS bm25_docs(chunk_rowid BIGINT PRIMARY KEY, len INT NOT NULL);
CREATE TABLE IF NOT EXISTS bm25_terms(term T PRIMARY KEY, df BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS entity_summaries(entity_id T PRIMARY KEY, fingerprint T NOT NULL,
    summary T NOT NULL);
CREATE TABLE IF NOT EXISTS llm_cache(key T PRIMARY KEY, provider T NOT NULL, response T NOT NULL);
CREATE TABLE IF NOT EXISTS extraction_failures(seq BIGINT GENERATED ALWAYS AS IDENTITY,
    chunk_id T PRIMARY KEY, doc_id T NOT NULL, error T NOT NULL, attempts INT NOT NULL);
CREATE TABLE IF NOT EXISTS partial_documents(doc_id T PRIMARY KEY, chunks_done INT NOT NULL);
CREATE TABLE IF NOT EXISTS communities(id T PRIMARY KEY, level INT NOT NULL, parent T,
    children T NOT NULL, title T NOT NULL, entity_ids T NOT NULL, fingerprint T NOT NULL);
CREATE TABLE IF NOT EXISTS community_members(community_id T NOT NULL, entity_id T NOT NULL);
CREATE INDEX IF NOT EXISTS community_members_entity ON community_members(entity_id);
CREATE TABLE IF NOT EXISTS community_reports(community_id T PRIMARY KEY, level INT NOT NULL,
    title T NOT NULL, summary T NOT NULL, findings T NOT NULL, rating DOUBLE PRECISION NOT NULL,
    rating_explanation T NOT NULL, fingerprint T NOT NULL, kind T NOT NULL);
CREATE TABLE IF NOT EXISTS covariates(seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id T NOT NULL, doc_id T NOT NULL, chunk_id T, covariate_type T NOT NULL, claim_type T NOT NULL,
    subject_id T NOT NULL, object_id T, status T NOT NULL, start_date T NOT NULL, end_date T NOT NULL,
    description T NOT NULL, source_text T NOT NULL);
CREATE INDEX IF NOT EXISTS covariates_subject ON covariates(subject_id);
CREATE INDEX IF NOT EXISTS covariates_object ON covariates(object_id);
CREATE INDEX IF NOT EXISTS covariates_doc ON covariates(doc_id);
CREATE TABLE IF NOT EXISTS writer_lock(id INT PRIMARY KEY, backend_pid INT NOT NULL,
    pid BIGINT NOT NULL, host T NOT NULL, command T NOT NULL, since BIGINT NOT NULL);
"#;

/// Columns added after the first release, for indexes made before.
const ADD_PROVENANCE: &str = r#"
ALTER TABLE documents ADD COLUMN IF NOT EXISTS pages TEXT COLLATE "C";
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS char_start INT NOT NULL DEFAULT 0;
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS char_end INT NOT NULL DEFAULT 0;
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS page_first INT;
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS page_last INT;
"#;

/// Whether `meta` is in the connection's own schema: the first of its search path, which
/// for a workspace (`search_path=rz_NAME,public`, see `crate::workspace`) must be the
/// workspace's schema itself, never `public` behind it when the workspace's is missing.
const IN_OWN_SCHEMA: &str = "SELECT to_regclass(quote_ident(current_schema()) || '.meta') IS NOT NULL \
     AND (p.first NOT LIKE 'rz\\_%' OR current_schema() = p.first) \
     FROM (SELECT btrim(split_part(current_setting('search_path'), ',', 1), ' \"') AS first) p";

/// The workspace schema the connection's search path names first (`rz_NAME`), if any.
fn workspace_schema(c: &mut impl GenericClient) -> std::result::Result<Option<String>, postgres::Error> {
    let first: String =
        c.query_one("SELECT btrim(split_part(current_setting('search_path'), ',', 1), ' \"')", &[])?.get(0);
    Ok(first.starts_with("rz_").then_some(first))
}

/// Whether the schema is there (its version row is written last, in the same transaction).
pub fn exists(c: &mut impl GenericClient) -> std::result::Result<bool, postgres::Error> {
    let row = c.query_one(IN_OWN_SCHEMA, &[])?;
    if !row.get::<_, bool>(0) {
        return Ok(false);
    }
    Ok(c.query_opt("SELECT 1 FROM meta WHERE key = 'schema_version'", &[])?.is_some())
}

/// As [`exists`], with the statements prepared on the connection: `rhizome serve` asks it
/// for every request, and each unprepared statement costs two round trips.
pub fn exists_prepared(c: &mut super::pool::Conn) -> std::result::Result<bool, postgres::Error> {
    let there = c.query(IN_OWN_SCHEMA, &[])?.first().is_some_and(|r| r.get::<_, bool>(0));
    Ok(there && !c.query("SELECT 1 FROM meta WHERE key = 'schema_version'", &[])?.is_empty())
}

/// Check the schema (and make it when `create`), under a transaction advisory lock so that
/// processes starting together do not race; a missing schema without `create` is an error
/// that says how to make one.
pub fn ensure(url: &PgUrl, c: &mut postgres::Client, create: bool) -> Result<()> {
    let e = |x| pg_err(url, x);
    if !exists(c).map_err(e)? {
        if !create {
            return Err(Error::Index {
                path: url.display().into(),
                msg: "no Rhizome index in this database; create one with `rhizome index PATH` or an \
                      import, or point --store / RHIZOME_STORE_URL at an existing index"
                    .into(),
            });
        }
        let mut tx = c.transaction().map_err(e)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK]).map_err(e)?;
        let workspace = workspace_schema(&mut tx).map_err(e)?;
        let extension = if workspace.is_some() {
            // Made in `public`, which every workspace's search path reaches.
            "CREATE EXTENSION IF NOT EXISTS vector SCHEMA public"
        } else {
            "CREATE EXTENSION IF NOT EXISTS vector"
        };
        if let Err(x) = tx.batch_execute(extension) {
            return Err(Error::Store(format!(
                "{}: CREATE EXTENSION vector failed ({}); install pgvector on the server (the \
                 postgresql-NN-pgvector package, or build it), or have an administrator run \
                 CREATE EXTENSION vector in this database",
                url.display(),
                x.as_db_error().map(|d| d.message().to_string()).unwrap_or_else(|| x.to_string())
            )));
        }
        if let Some(ws) = &workspace {
            // The schema name is ours (`rz_` and [a-z0-9_]), checked again before use.
            if ws.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
                tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {ws}; SET LOCAL search_path = {ws}, public"))
                    .map_err(e)?;
            }
        }
        tx.batch_execute(
            &SCHEMA
                .replace(" T ", " TEXT COLLATE \"C\" ")
                .replace(" T,", " TEXT COLLATE \"C\",")
                .replace(" T)", " TEXT COLLATE \"C\")"),
        )
        .map_err(e)?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO NOTHING",
            &[&SCHEMA_VERSION],
        )
        .map_err(e)?;
        tx.commit().map_err(e)?;
    }
    let provenance = "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                      AND table_name = 'chunks' AND column_name = 'page_last'";
    if c.query_opt(provenance, &[]).map_err(e)?.is_none() {
        // An index made before chunks kept their range and pages.
        c.batch_execute(ADD_PROVENANCE).map_err(e)?;
    }
    let meta = "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                AND table_name = 'documents' AND column_name = 'meta'";
    if c.query_opt(meta, &[]).map_err(e)?.is_none() {
        // An index made before documents kept what is known of them besides their text.
        c.batch_execute(r#"ALTER TABLE documents ADD COLUMN IF NOT EXISTS meta TEXT COLLATE "C";"#).map_err(e)?;
    }
    let digests = "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()
                   AND table_name = 'document_aliases'";
    if c.query_opt(digests, &[]).map_err(e)?.is_none() {
        // An index made before documents kept their text's digest and other names.
        let mut tx = c.transaction().map_err(e)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK]).map_err(e)?;
        tx.batch_execute(&super::aliases::migration()).map_err(e)?;
        tx.commit().map_err(e)?;
    }
    if get_meta(c, super::tags::FILLED).map_err(e)?.is_none() {
        // An index made before documents were indexed by type, tag, language and date.
        let mut tx = c.transaction().map_err(e)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK]).map_err(e)?;
        tx.batch_execute(super::tags::MIGRATION).map_err(e)?;
        if get_meta(&mut tx, super::tags::FILLED).map_err(e)?.is_none() {
            super::tags::fill(&mut tx).map_err(e)?;
        }
        tx.commit().map_err(e)?;
    }
    if get_meta(c, super::terms::FILLED).map_err(e)?.is_none() {
        // An index made before each term's chunk count was kept: one pass over the postings.
        let mut tx = c.transaction().map_err(e)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK]).map_err(e)?;
        if get_meta(&mut tx, super::terms::FILLED).map_err(e)?.is_none() {
            tx.batch_execute(
                "SELECT set_config('maintenance_work_mem', greatest(pg_size_bytes('256MB'),
                     pg_size_bytes(current_setting('maintenance_work_mem'))) / 1024 || 'kB', true)",
            )
            .map_err(e)?;
            tx.batch_execute(super::terms::MIGRATION).map_err(e)?;
            super::terms::fill(&mut tx).map_err(e)?;
        }
        tx.commit().map_err(e)?;
    }
    match get_meta(c, "schema_version").map_err(e)? {
        Some(v) if v == SCHEMA_VERSION => Ok(()),
        v => Err(Error::Index {
            path: url.display().into(),
            msg: format!(
                "schema version {}, this rhizome reads version {SCHEMA_VERSION}",
                v.unwrap_or_else(|| "none".into())
            ),
        }),
    }
}

pub fn get_meta(c: &mut impl GenericClient, key: &str) -> std::result::Result<Option<String>, postgres::Error> {
    Ok(c.query_opt("SELECT value FROM meta WHERE key = $1", &[&key])?.map(|r| r.get(0)))
}

pub fn set_meta(c: &mut impl GenericClient, key: &str, value: &str) -> std::result::Result<(), postgres::Error> {
    c.execute(
        "INSERT INTO meta(key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&key, &value],
    )?;
    Ok(())
}

/// A counter in `meta`, 0 when missing.
pub fn counter(c: &mut impl GenericClient, key: &str) -> std::result::Result<u64, postgres::Error> {
    Ok(get_meta(c, key)?.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Count one more change: of the graph (`graph`), and always of the data (what the
/// search caches are keyed by: vectors, reports, postings). Returns the new data version.
pub fn bump(c: &mut impl GenericClient, graph: bool) -> std::result::Result<u64, postgres::Error> {
    let keys: &[&str] = if graph { &["data_version", "graph_version"] } else { &["data_version"] };
    let rows = c.query(
        "INSERT INTO meta(key, value) SELECT k, '1' FROM unnest($1::text[]) AS k
         ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text RETURNING key, value",
        &[&keys],
    )?;
    Ok(rows
        .iter()
        .find(|r| r.get::<_, &str>(0) == "data_version")
        .and_then(|r| r.get::<_, &str>(1).parse().ok())
        .unwrap_or(0))
}
