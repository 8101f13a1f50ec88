//! Reading records from rows: one reader per record type, each from its columns in the
//! order its doc comment names (from 0; a query may select more columns after them), and
//! the two ways a list is read (all rows of one query, one row per id asked).

use std::collections::HashSet;

use rhizome_core::{
    Chunk, Covariate, Document, Entity, ExtractionFailure, Fact, MentionRecord, Relation, RelationRecord, Result,
};
use rusqlite::{Connection, OptionalExtension, Params, Row, Statement};

use super::sql;

/// A document from `id, source, title, text, pages, meta`.
pub(super) fn document_row(r: &Row) -> rusqlite::Result<Document> {
    Ok(Document {
        id: r.get(0)?,
        source: r.get(1)?,
        title: r.get(2)?,
        text: r.get(3)?,
        pages: crate::pages_from_json(r.get(4)?),
        meta: crate::meta_from_json(r.get(5)?),
    })
}

/// A chunk from `id, doc_id, ordinal, text, tokens, char_start, char_end, page_first,
/// page_last`.
pub(super) fn chunk_row(r: &Row) -> rusqlite::Result<Chunk> {
    Ok(Chunk {
        id: r.get(0)?,
        doc_id: r.get(1)?,
        ordinal: r.get(2)?,
        text: r.get(3)?,
        tokens: r.get(4)?,
        start: r.get(5)?,
        end: r.get(6)?,
        pages: crate::page_range(r.get(7)?, r.get(8)?),
    })
}

/// An entity from `id, name, entity_type, description, importance`.
pub(super) fn entity_row(r: &Row) -> rusqlite::Result<Entity> {
    Ok(Entity {
        id: r.get(0)?,
        name: r.get(1)?,
        entity_type: r.get(2)?,
        description: r.get(3)?,
        importance: r.get::<_, Option<f64>>(4)?.map(|x| x as f32),
    })
}

/// A relation from `id, source_id, target_id, rel_type, description, weight`.
pub(super) fn relation_row(r: &Row) -> rusqlite::Result<Relation> {
    Ok(Relation {
        id: r.get(0)?,
        source_id: r.get(1)?,
        target_id: r.get(2)?,
        rel_type: r.get(3)?,
        description: r.get(4)?,
        weight: r.get::<_, f64>(5)? as f32,
    })
}

/// A support row of an entity from `entity_id, name, entity_type, description, doc_id,
/// chunk_id, count, importance`.
pub(super) fn mention_row(r: &Row) -> rusqlite::Result<MentionRecord> {
    Ok(MentionRecord {
        entity_id: r.get(0)?,
        name: r.get(1)?,
        entity_type: r.get(2)?,
        description: r.get(3)?,
        doc_id: r.get(4)?,
        chunk_id: r.get(5)?,
        count: r.get::<_, i64>(6)?.max(0) as u32,
        importance: r.get::<_, Option<f64>>(7)?.map(|x| x as f32),
    })
}

/// A support row of a relation from the relation's columns ([`relation_row`]), then
/// `doc_id, chunk_id`.
pub(super) fn relation_support_row(r: &Row) -> rusqlite::Result<RelationRecord> {
    Ok(RelationRecord { relation: relation_row(r)?, doc_id: r.get(6)?, chunk_id: r.get(7)? })
}

/// A fact from `id, subject, predicate, object, subject_id, object_id`.
pub(super) fn fact_row(r: &Row) -> rusqlite::Result<Fact> {
    Ok(Fact {
        id: r.get(0)?,
        subject: r.get(1)?,
        predicate: r.get(2)?,
        object: r.get(3)?,
        subject_id: r.get(4)?,
        object_id: r.get(5)?,
    })
}

/// A covariate from `id, covariate_type, claim_type, subject_id, object_id, status,
/// start_date, end_date, description, source_text`.
pub(super) fn covariate_row(r: &Row) -> rusqlite::Result<Covariate> {
    Ok(Covariate {
        id: r.get(0)?,
        covariate_type: r.get(1)?,
        claim_type: r.get(2)?,
        subject_id: r.get(3)?,
        object_id: r.get(4)?,
        status: r.get(5)?,
        start_date: r.get(6)?,
        end_date: r.get(7)?,
        description: r.get(8)?,
        source_text: r.get(9)?,
    })
}

/// An extraction failure from `chunk_id, doc_id, error, attempts`.
pub(super) fn failure_row(r: &Row) -> rusqlite::Result<ExtractionFailure> {
    Ok(ExtractionFailure { chunk_id: r.get(0)?, doc_id: r.get(1)?, error: r.get(2)?, attempts: r.get(3)? })
}

/// Every row of `q` read by `f`, through the statement cache (for a statement run often,
/// such as once per document or per record).
pub(super) fn all<T>(
    conn: &Connection,
    q: &str,
    params: impl Params,
    f: impl FnMut(&Row) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    collect(&mut *conn.prepare_cached(q).map_err(sql)?, params, f)
}

/// As [`all`], for a statement run once for a whole list: prepared anew, taking no room
/// in the statement cache that batch writes rely on.
pub(super) fn list<T>(
    conn: &Connection,
    q: &str,
    params: impl Params,
    f: impl FnMut(&Row) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    collect(&mut conn.prepare(q).map_err(sql)?, params, f)
}

fn collect<T>(stmt: &mut Statement, params: impl Params, f: impl FnMut(&Row) -> rusqlite::Result<T>) -> Result<Vec<T>> {
    let v = stmt.query_map(params, f).map_err(sql)?.collect::<Result<Vec<T>, _>>().map_err(sql)?;
    Ok(v)
}

/// The row of `q` (whose one parameter is an id) for each of `ids`, read by `f`, in the
/// order of `ids`; an id with no row is skipped.
pub(super) fn by_ids<T>(
    conn: &Connection,
    q: &str,
    ids: &[String],
    f: impl Fn(&Row) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(q).map_err(sql)?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.extend(stmt.query_row([id], &f).optional().map_err(sql)?);
    }
    Ok(out)
}

/// The rows of `q` (whose one parameter is an id) for each of `ids` in turn, read by `f`;
/// a record already read for an earlier id (the same `key`) is not given again.
pub(super) fn union_by<T>(
    conn: &Connection,
    q: &str,
    ids: &[String],
    f: impl Fn(&Row) -> rusqlite::Result<T>,
    key: impl Fn(&T) -> &str,
) -> Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(q).map_err(sql)?;
    let mut seen = HashSet::new();
    let mut out: Vec<T> = Vec::new();
    for id in ids {
        for x in stmt.query_map([id], &f).map_err(sql)? {
            let x = x.map_err(sql)?;
            if seen.insert(key(&x).to_string()) {
                out.push(x);
            }
        }
    }
    Ok(out)
}
