//! Rows of Cypher results read into core types (documents, chunks, entities, facts), and
//! the helpers of batched reads: the `$ids` parameter, rows in the order of the ids asked.

use std::collections::HashMap;

use rhizome_core::{Chunk, Document, Entity, Fact};

use super::{Cell, Lit};

pub(super) fn ids_lit(ids: &[String]) -> Lit {
    Lit::List(ids.iter().map(Lit::from).collect())
}

/// Rows keyed by their first column, read by `f` and returned in the order of `ids`
/// (unknown ids skipped, an id asked twice given twice, as the SQLite backend does).
pub(super) fn in_order<T: Clone>(ids: &[String], rows: Vec<Vec<Cell>>, f: impl Fn(&[Cell]) -> T) -> Vec<T> {
    let by: HashMap<String, T> = rows.iter().map(|r| (r[0].str(), f(r))).collect();
    ids.iter().filter_map(|id| by.get(id).cloned()).collect()
}

pub(super) fn one(rows: &[Vec<Cell>]) -> u64 {
    rows.first().and_then(|r| r.first()).map(Cell::int).unwrap_or(0).max(0) as u64
}

/// A document from `id, source, title, text, pages, meta`.
pub(super) fn document(r: &[Cell]) -> Document {
    Document {
        id: r[0].str(),
        source: r[1].str(),
        title: r[2].str(),
        text: r[3].str(),
        pages: crate::pages_from_json(r[4].opt_str()),
        meta: crate::meta_from_json(r.get(5).and_then(Cell::opt_str)),
    }
}

/// A chunk from `id, doc_id, ordinal, text, tokens, char_start, char_end, page_first,
/// page_last`.
pub(super) fn chunk(r: &[Cell]) -> Chunk {
    let opt = |i: usize| match &r[i] {
        Cell::Null => None,
        c => Some(c.int()),
    };
    Chunk {
        id: r[0].str(),
        doc_id: r[1].str(),
        ordinal: r[2].int() as u32,
        text: r[3].str(),
        tokens: r[4].int() as u32,
        start: r[5].int() as u32,
        end: r[6].int() as u32,
        pages: crate::page_range(opt(7), opt(8)),
    }
}

/// An entity from `id, name, entity_type, description, importance`.
pub(super) fn entity(r: &[Cell]) -> Entity {
    Entity {
        id: r[0].str(),
        name: r[1].str(),
        entity_type: r[2].str(),
        description: r[3].str(),
        importance: r[4].opt_float().map(|x| x as f32),
    }
}

/// A fact from `id, subject, predicate, object, subject_id, object_id`.
pub(super) fn fact(r: &[Cell]) -> Fact {
    Fact {
        id: r[0].str(),
        subject: r[1].str(),
        predicate: r[2].str(),
        object: r[3].str(),
        subject_id: r[4].str(),
        object_id: r[5].str(),
    }
}
