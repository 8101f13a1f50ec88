//! GraphRAG's output tables as typed records. Current file and column names are read, and
//! the older ones: `create_final_<table>.parquet`, `name` for an entity's `title`,
//! `document_ids` (a list) for a text unit's `document_id`, `chunk` for its `text`,
//! `raw_content` for a document's `text`, `id` for a community's number, `rank_explanation`
//! for a report's `rating_explanation`. A row without the value it is known by (an id, a
//! name) is skipped with a warning.

use std::path::{Path, PathBuf};

use rhizome_core::{Error, Finding, Result};

use super::parquet_rows::{opt, read_table, req, Cell, Table};

pub struct GrDocument {
    pub id: String,
    pub hrid: Option<i64>,
    pub title: String,
    pub text: String,
    pub text_unit_ids: Vec<String>,
}

pub struct GrTextUnit {
    pub id: String,
    pub hrid: Option<i64>,
    pub text: String,
    /// The documents the unit belongs to (empty when the table does not say).
    pub document_ids: Vec<String>,
}

pub struct GrEntity {
    pub id: String,
    pub title: String,
    pub entity_type: String,
    pub description: String,
    pub text_unit_ids: Vec<String>,
}

pub struct GrRelationship {
    pub id: String,
    pub source: String,
    pub target: String,
    pub description: String,
    pub weight: f64,
    pub text_unit_ids: Vec<String>,
}

pub struct GrCommunity {
    pub community: i64,
    pub level: u32,
    pub parent: Option<i64>,
    /// None when the table has no `children` column (derived from parents then).
    pub children: Option<Vec<i64>>,
    pub title: String,
    /// Entity ids (or names); None when the table has no `entity_ids` column (older
    /// versions: the members are then the endpoints of the community's relationships).
    pub entity_ids: Option<Vec<String>>,
    pub relationship_ids: Vec<String>,
}

pub struct GrReport {
    pub community: i64,
    pub level: Option<u32>,
    pub title: String,
    pub summary: String,
    pub rank: f64,
    pub rating_explanation: String,
    pub findings: Vec<Finding>,
}

pub struct GrCovariate {
    pub id: String,
    pub covariate_type: String,
    pub claim_type: String,
    pub description: String,
    pub subject: String,
    pub object: Option<String>,
    pub status: String,
    pub start_date: String,
    pub end_date: String,
    pub source_text: String,
    pub text_unit_id: Option<String>,
}

/// All tables of one GraphRAG output folder.
pub struct Tables {
    pub documents_path: PathBuf,
    pub documents: Vec<GrDocument>,
    pub text_units: Vec<GrTextUnit>,
    pub entities: Vec<GrEntity>,
    pub relationships: Vec<GrRelationship>,
    pub communities: Option<Vec<GrCommunity>>,
    pub reports: Option<Vec<GrReport>>,
    pub covariates: Option<Vec<GrCovariate>>,
    /// Rows skipped and other oddities, for warnings.
    pub warnings: Vec<String>,
}

/// The file of table `name` in `dir`: `<name>.parquet`, or the older
/// `create_final_<name>.parquet`.
/// The tables every GraphRAG output folder has.
const REQUIRED: [&str; 4] = ["documents", "text_units", "entities", "relationships"];
/// GraphRAG 1.x names its tables `create_final_NAME.parquet`; 2.x `NAME.parquet`.
const V1: &str = "create_final_";

/// The file prefix of the folder's layout: 2.x (`""`) when its required tables are all
/// there, else 1.x when those are, else 2.x (whose missing tables are then named). A
/// complete 1.x folder with a stray 2.x file is read as 1.x, with a warning.
fn layout(dir: &Path, warnings: &mut Vec<String>) -> &'static str {
    let complete = |prefix: &str| REQUIRED.iter().all(|n| dir.join(format!("{prefix}{n}.parquet")).is_file());
    if complete("") || !complete(V1) {
        return "";
    }
    let stray: Vec<String> =
        REQUIRED.iter().map(|n| format!("{n}.parquet")).filter(|f| dir.join(f).is_file()).collect();
    if !stray.is_empty() {
        warnings.push(format!(
            "{}: read as a GraphRAG 1.x folder (its create_final_*.parquet tables are complete); \
             ignored {}",
            dir.display(),
            stray.join(", ")
        ));
    }
    V1
}

