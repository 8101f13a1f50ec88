//! Communities, their reports and claims (covariates) in SQLite.
//!
//! Communities and reports are derived from the whole graph, not supported by documents:
//! they are replaced as a set ([`replace`]) and carry the graph version they were computed
//! at (meta `communities_version`). A report survives a recomputation while its community
//! keeps the same id and fingerprint. Covariates are supported by a document like every
//! other extracted record, and go with it.

use std::collections::HashSet;

use rhizome_core::{Community, CommunityReport, Covariate, CovariateRecord, Finding, ReportKind, Result};
use rusqlite::{params, Connection, OptionalExtension};

use super::{meta, rows, sql};
use crate::vectors::encode;

pub const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS communities(id TEXT PRIMARY KEY, level INTEGER NOT NULL,
    parent TEXT, children TEXT NOT NULL, title TEXT NOT NULL, entity_ids TEXT NOT NULL,
    fingerprint TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS community_members(community_id TEXT NOT NULL, entity_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS community_members_entity ON community_members(entity_id);
CREATE TABLE IF NOT EXISTS community_reports(community_id TEXT PRIMARY KEY,
    level INTEGER NOT NULL, title TEXT NOT NULL, summary TEXT NOT NULL, findings TEXT NOT NULL,
    rating REAL NOT NULL, rating_explanation TEXT NOT NULL, fingerprint TEXT NOT NULL,
    kind TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS covariates(id TEXT NOT NULL, doc_id TEXT NOT NULL, chunk_id TEXT,
    covariate_type TEXT NOT NULL, claim_type TEXT NOT NULL, subject_id TEXT NOT NULL,
    object_id TEXT, status TEXT NOT NULL, start_date TEXT NOT NULL, end_date TEXT NOT NULL,
    description TEXT NOT NULL, source_text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS covariates_subject ON covariates(subject_id);
CREATE INDEX IF NOT EXISTS covariates_object ON covariates(object_id);
CREATE INDEX IF NOT EXISTS covariates_doc ON covariates(doc_id);
"#;

fn json_list(v: &[String]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

fn parse_list(s: &str) -> Vec<String> {
    serde_json::from_str(s).unwrap_or_default()
}

/// Members of communities written before `community_members` existed.
pub fn backfill_members(conn: &Connection) -> Result<()> {
    // Read first: a reader opening the index while a writer works must not need the
    // write lock (it would wait for the writer's transaction, or fail as busy).
    let (communities, members): (bool, bool) = conn
        .query_row("SELECT EXISTS(SELECT 1 FROM communities), EXISTS(SELECT 1 FROM community_members)", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .map_err(sql)?;
    if communities && !members {
        conn.execute(
            "INSERT INTO community_members(community_id, entity_id)
             SELECT c.id, j.value FROM communities c, json_each(c.entity_ids) j",
            [],
        )
        .map_err(sql)?;
    }
    Ok(())
}

const COMMUNITY_COLUMNS: &str = "id, level, parent, children, title, entity_ids, fingerprint";

fn community_row(r: &rusqlite::Row) -> rusqlite::Result<Community> {
    Ok(Community {
        id: r.get(0)?,
        level: r.get(1)?,
        parent: r.get(2)?,
        children: parse_list(&r.get::<_, String>(3)?),
        title: r.get(4)?,
        entity_ids: parse_list(&r.get::<_, String>(5)?),
        fingerprint: r.get(6)?,
    })
}

pub fn communities(conn: &Connection) -> Result<Vec<Community>> {
    rows::list(conn, &format!("SELECT {COMMUNITY_COLUMNS} FROM communities ORDER BY level, id"), [], community_row)
}

pub fn community(conn: &Connection, id: &str) -> Result<Option<Community>> {
    let q = format!("SELECT {COMMUNITY_COLUMNS} FROM communities WHERE id = ?1");
    conn.query_row(&q, [id], community_row).optional().map_err(sql)
}

pub fn communities_of(conn: &Connection, entity_ids: &[String]) -> Result<Vec<Community>> {
    let q = "SELECT community_id FROM community_members WHERE entity_id = ?1";
    let mut ids: Vec<String> = rows::union_by(conn, q, entity_ids, |r| r.get(0), String::as_str)?;
    ids.sort();
    let q = format!("SELECT {COMMUNITY_COLUMNS} FROM communities WHERE id = ?1");
    let mut out = rows::by_ids(conn, &q, &ids, community_row)?;
    out.sort_by(|a, b| (a.level, &a.id).cmp(&(b.level, &b.id)));
    Ok(out)
}

/// Of `ids`, the leaves (no children), in the order asked.
pub fn leaves(conn: &Connection, ids: &[String]) -> Result<Vec<String>> {
    let q = "SELECT id FROM communities WHERE id = ?1 AND children = '[]'";
    let leaf: std::collections::HashSet<String> = rows::by_ids(conn, q, ids, |r| r.get(0))?.into_iter().collect();
    Ok(ids.iter().filter(|id| leaf.contains(*id)).cloned().collect())
}

const REPORT_COLUMNS: &str =
    "community_id, level, title, summary, findings, rating, rating_explanation, fingerprint, kind";

pub fn reports(conn: &Connection) -> Result<Vec<CommunityReport>> {
    let q = format!("SELECT {REPORT_COLUMNS} FROM community_reports ORDER BY level, community_id");
    rows::list(conn, &q, [], report_row)
}

pub fn reports_of(conn: &Connection, community_ids: &[String]) -> Result<Vec<CommunityReport>> {
    let q = format!("SELECT {REPORT_COLUMNS} FROM community_reports WHERE community_id = ?1");
    let mut out = rows::by_ids(conn, &q, community_ids, report_row)?;
    out.sort_by(|a, b| (a.level, &a.community_id).cmp(&(b.level, &b.community_id)));
    out.dedup_by(|a, b| a.community_id == b.community_id);
    Ok(out)
}

pub fn report_count(conn: &Connection) -> Result<u64> {
    conn.query_row("SELECT COUNT(*) FROM community_reports", [], |r| r.get::<_, i64>(0)).map(|n| n as u64).map_err(sql)
}

fn report_row(r: &rusqlite::Row) -> rusqlite::Result<CommunityReport> {
    let findings: Vec<(String, String)> = serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or_default();
    Ok(CommunityReport {
        community_id: r.get(0)?,
        level: r.get(1)?,
        title: r.get(2)?,
        summary: r.get(3)?,
        findings: findings.into_iter().map(|(summary, explanation)| Finding { summary, explanation }).collect(),
        rating: r.get::<_, f64>(5)? as f32,
        rating_explanation: r.get(6)?,
        fingerprint: r.get(7)?,
        kind: ReportKind::parse(&r.get::<_, String>(8)?),
    })
}

pub fn version(conn: &Connection) -> Result<Option<u64>> {
    Ok(meta::get_meta(conn, "communities_version")?.and_then(|v| v.parse().ok()))
}

/// Replace the communities; drop the reports (and report vectors) of communities that are
/// gone. A community that keeps its id keeps its members, and its report stays until the
/// refresh compares the report's inputs.
pub fn replace(conn: &mut Connection, list: &[Community], graph_version: u64) -> Result<()> {
    let tx = conn.transaction().map_err(sql)?;
    let current: HashSet<&str> = list.iter().map(|c| c.id.as_str()).collect();
    let stale: Vec<String> = {
        let v: Vec<String> = rows::list(&tx, "SELECT community_id FROM community_reports", [], |r| r.get(0))?;
        v.into_iter().filter(|id| !current.contains(id.as_str())).collect()
    };
    for id in &stale {
        tx.execute("DELETE FROM community_reports WHERE community_id = ?1", [id]).map_err(sql)?;
        tx.execute("DELETE FROM vectors WHERE kind = 'report' AND id = ?1", [id]).map_err(sql)?;
    }
    tx.execute("DELETE FROM communities", []).map_err(sql)?;
    tx.execute("DELETE FROM community_members", []).map_err(sql)?;
    for c in list {
        for e in &c.entity_ids {
            tx.execute("INSERT INTO community_members(community_id, entity_id) VALUES (?1, ?2)", params![c.id, e])
                .map_err(sql)?;
        }
        tx.execute(
            "INSERT OR REPLACE INTO communities(id, level, parent, children, title, entity_ids,
             fingerprint) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![c.id, c.level, c.parent, json_list(&c.children), c.title, json_list(&c.entity_ids), c.fingerprint],
        )
        .map_err(sql)?;
    }
    meta::set_meta(&tx, "communities_version", &graph_version.to_string())?;
    tx.commit().map_err(sql)
}

/// The graph version at which every report was last checked against its inputs.
pub fn reports_version(conn: &Connection) -> Result<Option<u64>> {
    Ok(meta::get_meta(conn, "reports_version")?.and_then(|v| v.parse().ok()))
}

pub fn set_reports_version(conn: &Connection, v: u64) -> Result<()> {
    meta::set_meta(conn, "reports_version", &v.to_string())
}

/// Write reports; a report whose community is no longer there (another process replaced
/// the communities meanwhile) is not written.
pub fn put_reports(conn: &mut Connection, list: &[CommunityReport], vectors: &[(String, Vec<f32>)]) -> Result<()> {
    let tx = conn.transaction().map_err(sql)?;
    let exists = |id: &str| -> Result<bool> {
        tx.query_row("SELECT 1 FROM communities WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map(|o| o.is_some())
            .map_err(sql)
    };
    let mut kept = HashSet::new();
    for r in list {
        if !exists(&r.community_id)? {
            continue;
        }
        kept.insert(r.community_id.as_str());
        let findings: Vec<(&str, &str)> =
            r.findings.iter().map(|f| (f.summary.as_str(), f.explanation.as_str())).collect();
        tx.execute(
            "INSERT OR REPLACE INTO community_reports(community_id, level, title, summary,
             findings, rating, rating_explanation, fingerprint, kind)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                r.community_id,
                r.level,
                r.title,
                r.summary,
                serde_json::to_string(&findings).unwrap_or_else(|_| "[]".into()),
                r.rating as f64,
                r.rating_explanation,
                r.fingerprint,
                r.kind.as_str()
            ],
        )
        .map_err(sql)?;
    }
    for (id, v) in vectors.iter().filter(|(id, _)| kept.contains(id.as_str())) {
        tx.execute("INSERT OR REPLACE INTO vectors(kind, id, vec) VALUES ('report', ?1, ?2)", params![id, encode(v)])
            .map_err(sql)?;
    }
    tx.commit().map_err(sql)
}

pub fn insert_covariates(conn: &Connection, list: &[&CovariateRecord]) -> Result<()> {
    for rec in list {
        let c = &rec.covariate;
        conn.execute(
            "INSERT INTO covariates(id, doc_id, chunk_id, covariate_type, claim_type, subject_id,
             object_id, status, start_date, end_date, description, source_text)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                c.id,
                rec.doc_id,
                rec.chunk_id,
                c.covariate_type,
                c.claim_type,
                c.subject_id,
                c.object_id,
                c.status,
                c.start_date,
                c.end_date,
                c.description,
                c.source_text
            ],
        )
        .map_err(sql)?;
    }
    Ok(())
}

pub fn covariates_of(conn: &Connection, entity_ids: &[String]) -> Result<Vec<Covariate>> {
    let mut out = rows::union_by(
        conn,
        "SELECT DISTINCT id, covariate_type, claim_type, subject_id, object_id, status,
         start_date, end_date, description, source_text FROM covariates
         WHERE subject_id = ?1 OR object_id = ?1",
        entity_ids,
        rows::covariate_row,
        |c| &c.id,
    )?;
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}
