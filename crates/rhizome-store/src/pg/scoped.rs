//! The graph of some documents (`StoreRead::scope_graph`), in one snapshot and set reads
//! by id: their chunks by document, the mentions, SIMILAR_TO edges and facts of those
//! chunks, the entities, relations and facts they support. Its cost follows the scope, not
//! the index; the cut itself is `GraphData::scoped`'s.

use postgres::GenericClient;
use rhizome_core::{DocSupport, FactRow, GraphData};

use super::refresh::PgResult;
use super::rows::{graph_chunk_row, graph_entity_row, graph_relation_row};

pub(super) fn scope_graph(c: &mut impl GenericClient, docs: &[String], support: &DocSupport) -> PgResult<GraphData> {
    let chunks: Vec<_> = c
        .query("SELECT id, doc_id, ordinal FROM chunks WHERE doc_id = ANY($1) ORDER BY id", &[&docs])?
        .iter()
        .map(graph_chunk_row)
        .collect();
    let chunk_ids: Vec<String> = chunks.iter().map(|c| c.id.clone()).collect();
    let pair = |r: &postgres::Row| (r.get(0), r.get(1), r.get::<_, f64>(2) as f32);
    let all = GraphData {
        entities: c
            .query("SELECT id, name, entity_type FROM entities WHERE id = ANY($1) ORDER BY id", &[&support.entities])?
            .iter()
            .map(graph_entity_row)
            .collect(),
        relations: c
            .query(
                "SELECT id, source_id, target_id, rel_type, weight FROM relations WHERE id = ANY($1) ORDER BY id",
                &[&support.relations],
            )?
            .iter()
            .map(graph_relation_row)
            .collect(),
        mentions: c
            .query(
                "SELECT entity_id, chunk_id, SUM(count)::bigint FROM entity_support WHERE chunk_id = ANY($1)
                 GROUP BY entity_id, chunk_id ORDER BY entity_id, chunk_id",
                &[&chunk_ids],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get::<_, i64>(2).max(0) as u32))
            .collect(),
        synonyms: c
            .query("SELECT a, b, score FROM synonyms WHERE a = ANY($1) ORDER BY a, b", &[&support.entities])?
            .iter()
            .map(pair)
            .collect(),
        similar: c
            .query("SELECT a, b, score FROM similar_chunks WHERE a = ANY($1) ORDER BY a, b", &[&chunk_ids])?
            .iter()
            .map(pair)
            .collect(),
        facts: c
            .query(
                "SELECT DISTINCT f.id, f.subject_id, f.object_id, s.chunk_id FROM facts f
                 JOIN fact_support s ON s.fact_id = f.id WHERE f.id = ANY($1) ORDER BY f.id, s.chunk_id NULLS FIRST",
                &[&support.facts],
            )?
            .iter()
            .map(|r| FactRow { id: r.get(0), subject_id: r.get(1), object_id: r.get(2), chunk_id: r.get(3) })
            .collect(),
        chunks,
    };
    Ok(all.scoped(docs, support))
}
