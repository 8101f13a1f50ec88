//! The graph around some entities (`StoreRead::neighbourhood`), read by id through the
//! indexes on relation ends, mentions and chunks: its cost follows the neighbourhood, not
//! the index. Also the entity and fact counts, the degrees of some entities and the chunk
//! rows of a document.

use std::collections::{BTreeMap, BTreeSet};

use rhizome_core::{ChunkRow, GraphData, Neighbourhood, RelationRow, Result};
use rusqlite::{Connection, OptionalExtension};

use super::graph_read::{chunk_row, entity_row, relation_row};
use super::sql;

/// The rows of `table` (entities or facts).
pub(crate) fn entity_count(conn: &Connection, table: &str) -> Result<u64> {
    let q = format!("SELECT count(*) FROM {table}");
    conn.query_row(&q, [], |r| r.get::<_, i64>(0)).map(|n| n.max(0) as u64).map_err(sql)
}

/// The relations at entity `?1` (one from it to itself counted once), through the
/// indexes on relation ends.
const DEGREE: &str = "SELECT (SELECT count(*) FROM relations WHERE source_id = ?1)
                           + (SELECT count(*) FROM relations WHERE target_id = ?1 AND source_id <> ?1)";

/// (entity, its relations) for those of `ids` that exist, by id.
pub(crate) fn entity_degrees(conn: &Connection, ids: &[String]) -> Result<Vec<(String, u32)>> {
    let asked: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    let mut exists = conn.prepare_cached("SELECT 1 FROM entities WHERE id = ?1").map_err(sql)?;
    let mut d = conn.prepare_cached(DEGREE).map_err(sql)?;
    let mut out = Vec::new();
    for id in asked {
        if exists.query_row([id], |_| Ok(())).optional().map_err(sql)?.is_some() {
            let n: i64 = d.query_row([id], |r| r.get(0)).map_err(sql)?;
            out.push((id.to_string(), n.max(0) as u32));
        }
    }
    Ok(out)
}

/// The chunk rows of a document, by chunk id, through the chunks' index by document.
pub(crate) fn document_chunk_rows(conn: &Connection, doc_id: &str) -> Result<Vec<ChunkRow>> {
    super::rows::all(conn, "SELECT id, doc_id, ordinal FROM chunks WHERE doc_id = ?1 ORDER BY id", [doc_id], chunk_row)
}

/// The graph around `ids`, with the degrees of the relations' ends when `with_degrees`.
pub(crate) fn neighbourhood(conn: &Connection, ids: &[String], with_degrees: bool) -> Result<Neighbourhood> {
    let asked: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    let mut relations: BTreeMap<String, RelationRow> = BTreeMap::new();
    let mut chunk_ids: BTreeSet<String> = BTreeSet::new();
    let mut synonyms: BTreeMap<(String, String), f32> = BTreeMap::new();
    {
        let mut chunks = conn
            .prepare_cached(
                "SELECT DISTINCT chunk_id FROM entity_support WHERE entity_id = ?1 AND chunk_id IS NOT NULL",
            )
            .map_err(sql)?;
        for id in &asked {
            let (rel, syn) = touching(conn, id)?;
            for r in rel {
                relations.insert(r.id.clone(), r);
            }
            for c in chunks.query_map([id], |r| r.get::<_, String>(0)).map_err(sql)? {
                chunk_ids.insert(c.map_err(sql)?);
            }
            for (a, b, score) in syn {
                synonyms.insert((a, b), score);
            }
        }
    }
    let relations: Vec<RelationRow> = relations.into_values().collect();
    let mut ends: BTreeSet<&str> = asked.clone();
    ends.extend(relations.iter().flat_map(|r| [r.source_id.as_str(), r.target_id.as_str()]));
    let mut wanted: BTreeSet<&str> = ends.clone();
    wanted.extend(synonyms.keys().flat_map(|(a, b)| [a.as_str(), b.as_str()]));
    let mut mentions: Vec<(String, String, u32)> = Vec::new();
    let mut chunks: Vec<ChunkRow> = Vec::new();
    {
        let mut m = conn
            .prepare_cached("SELECT entity_id, SUM(count) FROM entity_support WHERE chunk_id = ?1 GROUP BY entity_id")
            .map_err(sql)?;
        let mut c = conn.prepare_cached("SELECT id, doc_id, ordinal FROM chunks WHERE id = ?1").map_err(sql)?;
        for id in &chunk_ids {
            for r in m.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).map_err(sql)? {
                let (e, n) = r.map_err(sql)?;
                if wanted.contains(e.as_str()) {
                    mentions.push((e, id.clone(), n.max(0) as u32));
                }
            }
            let row = c.query_row([id], chunk_row).optional().map_err(sql)?;
            chunks.extend(row);
        }
    }
    mentions.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let mut entities = Vec::new();
    let mut degrees = Vec::new();
    {
        let mut e = conn.prepare_cached("SELECT id, name, entity_type FROM entities WHERE id = ?1").map_err(sql)?;
        let mut d = conn.prepare_cached(DEGREE).map_err(sql)?;
        for id in wanted {
            let row = e.query_row([id], entity_row).optional().map_err(sql)?;
            let Some(row) = row else { continue };
            if with_degrees && ends.contains(id) {
                let n: i64 = d.query_row([id], |r| r.get(0)).map_err(sql)?;
                degrees.push((row.id.clone(), n.max(0) as u32));
            }
            entities.push(row);
        }
    }
    Ok(Neighbourhood {
        graph: GraphData {
            entities,
            chunks,
            relations,
            mentions,
            synonyms: synonyms.into_iter().map(|((a, b), s)| (a, b, s)).collect(),
            similar: Vec::new(),
            facts: Vec::new(),
        },
        degrees,
    })
}

/// The relations and synonym edges with an end at entity `id`.
pub(crate) fn touching(conn: &Connection, id: &str) -> Result<(Vec<RelationRow>, Vec<(String, String, f32)>)> {
    let mut rel = conn
        .prepare_cached(
            "SELECT id, source_id, target_id, rel_type, weight FROM relations WHERE source_id = ?1
             UNION SELECT id, source_id, target_id, rel_type, weight FROM relations WHERE target_id = ?1",
        )
        .map_err(sql)?;
    let mut syn = conn
        .prepare_cached(
            "SELECT a, b, score FROM synonyms WHERE a = ?1 UNION SELECT a, b, score FROM synonyms WHERE b = ?1",
        )
        .map_err(sql)?;
    let relations =
        rel.query_map([id], relation_row).map_err(sql)?.collect::<rusqlite::Result<Vec<_>>>().map_err(sql)?;
    let synonyms = syn
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, f64>(2)? as f32)))
        .map_err(sql)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql)?;
    Ok((relations, synonyms))
}