/// The table `name` in the folder's layout (`prefix`), else in the other one.
pub fn find_table(dir: &Path, name: &str, prefix: &str) -> Option<PathBuf> {
    let other = if prefix.is_empty() { V1 } else { "" };
    [format!("{prefix}{name}.parquet"), format!("{other}{name}.parquet")]
        .into_iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

fn required_table(dir: &Path, name: &str, prefix: &str, what: &str) -> Result<PathBuf> {
    find_table(dir, name, prefix).ok_or_else(|| {
        Error::bad_input(
            dir.join(format!("{name}.parquet")).display().to_string(),
            format!(
                "no such file (nor create_final_{name}.parquet): a Microsoft GraphRAG output folder \
                 holds {what} there"
            ),
        )
    })
}

fn text(c: &Cell) -> String {
    c.text().unwrap_or_default()
}

/// Non-empty text, trimmed.
fn key(c: &Cell) -> Option<String> {
    c.text().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

fn level(c: &Cell) -> Option<u32> {
    c.int().map(|l| l.clamp(0, u32::MAX as i64) as u32)
}

/// Rows of `t`, with a warning (and no record) for each row `f` rejects.
fn rows<T>(t: &Table, warnings: &mut Vec<String>, what: &str, f: impl Fn(&[Cell]) -> Option<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(t.rows.len());
    for (i, r) in t.rows.iter().enumerate() {
        match f(r) {
            Some(x) => out.push(x),
            None => warnings.push(format!("{}: row {i} has no {what}; skipped", t.path.display())),
        }
    }
    out
}

/// Read every table of the folder (`communities`, `community_reports` and `covariates`
/// are optional).
pub fn read_tables(dir: &Path) -> Result<Tables> {
    if !dir.is_dir() {
        return Err(Error::bad_input(
            dir.display().to_string(),
            "not a directory: give the GraphRAG output folder (the one holding entities.parquet)",
        ));
    }
    let mut w = Vec::new();
    let prefix = layout(dir, &mut w);
    let documents_path = required_table(dir, "documents", prefix, "the input documents")?;
    let t = read_table(
        &documents_path,
        &[
            req(&["id"], "the document id"),
            opt(&["human_readable_id"], "a document number"),
            opt(&["title"], "the document title"),
            req(&["text", "raw_content"], "the document text"),
            opt(&["text_unit_ids"], "the ids of the document's text units"),
        ],
    )?;
    let documents = rows(&t, &mut w, "id", |r| {
        Some(GrDocument {
            id: key(&r[0])?,
            hrid: r[1].int(),
            title: text(&r[2]).trim().to_string(),
            text: text(&r[3]),
            text_unit_ids: r[4].strings(),
        })
    });
    let path = required_table(dir, "text_units", prefix, "the text units (chunks)")?;
    let t = read_table(
        &path,
        &[
            req(&["id"], "the text unit id"),
            opt(&["human_readable_id"], "the unit's number (its order in the text)"),
            req(&["text", "chunk"], "the text unit's text"),
            opt(&["document_id", "document_ids"], "the id of the unit's document"),
        ],
    )?;
    let text_units = rows(&t, &mut w, "id", |r| {
        Some(GrTextUnit { id: key(&r[0])?, hrid: r[1].int(), text: text(&r[2]), document_ids: r[3].strings() })
    });
    let path = required_table(dir, "entities", prefix, "the extracted entities")?;
    let t = read_table(
        &path,
        &[
            req(&["id"], "the entity id"),
            req(&["title", "name"], "the entity name"),
            opt(&["type"], "the entity type"),
            opt(&["description"], "the entity description"),
            opt(&["text_unit_ids"], "the ids of the text units mentioning the entity"),
        ],
    )?;
    let entities = rows(&t, &mut w, "id and title", |r| {
        Some(GrEntity {
            id: key(&r[0])?,
            title: key(&r[1])?,
            entity_type: key(&r[2]).unwrap_or_else(|| "ENTITY".into()),
            description: text(&r[3]),
            text_unit_ids: r[4].strings(),
        })
    });
    let path = required_table(dir, "relationships", prefix, "the extracted relationships")?;
    let t = read_table(
        &path,
        &[
            opt(&["id"], "the relationship id"),
            req(&["source"], "the source entity's name"),
            req(&["target"], "the target entity's name"),
            opt(&["description"], "the relationship description"),
            opt(&["weight"], "the relationship weight"),
            opt(&["text_unit_ids"], "the ids of the text units supporting the relationship"),
        ],
    )?;
    let relationships = rows(&t, &mut w, "source and target", |r| {
        Some(GrRelationship {
            id: text(&r[0]),
            source: key(&r[1])?,
            target: key(&r[2])?,
            description: text(&r[3]),
            weight: r[4].float().unwrap_or(1.0),
            text_unit_ids: r[5].strings(),
        })
    });
    let communities = match find_table(dir, "communities", prefix) {
        None => None,
        Some(path) => {
            let t = read_table(
                &path,
                &[
                    req(&["community", "id"], "the community number"),
                    req(&["level"], "the community's level in the hierarchy"),
                    opt(&["parent"], "the parent community's number (-1: none)"),
                    opt(&["children"], "the child communities' numbers"),
                    opt(&["title"], "the community title"),
                    opt(&["entity_ids"], "the member entities' ids"),
                    opt(&["relationship_ids"], "the ids of the relationships inside the community"),
                ],
            )?;
            let (has_children, has_entities) = (t.has(3), t.has(5));
            Some(rows(&t, &mut w, "community number and level", |r| {
                let community = r[0].int()?;
                Some(GrCommunity {
                    community,
                    level: level(&r[1])?,
                    parent: r[2].int().filter(|p| *p >= 0),
                    children: has_children.then(|| r[3].ints()),
                    title: key(&r[4]).unwrap_or_else(|| format!("Community {community}")),
                    entity_ids: has_entities.then(|| r[5].strings()),
                    relationship_ids: r[6].strings(),
                })
            }))
        }
    };
    let reports = match find_table(dir, "community_reports", prefix) {
        None => None,
        Some(path) => {
            let t = read_table(
                &path,
                &[
                    req(&["community"], "the number of the community the report is about"),
                    opt(&["level"], "the community's level"),
                    opt(&["title"], "the report title"),
                    opt(&["summary"], "the report summary"),
                    opt(&["rank"], "the impact rating (0-10)"),
                    opt(&["rating_explanation", "rank_explanation"], "why the rating"),
                    opt(&["findings"], "the findings (summary, explanation)"),
                    opt(&["full_content_json"], "the report as JSON"),
                ],
            )?;
            Some(rows(&t, &mut w, "community number", |r| {
                Some(GrReport {
                    community: r[0].int()?,
                    level: level(&r[1]),
                    title: text(&r[2]),
                    summary: text(&r[3]),
                    rank: r[4].float().unwrap_or(0.0),
                    rating_explanation: text(&r[5]),
                    findings: findings(&r[6], &r[7]),
                })
            }))
        }
    };
    let covariates = match find_table(dir, "covariates", prefix) {
        None => None,
        Some(path) => {
            let t = read_table(
                &path,
                &[
                    req(&["id"], "the covariate id"),
                    opt(&["covariate_type"], "the covariate type (claim)"),
                    opt(&["type"], "the claim type"),
                    opt(&["description"], "the claim description"),
                    req(&["subject_id"], "the name of the entity the claim is about"),
                    opt(&["object_id"], "the name of the claim's object entity, or NONE"),
                    opt(&["status"], "TRUE, FALSE or SUSPECTED"),
                    opt(&["start_date"], "the claim's start date"),
                    opt(&["end_date"], "the claim's end date"),
                    opt(&["source_text"], "the quoted source text"),
                    opt(&["text_unit_id"], "the id of the text unit the claim comes from"),
                ],
            )?;
            Some(rows(&t, &mut w, "id and subject", |r| {
                Some(GrCovariate {
                    id: key(&r[0])?,
                    covariate_type: key(&r[1]).unwrap_or_else(|| "claim".into()),
                    claim_type: text(&r[2]),
                    description: text(&r[3]),
                    subject: key(&r[4])?,
                    object: key(&r[5]).filter(|o| !o.eq_ignore_ascii_case("none")),
                    status: text(&r[6]),
                    start_date: text(&r[7]),
                    end_date: text(&r[8]),
                    source_text: text(&r[9]),
                    text_unit_id: r[10].strings().into_iter().next(),
                })
            }))
        }
    };
    Ok(Tables {
        documents_path,
        documents,
        text_units,
        entities,
        relationships,
        communities,
        reports,
        covariates,
        warnings: w,
    })
}

/// A report's findings: the `findings` list of {summary, explanation}, else those of
/// `full_content_json`.
fn findings(list: &Cell, json: &Cell) -> Vec<Finding> {
    let of = |summary: Option<String>, explanation: Option<String>| {
        let (summary, explanation) = (summary.unwrap_or_default(), explanation.unwrap_or_default());
        (!summary.is_empty() || !explanation.is_empty()).then_some(Finding { summary, explanation })
    };
    if let Cell::List(items) = list {
        return items
            .iter()
            .filter_map(|f| of(f.field("summary").and_then(Cell::text), f.field("explanation").and_then(Cell::text)))
            .collect();
    }
    let parsed: Option<serde_json::Value> = json.text().and_then(|s| serde_json::from_str(&s).ok());
    parsed
        .as_ref()
        .and_then(|v| v.get("findings"))
        .and_then(|f| f.as_array())
        .into_iter()
        .flatten()
        .filter_map(|f| {
            let field = |k: &str| f.get(k).and_then(|v| v.as_str()).map(str::to_string);
            of(field("summary"), field("explanation"))
        })
        .collect()
}
