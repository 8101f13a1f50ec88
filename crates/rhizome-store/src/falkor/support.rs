//! Support records and the aggregates recomputed from them, with the SQLite backend's
//! rules (same order, same majority vote, same description and weight rules), so that both
//! backends hold the same entities, relations and facts.

use rhizome_core::{Fact, FactRecord, MentionRecord, Relation, RelationRecord};
use serde::{Deserialize, Serialize};

use crate::aggregate::{self, MentionVote};

/// A support record with its sequence number (the order it was written in).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row<T> {
    pub seq: i64,
    pub rec: T,
}

/// The support rows of a list reply (`LRANGE` of a document's list); rows that cannot be
/// read are left out.
pub(crate) fn rows_of<T: serde::de::DeserializeOwned>(v: &super::Value) -> Vec<Row<T>> {
    match v {
        super::Value::Array(xs) => xs.iter().filter_map(|x| serde_json::from_str(&x.as_str()?).ok()).collect(),
        _ => Vec::new(),
    }
}

/// An entity as its support makes it.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityAgg {
    pub name: String,
    pub entity_type: String,
    pub description: String,
    pub importance: Option<f64>,
}

fn chunk_key(c: &Option<String>) -> &str {
    c.as_deref().unwrap_or("")
}

pub fn sort_mentions(rows: &mut [Row<MentionRecord>]) {
    rows.sort_by(|a, b| {
        (&a.rec.doc_id, chunk_key(&a.rec.chunk_id), &a.rec.name, a.seq).cmp(&(
            &b.rec.doc_id,
            chunk_key(&b.rec.chunk_id),
            &b.rec.name,
            b.seq,
        ))
    });
}

/// Distinct non-empty descriptions in document order, and their fingerprint (rows sorted
/// by [`sort_mentions`]).
pub fn descriptions(rows: &[Row<MentionRecord>]) -> (Vec<String>, String) {
    aggregate::descriptions(rows.iter().map(|r| r.rec.description.as_str()))
}

/// The entity its (sorted) rows make ([`aggregate::entity_row`], the extractor's
/// judgements averaged in the order they were written); `summary` is the stored
/// (fingerprint, summary).
pub fn entity(rows: &[Row<MentionRecord>], summary: Option<&(String, String)>) -> Option<EntityAgg> {
    if rows.is_empty() {
        return None;
    }
    let votes: Vec<MentionVote<'_>> = rows
        .iter()
        .map(|r| MentionVote {
            doc_id: &r.rec.doc_id,
            name: &r.rec.name,
            entity_type: &r.rec.entity_type,
            description: &r.rec.description,
            count: r.rec.count as i64,
            importance: r.rec.importance.map(f64::from),
        })
        .collect();
    let mut by_seq: Vec<&Row<MentionRecord>> = rows.iter().collect();
    by_seq.sort_by_key(|r| r.seq);
    let judged: Vec<f64> = by_seq.iter().filter_map(|r| r.rec.importance.map(f64::from)).collect();
    let (name, entity_type, descs, fp, importance) = aggregate::entity_row_judged(&votes, &judged);
    let summary = summary.filter(|(f, _)| *f == fp).map(|(_, s)| s.clone());
    Some(EntityAgg { name, entity_type, description: aggregate::entity_description(&descs, summary), importance })
}

/// The relation its rows make (weights summed, the first non-empty description).
pub fn relation(rows: &mut [Row<RelationRecord>]) -> Option<(Relation, f64)> {
    rows.sort_by(|a, b| {
        (&a.rec.doc_id, chunk_key(&a.rec.chunk_id), &a.rec.relation.rel_type, a.seq).cmp(&(
            &b.rec.doc_id,
            chunk_key(&b.rec.chunk_id),
            &b.rec.relation.rel_type,
            b.seq,
        ))
    });
    let first = rows.first()?;
    let (weight, description) = aggregate::relation_row(
        rows.iter().map(|r| (r.rec.relation.description.as_str(), r.rec.relation.weight as f64)),
    );
    let mut rel = first.rec.relation.clone();
    rel.description = description;
    rel.weight = weight as f32;
    Some((rel, weight))
}

/// The fact its rows make (the first row's wording), and the chunks supporting it ("" for
/// none), sorted and distinct.
pub fn fact(rows: &mut [Row<FactRecord>]) -> Option<(Fact, Vec<String>)> {
    rows.sort_by(|a, b| {
        (&a.rec.doc_id, chunk_key(&a.rec.chunk_id), a.seq).cmp(&(&b.rec.doc_id, chunk_key(&b.rec.chunk_id), b.seq))
    });
    let first = rows.first()?;
    let mut chunks: Vec<String> = rows.iter().map(|r| chunk_key(&r.rec.chunk_id).to_string()).collect();
    chunks.sort();
    chunks.dedup();
    Some((first.rec.fact.clone(), chunks))
}
