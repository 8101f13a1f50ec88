//! A document read back as the [`WriteBatch`] that wrote it, and the entity summaries:
//! what `rhizome copy` moves between backends (same orders as the SQLite store's).

use std::collections::{BTreeSet, HashMap};

use postgres::GenericClient;
use rhizome_core::{CovariateRecord, FactRecord, VectorKind, WriteBatch};

use super::refresh::PgResult;
use super::rows::{chunk_row, covariate_row, document_row, fact_row, failure_row, mention_row, relation_support_row};

fn vectors_of(c: &mut impl GenericClient, kind: VectorKind, ids: &[String]) -> PgResult<HashMap<String, Vec<f32>>> {
    c.query("SELECT id, vec FROM vectors WHERE kind = $1 AND id = ANY($2)", &[&kind.as_str(), &ids])?
        .iter()
        .map(|r| Ok((r.get(0), r.try_get::<_, super::vector::PgVector>(1)?.0)))
        .collect()
}

pub fn document_batch(c: &mut impl GenericClient, doc_id: &str) -> PgResult<Option<WriteBatch>> {
    let Some(d) =
        c.query_opt("SELECT id, source, title, text, pages, meta FROM documents WHERE id = $1", &[&doc_id])?
    else {
        return Ok(None);
    };
    let doc = document_row(&d);
    let mut b = WriteBatch::default();
    b.chunks = c
        .query(
            "SELECT id, doc_id, ordinal, text, tokens, char_start, char_end, page_first, page_last FROM chunks
             WHERE doc_id = $1 ORDER BY ordinal",
            &[&doc_id],
        )?
        .iter()
        .map(chunk_row)
        .collect();
    b.mentions = c
        .query(
            "SELECT entity_id, name, entity_type, description, doc_id, chunk_id, count, importance
             FROM entity_support WHERE doc_id = $1 ORDER BY coalesce(chunk_id, ''), entity_id, name, seq",
            &[&doc_id],
        )?
        .iter()
        .map(mention_row)
        .collect();
    b.relations = c
        .query(
            "SELECT relation_id, source_id, target_id, rel_type, description, weight, doc_id, chunk_id
             FROM relation_support WHERE doc_id = $1 ORDER BY coalesce(chunk_id, ''), relation_id, seq",
            &[&doc_id],
        )?
        .iter()
        .map(relation_support_row)
        .collect();
    b.facts = c
        .query(
            "SELECT fact_id, subject, predicate, object, subject_id, object_id, doc_id, chunk_id
             FROM fact_support WHERE doc_id = $1 ORDER BY coalesce(chunk_id, ''), fact_id, seq",
            &[&doc_id],
        )?
        .iter()
        .map(|r| FactRecord { fact: fact_row(r), doc_id: r.get(6), chunk_id: r.get(7) })
        .collect();
    b.similar = c
        .query("SELECT a, b, score FROM similar_chunks WHERE doc_id = $1 ORDER BY a, b", &[&doc_id])?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get::<_, f64>(2) as f32))
        .collect();
    b.covariates = c
        .query(
            "SELECT id, covariate_type, claim_type, subject_id, object_id, status, start_date, end_date,
             description, source_text, doc_id, chunk_id FROM covariates WHERE doc_id = $1
             ORDER BY id, coalesce(chunk_id, ''), seq",
            &[&doc_id],
        )?
        .iter()
        .map(|r| CovariateRecord { covariate: covariate_row(r), doc_id: r.get(10), chunk_id: r.get(11) })
        .collect();
    b.failures = c
        .query(
            "SELECT chunk_id, doc_id, error, attempts FROM extraction_failures WHERE doc_id = $1 ORDER BY chunk_id",
            &[&doc_id],
        )?
        .iter()
        .map(failure_row)
        .collect();
    if let Some(r) = c.query_opt("SELECT chunks_done FROM partial_documents WHERE doc_id = $1", &[&doc_id])? {
        b.doc_progress.push((doc_id.to_string(), Some(r.get::<_, i32>(0) as u32)));
    }
    b.aliases = super::aliases::of(c, doc_id)?.into_iter().map(|s| (doc_id.to_string(), s)).collect();
    // Chunk vectors in chunk order, then entities and facts by id.
    let chunk_ids: Vec<String> = b.chunks.iter().map(|x| x.id.clone()).collect();
    let entity_ids: Vec<String> =
        b.mentions.iter().map(|m| m.entity_id.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let fact_ids: Vec<String> =
        b.facts.iter().map(|f| f.fact.id.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    // Chunk vectors, then sentence vectors chunk by chunk (each chunk's by id; ids compare
    // bytewise), then entities and facts.
    let mut sentence_ids: Vec<String> = Vec::new();
    for chunk in &chunk_ids {
        let (lo, hi) = rhizome_core::ids::sentence_id_range(chunk);
        for r in
            c.query("SELECT id FROM vectors WHERE kind = 'sentence' AND id >= $1 AND id < $2 ORDER BY id", &[&lo, &hi])?
        {
            sentence_ids.push(r.get(0));
        }
    }
    for (kind, ids) in [
        (VectorKind::Chunk, &chunk_ids),
        (VectorKind::Sentence, &sentence_ids),
        (VectorKind::Entity, &entity_ids),
        (VectorKind::Fact, &fact_ids),
    ] {
        let mut found = vectors_of(c, kind, ids)?;
        for id in ids {
            if let Some(v) = found.remove(id) {
                b.vectors.push((kind, id.clone(), v));
            }
        }
    }
    b.documents.push(doc);
    Ok(Some(b))
}

pub fn entity_summaries(c: &mut impl GenericClient) -> PgResult<Vec<(String, String, String)>> {
    Ok(c.query("SELECT entity_id, fingerprint, summary FROM entity_summaries ORDER BY entity_id", &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}
