//! The support rule, set-based: entity, relation and fact rows recomputed from their
//! remaining support for a whole set of touched ids at once (a fixed number of round
//! trips whatever the number of ids), with the rules of [`crate::aggregate`].

use std::collections::{BTreeMap, HashSet};

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use postgres::GenericClient;

use crate::aggregate::{entity_description, entity_row, relation_row, MentionVote};

pub type PgResult<T> = std::result::Result<T, postgres::Error>;

/// Binary COPY of `items` into `target` (`table(columns)`); nothing is sent for none.
pub fn copy_in<T>(
    c: &mut impl GenericClient,
    target: &str,
    types: &[Type],
    items: &[T],
    mut row: impl FnMut(&T, &mut dyn FnMut(&[&(dyn ToSql + Sync)]) -> PgResult<()>) -> PgResult<()>,
) -> PgResult<()> {
    if items.is_empty() {
        return Ok(());
    }
    let sink = c.copy_in(&format!("COPY {target} FROM STDIN (FORMAT binary)"))?;
    let mut w = BinaryCopyInWriter::new(sink, types);
    for it in items {
        row(it, &mut |vals| w.write(vals))?;
    }
    w.finish()?;
    Ok(())
}

/// Temporary tables a write stages rows in before set-based upserts.
pub const STAGING: &str = r#"
CREATE TEMP TABLE IF NOT EXISTS st_documents(seq INT, id TEXT COLLATE "C", source TEXT, title TEXT,
    text TEXT, language TEXT, indexed_at BIGINT, pages TEXT, meta TEXT) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS st_chunks(seq INT, id TEXT COLLATE "C", doc_id TEXT, ordinal INT,
    text TEXT, tokens INT, char_start INT, char_end INT, page_first INT, page_last INT) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS st_similar(a TEXT COLLATE "C", b TEXT COLLATE "C", score FLOAT8)
    ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS st_vectors(kind TEXT COLLATE "C", id TEXT COLLATE "C", vec vector)
    ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS st_failures(seq INT, chunk_id TEXT COLLATE "C", doc_id TEXT,
    error TEXT, first INT, n INT) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS st_entities(id TEXT COLLATE "C", name TEXT, entity_type TEXT,
    description TEXT, importance FLOAT8) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS st_relations(id TEXT COLLATE "C", source_id TEXT, target_id TEXT,
    rel_type TEXT, description TEXT, weight FLOAT8) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS st_reports(community_id TEXT COLLATE "C", level INT, title TEXT,
    summary TEXT, findings TEXT, rating FLOAT8, rating_explanation TEXT, fingerprint TEXT, kind TEXT)
    ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS st_facts(id TEXT COLLATE "C", subject TEXT, predicate TEXT,
    object TEXT, subject_id TEXT, object_id TEXT) ON COMMIT DELETE ROWS;
"#;

const T: Type = Type::TEXT;

/// Recompute the entities `ids` from their support. Returns (created, removed).
pub fn entities(c: &mut impl GenericClient, ids: &[String]) -> PgResult<(usize, usize)> {
    if ids.is_empty() {
        return Ok((0, 0));
    }
    let existed: HashSet<String> =
        c.query("SELECT id FROM entities WHERE id = ANY($1)", &[&ids])?.iter().map(|r| r.get(0)).collect();
    let rows = c.query(
        "SELECT entity_id, name, entity_type, description, count, importance, doc_id FROM entity_support
         WHERE entity_id = ANY($1) ORDER BY entity_id, doc_id, coalesce(chunk_id, ''), name, seq",
        &[&ids],
    )?;
    let summaries: BTreeMap<String, (String, String)> = c
        .query("SELECT entity_id, fingerprint, summary FROM entity_summaries WHERE entity_id = ANY($1)", &[&ids])?
        .iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2))))
        .collect();
    let mut groups: BTreeMap<&str, Vec<MentionVote<'_>>> = BTreeMap::new();
    for r in &rows {
        groups.entry(r.get(0)).or_default().push(MentionVote {
            doc_id: r.get(6),
            name: r.get(1),
            entity_type: r.get(2),
            description: r.get(3),
            count: r.get::<_, i32>(4) as i64,
            importance: r.get(5),
        });
    }
    let mut out: Vec<(String, String, String, String, Option<f64>)> = Vec::with_capacity(groups.len());
    for (id, votes) in &groups {
        let (name, ty, descriptions, fp, importance) = entity_row(votes);
        let summary = summaries.get(*id).filter(|(f, _)| *f == fp).map(|(_, s)| s.clone());
        out.push((id.to_string(), name, ty, entity_description(&descriptions, summary), importance));
    }
    copy_in(
        c,
        "st_entities(id, name, entity_type, description, importance)",
        &[T, T, T, T, Type::FLOAT8],
        &out,
        |e, w| w(&[&e.0, &e.1, &e.2, &e.3, &e.4]),
    )?;
    if !out.is_empty() {
        c.execute(
            "INSERT INTO entities(id, name, entity_type, description, importance)
             SELECT id, name, entity_type, description, importance FROM st_entities
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, entity_type = excluded.entity_type,
             description = excluded.description, importance = excluded.importance",
            &[],
        )?;
        c.execute("TRUNCATE st_entities", &[])?;
    }
    let gone: Vec<&String> = ids.iter().filter(|id| !groups.contains_key(id.as_str())).collect();
    let created = groups.keys().filter(|id| !existed.contains(**id)).count();
    let removed = gone.iter().filter(|id| existed.contains(id.as_str())).count();
    if !gone.is_empty() {
        c.execute("DELETE FROM entities WHERE id = ANY($1)", &[&gone])?;
        c.execute("DELETE FROM vectors WHERE kind = 'entity' AND id = ANY($1)", &[&gone])?;
        c.execute("DELETE FROM synonyms WHERE a = ANY($1) OR b = ANY($1)", &[&gone])?;
        c.execute("DELETE FROM entity_summaries WHERE entity_id = ANY($1)", &[&gone])?;
    }
    Ok((created, removed))
}

