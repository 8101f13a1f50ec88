//! The graph around some entities (`StoreRead::neighbourhood`), in one snapshot and set
//! reads by id (indexes on relation ends, mentions by entity and by chunk, synonym ends):
//! the cost follows the neighbourhood, not the index. Also the degrees of some entities and
//! the chunk rows of a document.

use std::collections::BTreeSet;

use postgres::GenericClient;
use rhizome_core::{ChunkRow, EntityRow, GraphData, Neighbourhood, RelationRow};

use super::refresh::PgResult;
use super::rows::{graph_chunk_row, graph_entity_row, graph_relation_row};

/// The graph around `ids`, with the degrees of the relations' ends when `with_degrees`.
pub(super) fn neighbourhood(c: &mut impl GenericClient, ids: &[String], with_degrees: bool) -> PgResult<Neighbourhood> {
    let asked: Vec<String> = ids.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
    let relations: Vec<RelationRow> = c
        .query(
            "SELECT id, source_id, target_id, rel_type, weight FROM relations WHERE source_id = ANY($1)
             UNION SELECT id, source_id, target_id, rel_type, weight FROM relations WHERE target_id = ANY($1)
             ORDER BY id",
            &[&asked],
        )?
        .iter()
        .map(graph_relation_row)
        .collect();
    let synonyms: Vec<(String, String, f32)> = c
        .query(
            "SELECT a, b, score FROM synonyms WHERE a = ANY($1)
             UNION SELECT a, b, score FROM synonyms WHERE b = ANY($1) ORDER BY a, b",
            &[&asked],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get::<_, f64>(2) as f32))
        .collect();
    let mut ends: BTreeSet<&str> = asked.iter().map(String::as_str).collect();
    ends.extend(relations.iter().flat_map(|r| [r.source_id.as_str(), r.target_id.as_str()]));
    let mut wanted = ends.clone();
    wanted.extend(synonyms.iter().flat_map(|s| [s.0.as_str(), s.1.as_str()]));
    let wanted: Vec<&str> = wanted.into_iter().collect();
    // The chunks first, then the mentions in them by chunk id: given as one query, the
    // planner takes the chunk list for large and scans every mention.
    let chunk_ids: Vec<String> = c
        .query(
            "SELECT DISTINCT chunk_id FROM entity_support WHERE entity_id = ANY($1) AND chunk_id IS NOT NULL
             ORDER BY chunk_id",
            &[&asked],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mentions: Vec<(String, String, u32)> = c
        .query(
            "SELECT entity_id, chunk_id, SUM(count)::bigint FROM entity_support
             WHERE chunk_id = ANY($1) AND entity_id = ANY($2)
             GROUP BY entity_id, chunk_id ORDER BY entity_id, chunk_id",
            &[&chunk_ids, &wanted],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get::<_, i64>(2).max(0) as u32))
        .collect();
    let chunks: Vec<ChunkRow> = c
        .query("SELECT id, doc_id, ordinal FROM chunks WHERE id = ANY($1) ORDER BY id", &[&chunk_ids])?
        .iter()
        .map(graph_chunk_row)
        .collect();
    let entities: Vec<EntityRow> = c
        .query("SELECT id, name, entity_type FROM entities WHERE id = ANY($1) ORDER BY id", &[&wanted])?
        .iter()
        .map(graph_entity_row)
        .collect();
    let ends: Vec<&str> = ends.into_iter().collect();
    let degrees = if with_degrees { degrees(c, &ends)? } else { Vec::new() };
    Ok(Neighbourhood {
        graph: GraphData { entities, chunks, relations, mentions, synonyms, similar: Vec::new(), facts: Vec::new() },
        degrees,
    })
}

/// (entity, its relations, one from it to itself counted once) for those of `ids` that
/// exist, by id, through the indexes on relation ends.
fn degrees(c: &mut impl GenericClient, ids: &[&str]) -> PgResult<Vec<(String, u32)>> {
    Ok(c.query(
        "SELECT e.id, (SELECT count(*) FROM relations WHERE source_id = e.id)
                    + (SELECT count(*) FROM relations WHERE target_id = e.id AND source_id <> e.id)
         FROM entities e WHERE e.id = ANY($1) ORDER BY e.id",
        &[&ids],
    )?
    .iter()
    .map(|r| (r.get(0), r.get::<_, i64>(1).max(0) as u32))
    .collect())
}

pub(super) fn entity_degrees(c: &mut impl GenericClient, ids: &[String]) -> PgResult<Vec<(String, u32)>> {
    let asked: Vec<&str> = ids.iter().map(String::as_str).collect::<BTreeSet<_>>().into_iter().collect();
    degrees(c, &asked)
}

/// The chunk rows of a document, by chunk id, through the chunks' index by document.
pub(super) fn document_chunk_rows(c: &mut impl GenericClient, doc_id: &str) -> PgResult<Vec<ChunkRow>> {
    Ok(c.query("SELECT id, doc_id, ordinal FROM chunks WHERE doc_id = $1 ORDER BY id", &[&doc_id])?
        .iter()
        .map(graph_chunk_row)
        .collect())
}
