//! The aggregation rules of the support rule, as pure functions shared by every backend:
//! an entity, relation or fact row is recomputed from the support rows that remain, and
//! two backends given the same support rows (in the same order) compute the same row.

use std::collections::BTreeMap;

/// Pick the value with the largest weight; ties go to the smallest value (byte order).
pub fn majority(votes: &BTreeMap<String, u64>) -> String {
    let mut best: Option<(&String, u64)> = None;
    for (k, &v) in votes {
        if best.is_none_or(|(_, bv)| v > bv) {
            best = Some((k, v));
        }
    }
    best.map(|(k, _)| k.clone()).unwrap_or_default()
}

/// Distinct non-empty descriptions in the order given (support rows ordered by document,
/// chunk, name), and the fingerprint a summary of exactly them carries.
pub fn descriptions<'a>(all: impl IntoIterator<Item = &'a str>) -> (Vec<String>, String) {
    let mut out: Vec<String> = Vec::new();
    for d in all {
        if !d.is_empty() && !out.iter().any(|o| o == d) {
            out.push(d.to_string());
        }
    }
    let refs: Vec<&str> = out.iter().map(String::as_str).collect();
    let fp = rhizome_core::ids::content_id("sum_", &refs);
    (out, fp)
}

/// An entity's description: its summary when one matches its descriptions, else the
/// first three descriptions.
pub fn entity_description(descriptions: &[String], summary: Option<String>) -> String {
    summary.unwrap_or_else(|| descriptions.iter().take(3).cloned().collect::<Vec<_>>().join("\n"))
}

/// One support row of an entity, in support order (document, chunk, name).
pub struct MentionVote<'a> {
    pub name: &'a str,
    pub entity_type: &'a str,
    pub description: &'a str,
    pub count: i64,
    pub importance: Option<f64>,
}

/// The entity row its support makes: (name, type, descriptions, fingerprint, importance).
pub fn entity_row(rows: &[MentionVote<'_>]) -> (String, String, Vec<String>, String, Option<f64>) {
    let (mut names, mut types) = (BTreeMap::new(), BTreeMap::new());
    for r in rows {
        *names.entry(r.name.to_string()).or_insert(0) += r.count.max(1) as u64;
        *types.entry(r.entity_type.to_string()).or_insert(0) += r.count.max(1) as u64;
    }
    let (descriptions, fp) = descriptions(rows.iter().map(|r| r.description));
    let judged: Vec<f64> = rows.iter().filter_map(|r| r.importance).collect();
    let importance = (!judged.is_empty()).then(|| judged.iter().sum::<f64>() / judged.len() as f64);
    (majority(&names), majority(&types), descriptions, fp, importance)
}

/// A relation's (weight, description) from its support (weights summed in support
/// order; the first non-empty description).
pub fn relation_row<'a>(rows: impl IntoIterator<Item = (&'a str, f64)>) -> (f64, String) {
    let rows: Vec<(&str, f64)> = rows.into_iter().collect();
    let weight: f64 = rows.iter().map(|r| r.1).sum();
    let description = rows.iter().map(|r| r.0).find(|d| !d.is_empty()).unwrap_or("");
    (weight, description.to_string())
}
