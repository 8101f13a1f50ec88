//! Deleting a document on PostgreSQL: its support rows, chunks and vectors go, the
//! aggregates they touched are recomputed, and entities whose name went are re-keyed
//! (the support rule of `rhizome_core::store`).

use std::collections::BTreeMap;

use postgres::GenericClient;
use rhizome_core::DeleteReport;

use super::refresh::{self, PgResult};
use super::schema;
use crate::aggregate::Rekeys;

/// The support that remains of the entities `doc_id` supports once its rows go: (name,
/// count) rows by entity id.
pub(super) fn remaining_names(
    c: &mut impl GenericClient,
    doc_id: &str,
) -> PgResult<BTreeMap<String, Vec<(String, i64)>>> {
    let mut out: BTreeMap<String, Vec<(String, i64)>> = BTreeMap::new();
    for r in c.query(
        "SELECT entity_id, name, count FROM entity_support WHERE doc_id != $1
         AND entity_id IN (SELECT entity_id FROM entity_support WHERE doc_id = $1)",
        &[&doc_id],
    )? {
        out.entry(r.get(0)).or_default().push((r.get(1), r.get::<_, i32>(2) as i64));
    }
    Ok(out)
}

/// Move the re-keyed entities' support rows, the relation and fact rows naming them and
/// their summaries to the new ids ([`Rekeys`]), and store the new ids' vectors; the
/// relations and facts to refresh are added to `rels` and `facts`.
fn rekey(c: &mut impl GenericClient, r: &Rekeys, rels: &mut Vec<String>, facts: &mut Vec<String>) -> PgResult<()> {
    if r.is_empty() {
        return Ok(());
    }
    let (old, new): (Vec<&String>, Vec<&String>) = r.keys.iter().unzip();
    let keys = "unnest($1::text[], $2::text[]) AS k(old, new)";
    c.execute(
        &format!("UPDATE entity_support s SET entity_id = k.new FROM {keys} WHERE s.entity_id = k.old"),
        &[&old, &new],
    )?;
    // A summary of the same descriptions holds under the new id (unless it has one).
    c.execute(
        &format!(
            "UPDATE entity_summaries s SET entity_id = k.new FROM {keys} WHERE s.entity_id = k.old
         AND NOT EXISTS (SELECT 1 FROM entity_summaries x WHERE x.entity_id = k.new)"
        ),
        &[&old, &new],
    )?;
    for row in
        c.query("SELECT DISTINCT fact_id FROM fact_support WHERE subject_id = ANY($1) OR object_id = ANY($1)", &[&old])?
    {
        facts.push(row.get(0));
    }
    for end in ["subject_id", "object_id"] {
        c.execute(
            &format!("UPDATE fact_support s SET {end} = k.new FROM {keys} WHERE s.{end} = k.old"),
            &[&old, &new],
        )?;
    }
    let (mut moved, mut dropped) = ((Vec::new(), Vec::new(), Vec::new(), Vec::new()), Vec::new());
    for row in c.query(
        "SELECT seq, relation_id, source_id, rel_type, target_id FROM relation_support
         WHERE source_id = ANY($1) OR target_id = ANY($1)",
        &[&old],
    )? {
        let seq: i64 = row.get(0);
        rels.push(row.get(1));
        match r.relation(row.get(2), row.get(3), row.get(4)) {
            Some((source, target, id)) => {
                rels.push(id.clone());
                moved.0.push(seq);
                moved.1.push(id);
                moved.2.push(source);
                moved.3.push(target);
            }
            None => dropped.push(seq),
        }
    }
    c.execute(
        "UPDATE relation_support s SET relation_id = m.id, source_id = m.s, target_id = m.t
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS m(seq, id, s, t) WHERE s.seq = m.seq",
        &[&moved.0, &moved.1, &moved.2, &moved.3],
    )?;
    c.execute("DELETE FROM relation_support WHERE seq = ANY($1)", &[&dropped])?;
    super::write::upsert_vectors(c, r.vectors.iter().map(|(id, v)| ("entity", id.as_str(), v.as_slice())))
}

pub(super) fn delete_document(c: &mut impl GenericClient, doc_id: &str, rekeys: &Rekeys) -> PgResult<DeleteReport> {
    let mut report = DeleteReport::default();
    let (mut ents, mut rels, mut facts) = (Vec::new(), Vec::new(), Vec::new());
    for r in c.query(
        "SELECT DISTINCT 'e', entity_id FROM entity_support WHERE doc_id = $1
         UNION ALL SELECT DISTINCT 'r', relation_id FROM relation_support WHERE doc_id = $1
         UNION ALL SELECT DISTINCT 'f', fact_id FROM fact_support WHERE doc_id = $1",
        &[&doc_id],
    )? {
        let id: String = r.get(1);
        match r.get::<_, &str>(0) {
            "e" => ents.push(id),
            "r" => rels.push(id),
            _ => facts.push(id),
        }
    }
    super::terms::removing_document(c, doc_id)?;
    for q in [
        "DELETE FROM bm25_postings WHERE chunk_rowid IN (SELECT rowid FROM chunks WHERE doc_id = $1)",
        "DELETE FROM bm25_docs WHERE chunk_rowid IN (SELECT rowid FROM chunks WHERE doc_id = $1)",
        "DELETE FROM vectors WHERE kind = 'chunk' AND id IN (SELECT id FROM chunks WHERE doc_id = $1)",
        // Sentence ids are the chunk's id, '#', a hash: bytewise between `id#` and `id$`.
        "DELETE FROM vectors v USING chunks c WHERE c.doc_id = $1 AND v.kind = 'sentence'
         AND v.id >= c.id || '#' AND v.id < c.id || '$'",
    ] {
        c.execute(q, &[&doc_id])?;
    }
    report.chunks = c.execute("DELETE FROM chunks WHERE doc_id = $1", &[&doc_id])?;
    for table in [
        "partial_documents",
        "entity_support",
        "relation_support",
        "fact_support",
        "similar_chunks",
        "extraction_failures",
        "covariates",
        "document_aliases",
        "document_tags",
    ] {
        c.execute(&format!("DELETE FROM {table} WHERE doc_id = $1"), &[&doc_id])?;
    }
    rekey(c, rekeys, &mut rels, &mut facts)?;
    ents.extend(rekeys.keys.values().cloned());
    for ids in [&mut ents, &mut rels, &mut facts] {
        ids.sort();
        ids.dedup();
    }
    let (created, removed) = refresh::entities(c, &ents)?;
    report.entities = removed as u64;
    report.relations = refresh::relations(c, &rels)? as u64;
    report.facts = refresh::facts(c, &facts)? as u64;
    report.documents = c.execute("DELETE FROM documents WHERE id = $1", &[&doc_id])?;
    if report.entities > 0 || created > 0 {
        schema::set_meta(c, "synonyms_dirty", "1")?;
    }
    schema::bump(c, true)?;
    Ok(report)
}
