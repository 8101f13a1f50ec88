//! Reading records from rows: one reader per record type, each from its columns in the
//! order its doc comment names (from 0; a query may select more columns after them).

use postgres::Row;
use rhizome_core::{
    Chunk, ChunkRow, Covariate, Document, Entity, EntityRow, ExtractionFailure, Fact, MentionRecord, Relation,
    RelationRecord, RelationRow,
};

/// A document from `id, source, title, text, pages, meta`.
pub(super) fn document_row(r: &Row) -> Document {
    Document {
        id: r.get(0),
        source: r.get(1),
        title: r.get(2),
        text: r.get(3),
        pages: crate::pages_from_json(r.get(4)),
        meta: crate::meta_from_json(r.get(5)),
    }
}

/// A chunk from `id, doc_id, ordinal, text, tokens, char_start, char_end, page_first,
/// page_last`.
pub(super) fn chunk_row(r: &Row) -> Chunk {
    let int = |i: usize| r.get::<_, i32>(i) as u32;
    let opt = |i: usize| r.get::<_, Option<i32>>(i).map(i64::from);
    Chunk {
        id: r.get(0),
        doc_id: r.get(1),
        ordinal: int(2),
        text: r.get(3),
        tokens: int(4),
        start: int(5),
        end: int(6),
        pages: crate::page_range(opt(7), opt(8)),
    }
}

/// An entity from `id, name, entity_type, description, importance`.
pub(super) fn entity_row(r: &Row) -> Entity {
    Entity {
        id: r.get(0),
        name: r.get(1),
        entity_type: r.get(2),
        description: r.get(3),
        importance: r.get::<_, Option<f64>>(4).map(|x| x as f32),
    }
}

/// A relation from `id, source_id, target_id, rel_type, description, weight`.
pub(super) fn relation_row(r: &Row) -> Relation {
    Relation {
        id: r.get(0),
        source_id: r.get(1),
        target_id: r.get(2),
        rel_type: r.get(3),
        description: r.get(4),
        weight: r.get::<_, f64>(5) as f32,
    }
}

/// A support row of an entity from `entity_id, name, entity_type, description, doc_id,
/// chunk_id, count, importance`.
pub(super) fn mention_row(r: &Row) -> MentionRecord {
    MentionRecord {
        entity_id: r.get(0),
        name: r.get(1),
        entity_type: r.get(2),
        description: r.get(3),
        doc_id: r.get(4),
        chunk_id: r.get(5),
        // Written as `count as i32`: read back as it was written.
        count: r.get::<_, i32>(6) as u32,
        importance: r.get::<_, Option<f64>>(7).map(|x| x as f32),
    }
}

/// A support row of a relation from the relation's columns ([`relation_row`]), then
/// `doc_id, chunk_id`.
pub(super) fn relation_support_row(r: &Row) -> RelationRecord {
    RelationRecord { relation: relation_row(r), doc_id: r.get(6), chunk_id: r.get(7) }
}

/// A fact from `id, subject, predicate, object, subject_id, object_id`.
pub(super) fn fact_row(r: &Row) -> Fact {
    Fact {
        id: r.get(0),
        subject: r.get(1),
        predicate: r.get(2),
        object: r.get(3),
        subject_id: r.get(4),
        object_id: r.get(5),
    }
}

/// A covariate from `id, covariate_type, claim_type, subject_id, object_id, status,
/// start_date, end_date, description, source_text`.
pub(super) fn covariate_row(r: &Row) -> Covariate {
    Covariate {
        id: r.get(0),
        covariate_type: r.get(1),
        claim_type: r.get(2),
        subject_id: r.get(3),
        object_id: r.get(4),
        status: r.get(5),
        start_date: r.get(6),
        end_date: r.get(7),
        description: r.get(8),
        source_text: r.get(9),
    }
}

/// An extraction failure from `chunk_id, doc_id, error, attempts`.
pub(super) fn failure_row(r: &Row) -> ExtractionFailure {
    ExtractionFailure { chunk_id: r.get(0), doc_id: r.get(1), error: r.get(2), attempts: r.get::<_, i32>(3) as u32 }
}

/// A graph node from `id, name, entity_type` ([`rhizome_core::GraphData`]'s entities).
pub(super) fn graph_entity_row(r: &Row) -> EntityRow {
    EntityRow { id: r.get(0), name: r.get(1), entity_type: r.get(2) }
}

/// A graph chunk from `id, doc_id, ordinal`.
pub(super) fn graph_chunk_row(r: &Row) -> ChunkRow {
    ChunkRow { id: r.get(0), doc_id: r.get(1), ordinal: r.get::<_, i32>(2) as u32 }
}

/// A graph edge from `id, source_id, target_id, rel_type, weight`.
pub(super) fn graph_relation_row(r: &Row) -> RelationRow {
    RelationRow {
        id: r.get(0),
        source_id: r.get(1),
        target_id: r.get(2),
        rel_type: r.get(3),
        weight: r.get::<_, f64>(4) as f32,
    }
}
