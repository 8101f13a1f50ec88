//! What hippo reads to walk the graph around a question on a large index
//! (`StoreRead::walk_edges`, `chunk_titles`, `fact_rows`): reads by id through the
//! indexes on relation ends, synonym ends and mentions by entity and by chunk. Also what
//! graph reasoning expands through (`StoreRead::chunk_links`), through the indexes on
//! chunks by document and ordinal and on SIMILAR_TO edges by first end and by document.

use std::collections::{BTreeMap, BTreeSet};

use rhizome_core::{ChunkRow, FactRow, GraphData, RelationRow, Result};
use rusqlite::{Connection, OptionalExtension};

use super::graph_read::chunk_row;
use super::neighbourhood::touching;
use super::sql;

pub(crate) fn walk_edges(conn: &Connection, entities: &[String], chunks: &[String], among: bool) -> Result<GraphData> {
    let e: BTreeSet<&str> = entities.iter().map(String::as_str).collect();
    let c: BTreeSet<&str> = chunks.iter().map(String::as_str).collect();
    let keep = |a: &str, b: &str| !among || (e.contains(a) && e.contains(b));
    let mut relations: BTreeMap<String, RelationRow> = BTreeMap::new();
    let mut synonyms: BTreeMap<(String, String), f32> = BTreeMap::new();
    let mut mentions: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut by_entity = conn
        .prepare_cached(
            "SELECT chunk_id, SUM(count) FROM entity_support WHERE entity_id = ?1 AND chunk_id IS NOT NULL
             GROUP BY chunk_id",
        )
        .map_err(sql)?;
    for &id in &e {
        let (rel, syn) = touching(conn, id)?;
        for r in rel.into_iter().filter(|r| keep(&r.source_id, &r.target_id)) {
            relations.insert(r.id.clone(), r);
        }
        for (a, b, score) in syn.into_iter().filter(|s| keep(&s.0, &s.1)) {
            synonyms.insert((a, b), score);
        }
        for m in by_entity.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).map_err(sql)? {
            let (chunk, n) = m.map_err(sql)?;
            if !among || c.contains(chunk.as_str()) {
                mentions.insert((id.to_string(), chunk), n.max(0) as u32);
            }
        }
    }
    if !among {
        let mut by_chunk = conn
            .prepare_cached("SELECT entity_id, SUM(count) FROM entity_support WHERE chunk_id = ?1 GROUP BY entity_id")
            .map_err(sql)?;
        for &id in &c {
            for m in by_chunk.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).map_err(sql)? {
                let (entity, n) = m.map_err(sql)?;
                mentions.insert((entity, id.to_string()), n.max(0) as u32);
            }
        }
    }
    Ok(GraphData {
        relations: relations.into_values().collect(),
        mentions: mentions.into_iter().map(|((e, c), n)| (e, c, n)).collect(),
        synonyms: synonyms.into_iter().map(|((a, b), s)| (a, b, s)).collect(),
        ..GraphData::default()
    })
}

pub(crate) fn chunk_titles(conn: &Connection, chunks: &[String]) -> Result<Vec<(String, String)>> {
    let asked: BTreeSet<&str> = chunks.iter().map(String::as_str).collect();
    let mut q = conn
        .prepare_cached("SELECT d.title FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id = ?1")
        .map_err(sql)?;
    let mut out = Vec::new();
    for id in asked {
        for t in q.query_map([id], |r| r.get::<_, String>(0)).map_err(sql)? {
            out.push((id.to_string(), t.map_err(sql)?));
        }
    }
    Ok(out)
}

pub(crate) fn fact_rows(conn: &Connection, facts: &[String]) -> Result<Vec<FactRow>> {
    let asked: BTreeSet<&str> = facts.iter().map(String::as_str).collect();
    let mut q = conn
        .prepare_cached(
            "SELECT DISTINCT f.id, f.subject_id, f.object_id, s.chunk_id FROM facts f
             JOIN fact_support s ON s.fact_id = f.id WHERE f.id = ?1 ORDER BY s.chunk_id",
        )
        .map_err(sql)?;
    let mut out = Vec::new();
    for id in asked {
        let rows = q
            .query_map([id], |r| {
                Ok(FactRow { id: r.get(0)?, subject_id: r.get(1)?, object_id: r.get(2)?, chunk_id: r.get(3)? })
            })
            .map_err(sql)?;
        for f in rows {
            out.push(f.map_err(sql)?);
        }
    }
    Ok(out)
}

pub(crate) fn chunk_links(conn: &Connection, chunks: &[String]) -> Result<GraphData> {
    let asked: BTreeSet<&str> = chunks.iter().map(String::as_str).collect();
    let mut rows: BTreeMap<String, ChunkRow> = BTreeMap::new();
    let mut similar: BTreeMap<(String, String), f32> = BTreeMap::new();
    let mut one = conn.prepare_cached("SELECT id, doc_id, ordinal FROM chunks WHERE id = ?1").map_err(sql)?;
    let mut prev = conn
        .prepare_cached(
            "SELECT id, doc_id, ordinal FROM chunks WHERE doc_id = ?1 AND (ordinal, id) < (?2, ?3)
             ORDER BY ordinal DESC, id DESC LIMIT 1",
        )
        .map_err(sql)?;
    let mut next = conn
        .prepare_cached(
            "SELECT id, doc_id, ordinal FROM chunks WHERE doc_id = ?1 AND (ordinal, id) > (?2, ?3)
             ORDER BY ordinal, id LIMIT 1",
        )
        .map_err(sql)?;
    let mut sim = conn
        .prepare_cached(
            "SELECT a, b, score FROM similar WHERE a = ?1
             UNION SELECT a, b, score FROM similar WHERE doc_id = ?2 AND b = ?1",
        )
        .map_err(sql)?;
    for id in asked {
        let Some(c) = one.query_row([id], chunk_row).optional().map_err(sql)? else { continue };
        let at = rusqlite::params![c.doc_id, c.ordinal, c.id];
        let around = [prev.query_row(at, chunk_row).optional(), next.query_row(at, chunk_row).optional()];
        for r in around {
            if let Some(r) = r.map_err(sql)? {
                rows.insert(r.id.clone(), r);
            }
        }
        let found = sim.query_map([id, c.doc_id.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, f64>(2)? as f32)));
        for s in found.map_err(sql)? {
            let (a, b, score): (String, String, f32) = s.map_err(sql)?;
            similar.insert((a, b), score);
        }
        rows.insert(c.id.clone(), c);
    }
    Ok(GraphData {
        chunks: rows.into_values().collect(),
        similar: similar.into_iter().map(|((a, b), s)| (a, b, s)).collect(),
        ..GraphData::default()
    })
}
