//! Communities, reports and claims (covariates): the same rules as crates/rhizome-store/
//! src/communities.rs, in PostgreSQL.

use std::collections::HashSet;

use postgres::types::Type;
use postgres::{GenericClient, Row};
use rhizome_core::{Community, CommunityReport, Covariate, CovariateRecord, Finding, ReportKind};

use super::refresh::{copy_in, PgResult};
use super::rows::covariate_row;
use super::schema;

const T: Type = Type::TEXT;

fn json_list(v: &[String]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

fn parse_list(s: &str) -> Vec<String> {
    serde_json::from_str(s).unwrap_or_default()
}

const COMMUNITY_COLUMNS: &str = "id, level, parent, children, title, entity_ids, fingerprint";

fn community_row(r: &Row) -> Community {
    Community {
        id: r.get(0),
        level: r.get::<_, i32>(1) as u32,
        parent: r.get(2),
        children: parse_list(r.get(3)),
        title: r.get(4),
        entity_ids: parse_list(r.get(5)),
        fingerprint: r.get(6),
    }
}

pub fn communities(c: &mut impl GenericClient) -> PgResult<Vec<Community>> {
    Ok(c.query(&format!("SELECT {COMMUNITY_COLUMNS} FROM communities ORDER BY level, id"), &[])?
        .iter()
        .map(community_row)
        .collect())
}

pub fn community(c: &mut impl GenericClient, id: &str) -> PgResult<Option<Community>> {
    Ok(c.query_opt(&format!("SELECT {COMMUNITY_COLUMNS} FROM communities WHERE id = $1"), &[&id])?
        .as_ref()
        .map(community_row))
}

pub fn communities_of(c: &mut impl GenericClient, entity_ids: &[String]) -> PgResult<Vec<Community>> {
    Ok(c.query(
        &format!(
            "SELECT {COMMUNITY_COLUMNS} FROM communities WHERE id IN
             (SELECT community_id FROM community_members WHERE entity_id = ANY($1)) ORDER BY level, id"
        ),
        &[&entity_ids],
    )?
    .iter()
    .map(community_row)
    .collect())
}

/// Of `ids`, the leaves (no children), in the order asked.
pub fn leaves(c: &mut impl GenericClient, ids: &[String]) -> PgResult<Vec<String>> {
    let leaf: HashSet<String> = c
        .query("SELECT id FROM communities WHERE id = ANY($1) AND children = '[]'", &[&ids])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    Ok(ids.iter().filter(|id| leaf.contains(*id)).cloned().collect())
}

const REPORT_COLUMNS: &str =
    "community_id, level, title, summary, findings, rating, rating_explanation, fingerprint, kind";

fn report_row(r: &Row) -> CommunityReport {
    let findings: Vec<(String, String)> = serde_json::from_str(r.get(4)).unwrap_or_default();
    CommunityReport {
        community_id: r.get(0),
        level: r.get::<_, i32>(1) as u32,
        title: r.get(2),
        summary: r.get(3),
        findings: findings.into_iter().map(|(summary, explanation)| Finding { summary, explanation }).collect(),
        rating: r.get::<_, f64>(5) as f32,
        rating_explanation: r.get(6),
        fingerprint: r.get(7),
        kind: ReportKind::parse(r.get(8)),
    }
}

pub fn reports(c: &mut impl GenericClient) -> PgResult<Vec<CommunityReport>> {
    Ok(c.query(&format!("SELECT {REPORT_COLUMNS} FROM community_reports ORDER BY level, community_id"), &[])?
        .iter()
        .map(report_row)
        .collect())
}

pub fn reports_of(c: &mut impl GenericClient, ids: &[String]) -> PgResult<Vec<CommunityReport>> {
    Ok(c.query(
        &format!(
            "SELECT {REPORT_COLUMNS} FROM community_reports WHERE community_id = ANY($1) ORDER BY level, community_id"
        ),
        &[&ids],
    )?
    .iter()
    .map(report_row)
    .collect())
}

pub fn report_count(c: &mut impl GenericClient) -> PgResult<u64> {
    Ok(c.query_one("SELECT count(*) FROM community_reports", &[])?.get::<_, i64>(0) as u64)
}

/// Replace the communities; drop the reports (and report vectors) of communities that are gone.
pub fn replace(c: &mut impl GenericClient, list: &[Community], graph_version: u64) -> PgResult<()> {
    let ids: Vec<&str> = list.iter().map(|x| x.id.as_str()).collect();
    let gone = "SELECT community_id FROM community_reports WHERE community_id <> ALL($1)";
    c.execute(&format!("DELETE FROM vectors WHERE kind = 'report' AND id IN ({gone})"), &[&ids])?;
    c.execute("DELETE FROM community_reports WHERE community_id <> ALL($1)", &[&ids])?;
    c.batch_execute("DELETE FROM communities; DELETE FROM community_members;")?;
    let members: Vec<(&str, &str)> =
        list.iter().flat_map(|x| x.entity_ids.iter().map(move |e| (x.id.as_str(), e.as_str()))).collect();
    copy_in(c, "community_members(community_id, entity_id)", &[T, T], &members, |m, w| w(&[&m.0, &m.1]))?;
    // The last of duplicate ids wins (INSERT OR REPLACE).
    let mut seen = HashSet::new();
    let mut unique: Vec<&Community> = list.iter().rev().filter(|x| seen.insert(x.id.as_str())).collect();
    unique.reverse();
    copy_in(
        c,
        "communities(id, level, parent, children, title, entity_ids, fingerprint)",
        &[T, Type::INT4, T, T, T, T, T],
        &unique,
        |x, w| {
            w(&[
                &x.id,
                &(x.level as i32),
                &x.parent,
                &json_list(&x.children),
                &x.title,
                &json_list(&x.entity_ids),
                &x.fingerprint,
            ])
        },
    )?;
    schema::set_meta(c, "communities_version", &graph_version.to_string())?;
    schema::bump(c, false).map(drop)
}

/// Write reports of stored communities (with their vectors); others are not written. The
/// last of duplicates wins (INSERT OR REPLACE); rows go in with COPY and one upsert each.
pub fn put_reports(
    c: &mut impl GenericClient,
    list: &[CommunityReport],
    vectors: &[(String, Vec<f32>)],
) -> PgResult<()> {
    let mut seen = HashSet::new();
    let mut reports: Vec<&CommunityReport> =
        list.iter().rev().filter(|r| seen.insert(r.community_id.as_str())).collect();
    reports.reverse();
    copy_in(
        c,
        "st_reports(community_id, level, title, summary, findings, rating, rating_explanation, fingerprint, kind)",
        &[T, Type::INT4, T, T, T, Type::FLOAT8, T, T, T],
        &reports,
        |r, w| {
            let findings: Vec<(&str, &str)> =
                r.findings.iter().map(|f| (f.summary.as_str(), f.explanation.as_str())).collect();
            w(&[
                &r.community_id,
                &(r.level as i32),
                &r.title,
                &r.summary,
                &serde_json::to_string(&findings).unwrap_or_else(|_| "[]".into()),
                &(r.rating as f64),
                &r.rating_explanation,
                &r.fingerprint,
                &r.kind.as_str(),
            ])
        },
    )?;
    if !reports.is_empty() {
        c.execute(
            "INSERT INTO community_reports(community_id, level, title, summary, findings, rating,
             rating_explanation, fingerprint, kind)
             SELECT s.community_id, s.level, s.title, s.summary, s.findings, s.rating, s.rating_explanation,
             s.fingerprint, s.kind FROM st_reports s WHERE EXISTS (SELECT 1 FROM communities x WHERE x.id = s.community_id)
             ON CONFLICT (community_id) DO UPDATE SET level = excluded.level, title = excluded.title,
             summary = excluded.summary, findings = excluded.findings, rating = excluded.rating,
             rating_explanation = excluded.rating_explanation, fingerprint = excluded.fingerprint,
             kind = excluded.kind",
            &[],
        )?;
    }
    // Vectors of the reports written here only.
    let written: HashSet<&str> = reports.iter().map(|r| r.community_id.as_str()).collect();
    let mut seen = HashSet::new();
    let mut vecs: Vec<&(String, Vec<f32>)> = vectors
        .iter()
        .rev()
        .filter(|(id, _)| seen.insert(id.as_str()))
        .filter(|(id, _)| written.contains(id.as_str()))
        .collect();
    vecs.reverse();
    if !vecs.is_empty() {
        super::vector::copy_vectors(c, vecs.iter().map(|(id, v)| ("report", id.as_str(), v.as_slice())))?;
        c.execute(
            "INSERT INTO vectors(kind, id, vec) SELECT s.kind, s.id, s.vec FROM st_vectors s
             WHERE EXISTS (SELECT 1 FROM communities x WHERE x.id = s.id)
             ON CONFLICT (kind, id) DO UPDATE SET vec = excluded.vec",
            &[],
        )?;
        c.execute("TRUNCATE st_vectors", &[])?;
    }
    schema::bump(c, false).map(drop)
}

