//! Support records and the aggregates recomputed from them, with the SQLite backend's
//! rules (same order, same majority vote, same description and weight rules), so that both
//! backends hold the same entities, relations and facts.

use std::collections::BTreeMap;

use rhizome_core::{Fact, FactRecord, MentionRecord, Relation, RelationRecord};
use serde::{Deserialize, Serialize};

use crate::aggregate::majority;

/// A support record with its sequence number (the order it was written in).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row<T> {
    pub seq: i64,
    pub rec: T,
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
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        let d = &r.rec.description;
        if !d.is_empty() && !out.contains(d) {
            out.push(d.clone());
        }
    }
    let refs: Vec<&str> = out.iter().map(String::as_str).collect();
    let fp = rhizome_core::ids::content_id("sum_", &refs);
    (out, fp)
}

/// The entity its (sorted) rows make; `summary` is the stored (fingerprint, summary).
pub fn entity(rows: &[Row<MentionRecord>], summary: Option<&(String, String)>) -> Option<EntityAgg> {
    if rows.is_empty() {
        return None;
    }
    let (mut names, mut types) = (BTreeMap::new(), BTreeMap::new());
    for r in rows {
        let n = (r.rec.count as u64).max(1);
        *names.entry(r.rec.name.clone()).or_insert(0) += n;
        *types.entry(r.rec.entity_type.clone()).or_insert(0) += n;
    }
    let (descs, fp) = descriptions(rows);
    let description = match summary {
        Some((f, s)) if *f == fp => s.clone(),
        _ => descs.iter().take(3).cloned().collect::<Vec<_>>().join("\n"),
    };
    let mut by_seq: Vec<&Row<MentionRecord>> = rows.iter().collect();
    by_seq.sort_by_key(|r| r.seq);
    let judged: Vec<f64> = by_seq.iter().filter_map(|r| r.rec.importance.map(f64::from)).collect();
    let importance =
        crate::aggregate::importance(&judged, rows.iter().map(|r| (r.rec.doc_id.as_str(), r.rec.count as i64)));
    Some(EntityAgg { name: majority(&names), entity_type: majority(&types), description, importance })
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
    let weight: f64 = rows.iter().map(|r| r.rec.relation.weight as f64).sum();
    let description = rows.iter().map(|r| r.rec.relation.description.as_str()).find(|d| !d.is_empty()).unwrap_or("");
    let mut rel = first.rec.relation.clone();
    rel.description = description.to_string();
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
