//! The whole-graph read (`StoreRead::graph_data`) for [`SqliteStore`], and the readers of
//! its rows that the neighbourhood read shares.

use rhizome_core::{ChunkRow, EntityRow, FactRow, GraphData, RelationRow, Result};
use rusqlite::{Connection, Row};

/// A graph node from `id, name, entity_type`.
pub(super) fn entity_row(r: &Row) -> rusqlite::Result<EntityRow> {
    Ok(EntityRow { id: r.get(0)?, name: r.get(1)?, entity_type: r.get(2)? })
}

/// A graph chunk from `id, doc_id, ordinal`.
pub(super) fn chunk_row(r: &Row) -> rusqlite::Result<ChunkRow> {
    Ok(ChunkRow { id: r.get(0)?, doc_id: r.get(1)?, ordinal: r.get(2)? })
}

/// A graph edge from `id, source_id, target_id, rel_type, weight`.
pub(super) fn relation_row(r: &Row) -> rusqlite::Result<RelationRow> {
    Ok(RelationRow {
        id: r.get(0)?,
        source_id: r.get(1)?,
        target_id: r.get(2)?,
        rel_type: r.get(3)?,
        weight: r.get::<_, f64>(4)? as f32,
    })
}

/// Every entity's id, name and type, by id.
pub(crate) fn entity_rows(conn: &Connection) -> Result<Vec<EntityRow>> {
    rows(conn, "SELECT id, name, entity_type FROM entities ORDER BY id", entity_row)
}

fn rows<T>(conn: &Connection, q: &str, f: impl FnMut(&Row) -> rusqlite::Result<T>) -> Result<Vec<T>> {
    super::rows::list(conn, q, [], f)
}

pub(crate) fn graph_data(conn: &Connection) -> Result<GraphData> {
    Ok(GraphData {
        entities: entity_rows(conn)?,
        chunks: rows(conn, "SELECT id, doc_id, ordinal FROM chunks ORDER BY id", chunk_row)?,
        relations: rows(
            conn,
            "SELECT id, source_id, target_id, rel_type, weight FROM relations ORDER BY id",
            relation_row,
        )?,
        mentions: rows(
            conn,
            "SELECT entity_id, chunk_id, SUM(count) FROM entity_support WHERE chunk_id IS NOT NULL
             GROUP BY entity_id, chunk_id ORDER BY entity_id, chunk_id",
            |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?.max(0) as u32)),
        )?,
        synonyms: rows(conn, "SELECT a, b, score FROM synonyms ORDER BY a, b", |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, f64>(2)? as f32))
        })?,
        similar: rows(conn, "SELECT a, b, score FROM similar ORDER BY a, b", |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, f64>(2)? as f32))
        })?,
        facts: rows(
            conn,
            "SELECT DISTINCT f.id, f.subject_id, f.object_id, s.chunk_id FROM facts f
             JOIN fact_support s ON s.fact_id = f.id ORDER BY f.id, s.chunk_id",
            |r| Ok(FactRow { id: r.get(0)?, subject_id: r.get(1)?, object_id: r.get(2)?, chunk_id: r.get(3)? }),
        )?,
    })
}