/// Recompute the relations `ids`. Returns how many were removed.
pub fn relations(c: &mut impl GenericClient, ids: &[String]) -> PgResult<usize> {
    if ids.is_empty() {
        return Ok(0);
    }
    let rows = c.query(
        "SELECT relation_id, source_id, target_id, rel_type, description, weight FROM relation_support
         WHERE relation_id = ANY($1) ORDER BY relation_id, doc_id, coalesce(chunk_id, ''), rel_type, seq",
        &[&ids],
    )?;
    let mut groups: BTreeMap<&str, Vec<&postgres::Row>> = BTreeMap::new();
    for r in &rows {
        groups.entry(r.get(0)).or_default().push(r);
    }
    let out: Vec<(String, String, String, String, String, f64)> = groups
        .iter()
        .map(|(id, rs)| {
            let (weight, description) = relation_row(rs.iter().map(|r| (r.get::<_, &str>(4), r.get::<_, f64>(5))));
            (id.to_string(), rs[0].get(1), rs[0].get(2), rs[0].get(3), description, weight)
        })
        .collect();
    copy_in(
        c,
        "st_relations(id, source_id, target_id, rel_type, description, weight)",
        &[T, T, T, T, T, Type::FLOAT8],
        &out,
        |x, w| w(&[&x.0, &x.1, &x.2, &x.3, &x.4, &x.5]),
    )?;
    if !out.is_empty() {
        c.execute(
            "INSERT INTO relations(id, source_id, target_id, rel_type, description, weight)
             SELECT id, source_id, target_id, rel_type, description, weight FROM st_relations
             ON CONFLICT (id) DO UPDATE SET description = excluded.description, weight = excluded.weight",
            &[],
        )?;
        c.execute("TRUNCATE st_relations", &[])?;
    }
    let gone: Vec<&String> = ids.iter().filter(|id| !groups.contains_key(id.as_str())).collect();
    if gone.is_empty() {
        return Ok(0);
    }
    Ok(c.execute("DELETE FROM relations WHERE id = ANY($1)", &[&gone])? as usize)
}

/// Recompute the facts `ids` (a fact is its first support row). Returns how many were removed.
pub fn facts(c: &mut impl GenericClient, ids: &[String]) -> PgResult<usize> {
    if ids.is_empty() {
        return Ok(0);
    }
    let n = c.execute(
        "INSERT INTO facts(id, subject, predicate, object, subject_id, object_id)
         SELECT DISTINCT ON (fact_id) fact_id, subject, predicate, object, subject_id, object_id
         FROM fact_support WHERE fact_id = ANY($1) ORDER BY fact_id, doc_id, coalesce(chunk_id, ''), seq
         ON CONFLICT (id) DO UPDATE SET subject = excluded.subject, predicate = excluded.predicate,
         object = excluded.object, subject_id = excluded.subject_id, object_id = excluded.object_id",
        &[&ids],
    )?;
    if n as usize == ids.len() {
        return Ok(0);
    }
    let gone = "SELECT x FROM unnest($1::text[]) x WHERE NOT EXISTS (SELECT 1 FROM fact_support s WHERE s.fact_id = x)";
    c.execute(&format!("DELETE FROM vectors WHERE kind = 'fact' AND id IN ({gone})"), &[&ids])?;
    Ok(c.execute(&format!("DELETE FROM facts WHERE id IN ({gone})"), &[&ids])? as usize)
}
