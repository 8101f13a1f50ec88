//! The whole graph's rows, read at once: what a process loads as its in-memory graph
//! (up to `retrieval.whole_graph_up_to` entities) and the name indexes it keeps per graph
//! version above that.

use postgres::GenericClient;
use rhizome_core::{EntityRow, FactRow, GraphData};

use super::refresh::PgResult;
use super::rows::{graph_chunk_row, graph_entity_row, graph_relation_row};

pub(super) fn graph_data(c: &mut impl GenericClient) -> PgResult<GraphData> {
    Ok(GraphData {
        entities: entity_rows(c)?,
        chunks: c
            .query("SELECT id, doc_id, ordinal FROM chunks ORDER BY id", &[])?
            .iter()
            .map(graph_chunk_row)
            .collect(),
        relations: c
            .query("SELECT id, source_id, target_id, rel_type, weight FROM relations ORDER BY id", &[])?
            .iter()
            .map(graph_relation_row)
            .collect(),
        mentions: c
            .query(
                "SELECT entity_id, chunk_id, SUM(count)::bigint FROM entity_support WHERE chunk_id IS NOT NULL
                 GROUP BY entity_id, chunk_id ORDER BY entity_id, chunk_id",
                &[],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get::<_, i64>(2).max(0) as u32))
            .collect(),
        synonyms: c
            .query("SELECT a, b, score FROM synonyms ORDER BY a, b", &[])?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get::<_, f64>(2) as f32))
            .collect(),
        similar: c
            .query("SELECT a, b, score FROM similar_chunks ORDER BY a, b", &[])?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get::<_, f64>(2) as f32))
            .collect(),
        facts: c
            .query(
                "SELECT DISTINCT f.id, f.subject_id, f.object_id, s.chunk_id FROM facts f
                 JOIN fact_support s ON s.fact_id = f.id ORDER BY f.id, s.chunk_id NULLS FIRST",
                &[],
            )?
            .iter()
            .map(|r| FactRow { id: r.get(0), subject_id: r.get(1), object_id: r.get(2), chunk_id: r.get(3) })
            .collect(),
    })
}

/// Every entity's id, name and type, by id.
pub(super) fn entity_rows(c: &mut impl GenericClient) -> PgResult<Vec<EntityRow>> {
    Ok(c.query("SELECT id, name, entity_type FROM entities ORDER BY id", &[])?.iter().map(graph_entity_row).collect())
}
