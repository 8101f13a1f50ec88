//! The graph of some documents (`StoreRead::scope_graph`), read by id: their chunks by
//! document, the mentions, SIMILAR_TO edges and facts of those chunks, the entities,
//! relations and facts they support by id. Its cost follows the scope, not the index.

use rhizome_core::{ChunkRow, DocSupport, FactRow, GraphData, Result};
use rusqlite::{Connection, Row};

use super::graph_read::{chunk_row, entity_row, relation_row};
use super::sql;

/// The rows of `q` (one id parameter) for each of `ids`.
fn each<T>(conn: &Connection, q: &str, ids: &[String], f: impl Fn(&Row) -> rusqlite::Result<T>) -> Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(q).map_err(sql)?;
    let mut out = Vec::new();
    for id in ids {
        for x in stmt.query_map([id], &f).map_err(sql)? {
            out.push(x.map_err(sql)?);
        }
    }
    Ok(out)
}

/// Every row the scope's graph can hold, each list in `GraphData` order; the cut itself
/// is `GraphData::scoped`'s.
pub(crate) fn scope_graph(conn: &Connection, docs: &[String], support: &DocSupport) -> Result<GraphData> {
    let mut chunks: Vec<ChunkRow> =
        each(conn, "SELECT id, doc_id, ordinal FROM chunks WHERE doc_id = ?1", docs, chunk_row)?;
    chunks.sort_by(|a, b| a.id.cmp(&b.id));
    let chunk_ids: Vec<String> = chunks.iter().map(|c| c.id.clone()).collect();
    let mut mentions: Vec<(String, String, u32)> = each(
        conn,
        "SELECT entity_id, chunk_id, SUM(count) FROM entity_support WHERE chunk_id = ?1 GROUP BY entity_id",
        &chunk_ids,
        |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?.max(0) as u32)),
    )?;
    mentions.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let pair = |r: &Row| Ok((r.get(0)?, r.get(1)?, r.get::<_, f64>(2)? as f32));
    let all = GraphData {
        entities: each(
            conn,
            "SELECT id, name, entity_type FROM entities WHERE id = ?1",
            &support.entities,
            entity_row,
        )?,
        relations: each(
            conn,
            "SELECT id, source_id, target_id, rel_type, weight FROM relations WHERE id = ?1",
            &support.relations,
            relation_row,
        )?,
        synonyms: each(conn, "SELECT a, b, score FROM synonyms WHERE a = ?1", &support.entities, pair)?,
        similar: each(conn, "SELECT a, b, score FROM similar WHERE a = ?1", &chunk_ids, pair)?,
        facts: each(
            conn,
            "SELECT DISTINCT f.id, f.subject_id, f.object_id, s.chunk_id FROM facts f
             JOIN fact_support s ON s.fact_id = f.id WHERE f.id = ?1 ORDER BY s.chunk_id",
            &support.facts,
            |r| Ok(FactRow { id: r.get(0)?, subject_id: r.get(1)?, object_id: r.get(2)?, chunk_id: r.get(3)? }),
        )?,
        chunks,
        mentions,
    };
    Ok(all.scoped(docs, support))
}
