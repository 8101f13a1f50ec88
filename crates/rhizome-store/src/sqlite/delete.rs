//! Deleting a document on SQLite: its support rows, chunks, postings and vectors go, the
//! aggregates they touched are recomputed, and entities whose name went are re-keyed
//! (the support rule of `rhizome_core::store`).

use std::collections::{BTreeMap, BTreeSet};

use rhizome_core::{DeleteReport, EmbedNames, Result};
use rusqlite::{params, Connection};

use super::write::{exec, refresh_entity, refresh_fact, refresh_relation, Refreshed};
use super::{meta, postings, rows, sql};
use crate::aggregate::Rekeys;
use crate::vectors::encode;

/// Remove `doc_id` and everything only it supported, inside the caller's transaction `tx`.
pub(super) fn delete(tx: &Connection, doc_id: &str, embed: EmbedNames<'_>) -> Result<DeleteReport> {
    let rekeys = Rekeys::plan(&remaining_names(tx, doc_id)?, embed)?;
    let mut report = DeleteReport::default();
    let ids = |q: &str| -> Result<Vec<String>> { rows::list(tx, q, [doc_id], |r| r.get(0)) };
    let mut entity_ids: BTreeSet<String> =
        ids("SELECT DISTINCT entity_id FROM entity_support WHERE doc_id = ?1")?.into_iter().collect();
    let mut relation_ids: BTreeSet<String> =
        ids("SELECT DISTINCT relation_id FROM relation_support WHERE doc_id = ?1")?.into_iter().collect();
    let mut fact_ids: BTreeSet<String> =
        ids("SELECT DISTINCT fact_id FROM fact_support WHERE doc_id = ?1")?.into_iter().collect();
    let chunks: Vec<(i64, String)> =
        rows::list(tx, "SELECT rowid, id FROM chunks WHERE doc_id = ?1", [doc_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    for (rowid, id) in &chunks {
        postings::unindex_chunk(tx, *rowid)?;
        exec(tx, "DELETE FROM vectors WHERE kind = 'chunk' AND id = ?1", [id]).map_err(sql)?;
        let (lo, hi) = rhizome_core::ids::sentence_id_range(id);
        exec(tx, "DELETE FROM vectors WHERE kind = 'sentence' AND id >= ?1 AND id < ?2", [lo, hi]).map_err(sql)?;
    }
    report.chunks = exec(tx, "DELETE FROM chunks WHERE doc_id = ?1", [doc_id]).map_err(sql)? as u64;
    exec(tx, "DELETE FROM partial_documents WHERE doc_id = ?1", [doc_id]).map_err(sql)?;
    for table in [
        "entity_support",
        "relation_support",
        "fact_support",
        "similar",
        "extraction_failures",
        "covariates",
        "document_aliases",
        "document_tags",
    ] {
        exec(tx, &format!("DELETE FROM {table} WHERE doc_id = ?1"), [doc_id]).map_err(sql)?;
    }
    rekey(tx, &rekeys, &mut relation_ids, &mut fact_ids)?;
    entity_ids.extend(rekeys.keys.values().cloned());
    let mut created = false;
    for id in &entity_ids {
        match refresh_entity(tx, id)? {
            Refreshed::Removed => report.entities += 1,
            Refreshed::Created => created = true,
            Refreshed::Kept => {}
        }
    }
    for id in &relation_ids {
        if refresh_relation(tx, id)? == Refreshed::Removed {
            report.relations += 1;
        }
    }
    for id in &fact_ids {
        if refresh_fact(tx, id)? == Refreshed::Removed {
            report.facts += 1;
        }
    }
    report.documents = exec(tx, "DELETE FROM documents WHERE id = ?1", [doc_id]).map_err(sql)? as u64;
    if report.entities > 0 || created {
        meta::set_meta(tx, "synonyms_dirty", "1")?;
    }
    meta::bump_graph_version(tx)?;
    Ok(report)
}

/// The support that remains of the entities `doc_id` supports once its rows go: (name,
/// count) rows by entity id.
fn remaining_names(conn: &Connection, doc_id: &str) -> Result<BTreeMap<String, Vec<(String, i64)>>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT entity_id, name, count FROM entity_support WHERE doc_id != ?1
             AND entity_id IN (SELECT entity_id FROM entity_support WHERE doc_id = ?1)",
        )
        .map_err(sql)?;
    let mut out: BTreeMap<String, Vec<(String, i64)>> = BTreeMap::new();
    let rows = stmt.query_map([doc_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).map_err(sql)?;
    for row in rows {
        let (id, name, count): (String, String, i64) = row.map_err(sql)?;
        out.entry(id).or_default().push((name, count));
    }
    Ok(out)
}

/// Move the re-keyed entities' support rows, the relation and fact rows naming them and
/// their summaries to the new ids ([`Rekeys`]), and store the new ids' vectors; the
/// relations and facts to refresh are added to `relations` and `facts`.
fn rekey(conn: &Connection, r: &Rekeys, relations: &mut BTreeSet<String>, facts: &mut BTreeSet<String>) -> Result<()> {
    let mut moved: BTreeMap<i64, (String, String, String, String)> = BTreeMap::new();
    for (old, new) in &r.keys {
        exec(conn, "UPDATE entity_support SET entity_id = ?2 WHERE entity_id = ?1", params![old, new]).map_err(sql)?;
        // A summary of the same descriptions holds under the new id (unless it has one).
        exec(conn, "UPDATE OR IGNORE entity_summaries SET entity_id = ?2 WHERE entity_id = ?1", params![old, new])
            .map_err(sql)?;
        let mut stmt = conn
            .prepare_cached("SELECT DISTINCT fact_id FROM fact_support WHERE subject_id = ?1 OR object_id = ?1")
            .map_err(sql)?;
        for id in stmt.query_map([old], |x| x.get::<_, String>(0)).map_err(sql)? {
            facts.insert(id.map_err(sql)?);
        }
        exec(conn, "UPDATE fact_support SET subject_id = ?2 WHERE subject_id = ?1", params![old, new]).map_err(sql)?;
        exec(conn, "UPDATE fact_support SET object_id = ?2 WHERE object_id = ?1", params![old, new]).map_err(sql)?;
        let mut stmt = conn
            .prepare_cached(
                "SELECT rowid, relation_id, source_id, rel_type, target_id FROM relation_support
                 WHERE source_id = ?1 OR target_id = ?1",
            )
            .map_err(sql)?;
        let rows =
            stmt.query_map([old], |x| Ok((x.get(0)?, (x.get(1)?, x.get(2)?, x.get(3)?, x.get(4)?)))).map_err(sql)?;
        for row in rows {
            let (rowid, rel) = row.map_err(sql)?;
            moved.insert(rowid, rel);
        }
    }
    for (rowid, (id, source, rel_type, target)) in moved {
        relations.insert(id);
        match r.relation(&source, &rel_type, &target) {
            Some((s, t, id)) => {
                exec(
                    conn,
                    "UPDATE relation_support SET relation_id = ?2, source_id = ?3, target_id = ?4 WHERE rowid = ?1",
                    params![rowid, id, s, t],
                )
                .map_err(sql)?;
                relations.insert(id);
            }
            None => {
                exec(conn, "DELETE FROM relation_support WHERE rowid = ?1", [rowid]).map_err(sql)?;
            }
        }
    }
    for (id, v) in &r.vectors {
        exec(conn, "INSERT OR REPLACE INTO vectors(kind, id, vec) VALUES ('entity', ?1, ?2)", params![id, encode(v)])
            .map_err(sql)?;
    }
    Ok(())
}
