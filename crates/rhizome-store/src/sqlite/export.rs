//! Reading a document back as the [`WriteBatch`] that wrote it, and the derived state that
//! is not supported by a document (entity summaries): what `rhizome copy` moves from a
//! SQLite index to any backend.

use std::collections::BTreeSet;

use rhizome_core::{CovariateRecord, Document, FactRecord, Result, VectorKind, WriteBatch};
use rusqlite::{params, Connection, OptionalExtension};

use super::rows::{
    all, chunk_row, covariate_row, document_row, fact_row, failure_row, list, mention_row, relation_support_row,
};
use super::sql;
use crate::vectors::decode;

/// The stored vectors of `kind` for `ids` that have one, appended in the order given.
fn push_vectors<'a>(
    conn: &Connection,
    batch: &mut WriteBatch,
    kind: VectorKind,
    ids: impl IntoIterator<Item = &'a String>,
) -> Result<()> {
    let mut stmt = conn.prepare_cached("SELECT vec FROM vectors WHERE kind = ?1 AND id = ?2").map_err(sql)?;
    for id in ids {
        let blob: Option<Vec<u8>> = stmt.query_row(params![kind.as_str(), id], |r| r.get(0)).optional().map_err(sql)?;
        if let Some(b) = blob {
            batch.vectors.push((kind, id.clone(), decode(&b)));
        }
    }
    Ok(())
}

/// The sentence vectors of `chunk_ids`, chunk by chunk, each chunk's by id.
fn push_sentence_vectors(conn: &Connection, batch: &mut WriteBatch, chunk_ids: &[String]) -> Result<()> {
    let mut stmt = conn
        .prepare_cached("SELECT id, vec FROM vectors WHERE kind = 'sentence' AND id >= ?1 AND id < ?2 ORDER BY id")
        .map_err(sql)?;
    for chunk in chunk_ids {
        let (lo, hi) = rhizome_core::ids::sentence_id_range(chunk);
        let rows =
            stmt.query_map(params![lo, hi], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))).map_err(sql)?;
        for row in rows {
            let (id, blob) = row.map_err(sql)?;
            batch.vectors.push((VectorKind::Sentence, id, decode(&blob)));
        }
    }
    Ok(())
}

/// See [`rhizome_core::StoreRead::document_batch`].
pub fn document_batch(conn: &Connection, doc_id: &str) -> Result<Option<WriteBatch>> {
    let doc: Option<Document> = conn
        .query_row("SELECT id, source, title, text, pages, meta FROM documents WHERE id = ?1", [doc_id], document_row)
        .optional()
        .map_err(sql)?;
    let Some(doc) = doc else { return Ok(None) };
    let mut b = WriteBatch::default();
    b.chunks = all(
        conn,
        "SELECT id, doc_id, ordinal, text, tokens, char_start, char_end, page_first, page_last FROM chunks
         WHERE doc_id = ?1 ORDER BY ordinal",
        [doc_id],
        chunk_row,
    )?;
    b.mentions = all(
        conn,
        "SELECT entity_id, name, entity_type, description, doc_id, chunk_id, count, importance
         FROM entity_support WHERE doc_id = ?1 ORDER BY coalesce(chunk_id, ''), entity_id, name, rowid",
        [doc_id],
        mention_row,
    )?;
    b.relations = all(
        conn,
        "SELECT relation_id, source_id, target_id, rel_type, description, weight, doc_id, chunk_id
         FROM relation_support WHERE doc_id = ?1 ORDER BY coalesce(chunk_id, ''), relation_id, rowid",
        [doc_id],
        relation_support_row,
    )?;
    b.facts = all(
        conn,
        "SELECT fact_id, subject, predicate, object, subject_id, object_id, doc_id, chunk_id
         FROM fact_support WHERE doc_id = ?1 ORDER BY coalesce(chunk_id, ''), fact_id, rowid",
        [doc_id],
        |r| Ok(FactRecord { fact: fact_row(r)?, doc_id: r.get(6)?, chunk_id: r.get(7)? }),
    )?;
    b.similar = all(conn, "SELECT a, b, score FROM similar WHERE doc_id = ?1 ORDER BY a, b", [doc_id], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, f64>(2)? as f32))
    })?;
    b.covariates = all(
        conn,
        "SELECT id, covariate_type, claim_type, subject_id, object_id, status, start_date, end_date,
         description, source_text, doc_id, chunk_id FROM covariates WHERE doc_id = ?1
         ORDER BY id, coalesce(chunk_id, ''), rowid",
        [doc_id],
        |r| Ok(CovariateRecord { covariate: covariate_row(r)?, doc_id: r.get(10)?, chunk_id: r.get(11)? }),
    )?;
    b.failures = all(
        conn,
        "SELECT chunk_id, doc_id, error, attempts FROM extraction_failures WHERE doc_id = ?1 ORDER BY chunk_id",
        [doc_id],
        failure_row,
    )?;
    let partial: Option<u32> = conn
        .query_row("SELECT chunks_done FROM partial_documents WHERE doc_id = ?1", [doc_id], |r| r.get(0))
        .optional()
        .map_err(sql)?;
    if let Some(n) = partial {
        b.doc_progress.push((doc_id.to_string(), Some(n)));
    }
    b.aliases = super::aliases::of(conn, doc_id)?.into_iter().map(|s| (doc_id.to_string(), s)).collect();
    let chunk_ids: Vec<String> = b.chunks.iter().map(|c| c.id.clone()).collect();
    let entity_ids: BTreeSet<String> = b.mentions.iter().map(|m| m.entity_id.clone()).collect();
    let fact_ids: BTreeSet<String> = b.facts.iter().map(|f| f.fact.id.clone()).collect();
    // Chunk vectors in chunk order, then entities and facts by id.
    push_vectors(conn, &mut b, VectorKind::Chunk, &chunk_ids)?;
    push_sentence_vectors(conn, &mut b, &chunk_ids)?;
    push_vectors(conn, &mut b, VectorKind::Entity, &entity_ids)?;
    push_vectors(conn, &mut b, VectorKind::Fact, &fact_ids)?;
    b.documents.push(doc);
    Ok(Some(b))
}

/// See [`rhizome_core::StoreRead::entity_summaries`].
pub fn entity_summaries(conn: &Connection) -> Result<Vec<(String, String, String)>> {
    let q = "SELECT entity_id, fingerprint, summary FROM entity_summaries ORDER BY entity_id";
    list(conn, q, [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
}

/// See [`rhizome_core::StoreWrite::set_synonyms`]; `conn` is inside the caller's transaction.
pub fn set_synonyms(conn: &Connection, edges: &[(String, String, f32)]) -> Result<()> {
    conn.execute("DELETE FROM synonyms", []).map_err(sql)?;
    let mut ins = conn
        .prepare(
            "INSERT OR IGNORE INTO synonyms(a, b, score) SELECT ?1, ?2, ?3
                  WHERE EXISTS (SELECT 1 FROM entities WHERE id = ?1)
                  AND EXISTS (SELECT 1 FROM entities WHERE id = ?2)",
        )
        .map_err(sql)?;
    for (a, b, s) in edges {
        ins.execute(params![a, b, *s as f64]).map_err(sql)?;
    }
    super::meta::set_meta(conn, "synonyms_dirty", "0")?;
    super::meta::bump_graph_version(conn)
}
