//! What hippo reads to walk the graph around a question on a large index
//! (`StoreRead::walk_edges`, `chunk_titles`, `fact_rows`): set reads by id through the
//! indexes on relation ends, synonym ends and mentions by entity and by chunk. Also what
//! graph reasoning expands through (`StoreRead::chunk_links`), through the indexes on
//! chunks by document and ordinal and on SIMILAR_TO edges by first end and by document.

use std::collections::BTreeSet;

use postgres::GenericClient;
use rhizome_core::{FactRow, GraphData};

use super::refresh::PgResult;
use super::rows::{graph_chunk_row, graph_relation_row};

fn sorted(ids: &[String]) -> Vec<String> {
    ids.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect()
}

/// hippo's walk reads: its relations, synonym and mention rows at some nodes, outside a
/// snapshot (the walk makes a dozen such reads, none consistent with the next anyway; a
/// transaction per read added two round trips to its three).
pub(super) fn walk_edges(
    c: &mut impl GenericClient,
    entities: &[String],
    chunks: &[String],
    among: bool,
) -> PgResult<GraphData> {
    let (e, ch) = (sorted(entities), sorted(chunks));
    let (relations, synonyms, mentions) = if among {
        (
            "SELECT id, source_id, target_id, rel_type, weight FROM relations
             WHERE source_id = ANY($1) AND target_id = ANY($1) ORDER BY id",
            "SELECT a, b, score FROM synonyms WHERE a = ANY($1) AND b = ANY($1) ORDER BY a, b",
            "SELECT entity_id, chunk_id, SUM(count)::bigint FROM entity_support
             WHERE entity_id = ANY($1) AND chunk_id = ANY($2)
             GROUP BY entity_id, chunk_id ORDER BY entity_id, chunk_id",
        )
    } else {
        (
            "SELECT id, source_id, target_id, rel_type, weight FROM relations WHERE source_id = ANY($1)
             UNION SELECT id, source_id, target_id, rel_type, weight FROM relations WHERE target_id = ANY($1)
             ORDER BY id",
            "SELECT a, b, score FROM synonyms WHERE a = ANY($1)
             UNION SELECT a, b, score FROM synonyms WHERE b = ANY($1) ORDER BY a, b",
            "SELECT entity_id, chunk_id, SUM(count)::bigint FROM entity_support
             WHERE entity_id = ANY($1) AND chunk_id IS NOT NULL GROUP BY entity_id, chunk_id
             UNION SELECT entity_id, chunk_id, SUM(count)::bigint FROM entity_support
             WHERE chunk_id = ANY($2) GROUP BY entity_id, chunk_id
             ORDER BY entity_id, chunk_id",
        )
    };
    Ok(GraphData {
        relations: c.query(relations, &[&e])?.iter().map(graph_relation_row).collect(),
        synonyms: c.query(synonyms, &[&e])?.iter().map(|r| (r.get(0), r.get(1), r.get::<_, f64>(2) as f32)).collect(),
        mentions: c
            .query(mentions, &[&e, &ch])?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get::<_, i64>(2).max(0) as u32))
            .collect(),
        ..GraphData::default()
    })
}

pub(super) fn chunk_titles(c: &mut impl GenericClient, chunks: &[String]) -> PgResult<Vec<(String, String)>> {
    Ok(c.query(
        "SELECT c.id, d.title FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id = ANY($1) ORDER BY c.id",
        &[&sorted(chunks)],
    )?
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect())
}

pub(super) fn fact_rows(c: &mut impl GenericClient, facts: &[String]) -> PgResult<Vec<FactRow>> {
    Ok(c.query(
        "SELECT DISTINCT f.id, f.subject_id, f.object_id, s.chunk_id FROM facts f
             JOIN fact_support s ON s.fact_id = f.id WHERE f.id = ANY($1) ORDER BY f.id, s.chunk_id NULLS FIRST",
        &[&sorted(facts)],
    )?
    .iter()
    .map(|r| FactRow { id: r.get(0), subject_id: r.get(1), object_id: r.get(2), chunk_id: r.get(3) })
    .collect())
}

pub(super) fn chunk_links(c: &mut impl GenericClient, chunks: &[String]) -> PgResult<GraphData> {
    let asked = sorted(chunks);
    let rows = c.query(
        "SELECT id, doc_id, ordinal FROM chunks WHERE id = ANY($1)
         UNION SELECT p.id, p.doc_id, p.ordinal FROM chunks c CROSS JOIN LATERAL (
             SELECT id, doc_id, ordinal FROM chunks x WHERE x.doc_id = c.doc_id AND x.ordinal <= c.ordinal
               AND (x.ordinal, x.id) < (c.ordinal, c.id)
             ORDER BY x.ordinal DESC, x.id DESC LIMIT 1) p WHERE c.id = ANY($1)
         UNION SELECT n.id, n.doc_id, n.ordinal FROM chunks c CROSS JOIN LATERAL (
             SELECT id, doc_id, ordinal FROM chunks x WHERE x.doc_id = c.doc_id AND x.ordinal >= c.ordinal
               AND (x.ordinal, x.id) > (c.ordinal, c.id)
             ORDER BY x.ordinal, x.id LIMIT 1) n WHERE c.id = ANY($1)
         ORDER BY id",
        &[&asked],
    )?;
    let similar = c.query(
        "SELECT a, b, score FROM similar_chunks WHERE a = ANY($1)
         UNION SELECT s.a, s.b, s.score FROM chunks c JOIN similar_chunks s ON s.doc_id = c.doc_id AND s.b = c.id
         WHERE c.id = ANY($1) ORDER BY a, b",
        &[&asked],
    )?;
    Ok(GraphData {
        chunks: rows.iter().map(graph_chunk_row).collect(),
        similar: similar.iter().map(|r| (r.get(0), r.get(1), r.get::<_, f64>(2) as f32)).collect(),
        ..GraphData::default()
    })
}