pub fn insert_covariates(c: &mut impl GenericClient, list: &[&CovariateRecord]) -> PgResult<()> {
    copy_in(
        c,
        "covariates(id, doc_id, chunk_id, covariate_type, claim_type, subject_id, object_id, status, \
                start_date, end_date, description, source_text)",
        &[T; 12],
        list,
        |rec, w| {
            let x = &rec.covariate;
            w(&[
                &x.id,
                &rec.doc_id,
                &rec.chunk_id,
                &x.covariate_type,
                &x.claim_type,
                &x.subject_id,
                &x.object_id,
                &x.status,
                &x.start_date,
                &x.end_date,
                &x.description,
                &x.source_text,
            ])
        },
    )
}

pub fn covariates_of(c: &mut impl GenericClient, entity_ids: &[String]) -> PgResult<Vec<Covariate>> {
    let rows = c.query(
        "SELECT id, covariate_type, claim_type, subject_id, object_id, status, start_date, end_date,
         description, source_text FROM covariates WHERE subject_id = ANY($1) OR object_id = ANY($1)
         ORDER BY id, seq",
        &[&entity_ids],
    )?;
    let mut out: Vec<Covariate> = Vec::new();
    for r in &rows {
        let x = covariate_row(r);
        if out.last().is_none_or(|o| o.id != x.id) {
            out.push(x);
        }
    }
    Ok(out)
}
