//! The document index (`document_tags`) as the SQLite store keeps it (see
//! `sqlite/tags.rs`): (key, value, document) rows from each document's language, date and
//! metadata, written with the document and its metadata, removed with it, read by (key,
//! value) range; and the reads of names and support rows that a filter's scope makes.

use postgres::GenericClient;
use rhizome_core::filter::doc_tags;
use rhizome_core::SupportRows;

use super::refresh::PgResult;
use super::rows::{mention_row, relation_support_row};

/// The table (made by the schema too; this is for an index made before it) and the meta
/// key saying every document's rows are written.
pub const MIGRATION: &str = r#"
CREATE TABLE IF NOT EXISTS document_tags(key TEXT COLLATE "C" NOT NULL, value TEXT COLLATE "C" NOT NULL,
    doc_id TEXT COLLATE "C" NOT NULL, PRIMARY KEY(key, value, doc_id));
CREATE INDEX IF NOT EXISTS document_tags_doc ON document_tags(doc_id);
"#;
pub const FILLED: &str = "document_tags";

/// Write again the index rows of `doc_ids` from their stored rows (none for a document
/// that is gone).
pub fn retag(c: &mut impl GenericClient, doc_ids: &[&str]) -> PgResult<()> {
    if doc_ids.is_empty() {
        return Ok(());
    }
    c.execute("DELETE FROM document_tags WHERE doc_id = ANY($1)", &[&doc_ids])?;
    let docs = c.query("SELECT id, language, indexed_at, meta FROM documents WHERE id = ANY($1)", &[&doc_ids])?;
    let (mut keys, mut values, mut ids): (Vec<String>, Vec<String>, Vec<String>) = Default::default();
    for d in &docs {
        let meta = crate::meta_from_json(d.get(3));
        let at: Option<i64> = d.get(2);
        for (k, v) in doc_tags(d.get(1), at.map(|t| t.max(0) as u64), &meta) {
            keys.push(k);
            values.push(v);
            ids.push(d.get(0));
        }
    }
    c.execute(
        "INSERT INTO document_tags(key, value, doc_id) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
         ON CONFLICT DO NOTHING",
        &[&keys, &values, &ids],
    )?;
    Ok(())
}

/// Fill the index from every stored document.
pub fn fill(c: &mut impl GenericClient) -> PgResult<()> {
    let ids: Vec<String> = c.query("SELECT id FROM documents", &[])?.iter().map(|r| r.get(0)).collect();
    for part in ids.chunks(1000) {
        let part: Vec<&str> = part.iter().map(String::as_str).collect();
        retag(c, &part)?;
    }
    super::schema::set_meta(c, FILLED, "1")
}

/// [`rhizome_core::StoreRead::tagged_documents`].
pub fn tagged(c: &mut impl GenericClient, key: &str, from: &str, to: Option<&str>) -> PgResult<Vec<String>> {
    let q = "SELECT DISTINCT doc_id FROM document_tags WHERE key = $1 AND value >= $2
             AND ($3::text IS NULL OR value < $3) ORDER BY doc_id";
    Ok(c.query(q, &[&key, &from, &to])?.iter().map(|r| r.get(0)).collect())
}

/// [`rhizome_core::StoreRead::document_names`]: through the indexes on `documents.source`
/// and on the aliases' names (bytewise: the columns are `COLLATE "C"`).
pub fn names(c: &mut impl GenericClient, prefix: &str) -> PgResult<Vec<(String, String)>> {
    let hi = format!("{prefix}\u{10ffff}");
    let q = "SELECT id, source FROM documents WHERE source >= $1 AND source < $2
             UNION ALL SELECT doc_id, source FROM document_aliases WHERE source >= $1 AND source < $2";
    Ok(c.query(q, &[&prefix, &hi])?.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// [`rhizome_core::StoreRead::support_rows`].
pub fn support_rows(
    c: &mut impl GenericClient,
    entity_ids: &[String],
    relation_ids: &[String],
) -> PgResult<SupportRows> {
    let mentions = c
        .query(
            "SELECT entity_id, name, entity_type, description, doc_id, chunk_id, count, importance
             FROM entity_support WHERE entity_id = ANY($1) ORDER BY seq",
            &[&entity_ids],
        )?
        .iter()
        .map(mention_row)
        .collect();
    let relations = c
        .query(
            "SELECT relation_id, source_id, target_id, rel_type, description, weight, doc_id, chunk_id
             FROM relation_support WHERE relation_id = ANY($1) ORDER BY seq",
            &[&relation_ids],
        )?
        .iter()
        .map(relation_support_row)
        .collect();
    Ok((mentions, relations))
}

/// [`rhizome_core::StoreRead::supported_by`]: through the support tables' document indexes.
pub fn supported_by(c: &mut postgres::Client, doc_ids: &[String]) -> PgResult<rhizome_core::DocSupport> {
    let mut ids = |table: &str, col: &str| -> PgResult<Vec<String>> {
        let q = format!("SELECT DISTINCT {col} FROM {table} WHERE doc_id = ANY($1)");
        Ok(c.query(&q, &[&doc_ids])?.iter().map(|r| r.get(0)).collect())
    };
    let entities = ids("entity_support", "entity_id")?;
    let relations = ids("relation_support", "relation_id")?;
    let facts = ids("fact_support", "fact_id")?;
    Ok(rhizome_core::DocSupport::new(entities, relations, facts).with_claims(ids("covariates", "id")?))
}
