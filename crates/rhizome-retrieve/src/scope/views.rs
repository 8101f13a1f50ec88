//! Relations and entities as a scope's own documents tell them. A stored relation's
//! weight and description, and an entity's description, are aggregated over every
//! document that supports them; inside a scope they are aggregated again, by the same
//! rules (`rhizome_core::aggregate`), over the support rows of documents in scope only,
//! so that no other document's wording reaches an answer.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use rhizome_core::aggregate;
use rhizome_core::{MentionRecord, RelationRecord};

/// Support order: by document, chunk (none first), then `third`; rows of equal keys keep
/// the order they were written in.
fn support_order(a: (&str, &Option<String>, &str), b: (&str, &Option<String>, &str)) -> Ordering {
    let chunk = |c: &Option<String>| c.as_deref().unwrap_or("").to_string();
    (a.0, chunk(a.1), a.2).cmp(&(b.0, chunk(b.1), b.2))
}

/// (weight, description) of each relation of `rows` (every support row of the relations
/// in scope, in the order written) that a document out of scope supports too, from the
/// rows of documents in `docs` alone.
pub fn relations(rows: Vec<RelationRecord>, docs: &HashSet<String>) -> HashMap<String, (f32, String)> {
    let mut by_id: HashMap<String, Vec<RelationRecord>> = HashMap::new();
    for r in rows {
        by_id.entry(r.relation.id.clone()).or_default().push(r);
    }
    let mut out = HashMap::new();
    for (id, mut rows) in by_id {
        if rows.iter().all(|r| docs.contains(&r.doc_id)) {
            continue;
        }
        rows.retain(|r| docs.contains(&r.doc_id));
        rows.sort_by(|a, b| {
            support_order(
                (&a.doc_id, &a.chunk_id, &a.relation.rel_type),
                (&b.doc_id, &b.chunk_id, &b.relation.rel_type),
            )
        });
        let (weight, description) =
            aggregate::relation_row(rows.iter().map(|r| (r.relation.description.as_str(), r.relation.weight as f64)));
        out.insert(id, (weight as f32, description));
    }
    out
}

/// The description of each entity of `rows` (every support row of some entities, in the
/// order written) that a document out of scope supports too, from the rows of documents
/// in `docs` alone: their first three distinct descriptions (a stored summary tells
/// every document's descriptions, so it is not used). None: the stored one holds.
pub fn entities(rows: Vec<MentionRecord>, docs: &HashSet<String>) -> HashMap<String, Option<String>> {
    let mut by_id: HashMap<String, Vec<MentionRecord>> = HashMap::new();
    for r in rows {
        by_id.entry(r.entity_id.clone()).or_default().push(r);
    }
    let mut out = HashMap::new();
    for (id, mut rows) in by_id {
        if rows.iter().all(|r| docs.contains(&r.doc_id)) {
            out.insert(id, None);
            continue;
        }
        rows.retain(|r| docs.contains(&r.doc_id));
        rows.sort_by(|a, b| support_order((&a.doc_id, &a.chunk_id, &a.name), (&b.doc_id, &b.chunk_id, &b.name)));
        let (descriptions, _) = aggregate::descriptions(rows.iter().map(|r| r.description.as_str()));
        out.insert(id, Some(aggregate::entity_description(&descriptions, None)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::Relation;

    fn row(doc: &str, description: &str, weight: f32) -> RelationRecord {
        let relation = Relation {
            id: "r".into(),
            source_id: "a".into(),
            target_id: "b".into(),
            rel_type: "KNEW".into(),
            description: description.into(),
            weight,
        };
        RelationRecord { relation, doc_id: doc.into(), chunk_id: None }
    }

    #[test]
    fn a_relation_in_scope_weighs_and_reads_as_its_documents_state_it() {
        let rows = || vec![row("d2", "wrote to", 2.0), row("d1", "", 1.0), row("d3", "met", 0.5)];
        let docs = |d: &[&str]| d.iter().map(|x| x.to_string()).collect::<HashSet<_>>();
        assert!(relations(rows(), &docs(&["d1", "d2", "d3"])).is_empty(), "all support in scope: the stored row");
        assert_eq!(relations(rows(), &docs(&["d1", "d3"]))["r"], (1.5, "met".to_string()));
        assert_eq!(relations(rows(), &docs(&["d1"]))["r"], (1.0, String::new()));
    }
}
