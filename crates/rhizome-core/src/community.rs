//! Communities of the entity graph and their reports, and claims (covariates) about
//! entities.
//!
//! Communities form a hierarchy: level 0 is the coarsest partition of the entity graph;
//! a community with more entities than `communities.max_cluster_size` has children at the
//! next level that split its entities. A community that is not split is a leaf: it also
//! stands for itself at every deeper level, so the communities "at level L" for a global
//! question are those of level L plus the leaves above it ([`reports_at_level`]).

use serde::{Deserialize, Serialize};

/// A community: a set of entities at one level of the hierarchy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Community {
    /// `com_` + hash of the level and the sorted entity ids (so an unchanged community
    /// keeps its id, and its report, when communities are recomputed), or the id an
    /// import brought.
    pub id: String,
    pub level: u32,
    pub parent: Option<String>,
    pub children: Vec<String>,
    /// A short name (for imports, the source's own title).
    pub title: String,
    /// Member entity ids, sorted.
    pub entity_ids: Vec<String>,
    /// Identifies what the community holds (members and the relations among them): a
    /// report is current only while it carries the same fingerprint.
    pub fingerprint: String,
}

impl Community {
    /// A leaf community is not split further.
    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }
}

/// One finding of a report: a short statement and the explanation behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Finding {
    pub summary: String,
    pub explanation: String,
}

/// How a report was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ReportKind {
    /// By the configured LLM.
    Llm,
    /// Without an LLM: entities, relations and sentences listed from the graph.
    Extractive,
    /// Brought by an import (e.g. a Microsoft GraphRAG index).
    Imported,
}

impl ReportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportKind::Llm => "llm",
            ReportKind::Extractive => "extractive",
            ReportKind::Imported => "imported",
        }
    }
    pub fn parse(s: &str) -> ReportKind {
        match s {
            "llm" => ReportKind::Llm,
            "imported" => ReportKind::Imported,
            _ => ReportKind::Extractive,
        }
    }
}

/// The report of one community.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CommunityReport {
    pub community_id: String,
    pub level: u32,
    pub title: String,
    pub summary: String,
    pub findings: Vec<Finding>,
    /// Impact rating, 0-10.
    pub rating: f32,
    pub rating_explanation: String,
    /// The fingerprint of the community this report was written for.
    pub fingerprint: String,
    pub kind: ReportKind,
}

impl CommunityReport {
    /// The report as text: what is embedded, shown and given to LLM calls.
    pub fn text(&self) -> String {
        let mut s = format!("# {}\n\n{}\n", self.title, self.summary);
        if !self.rating_explanation.is_empty() || self.rating > 0.0 {
            s.push_str(&format!("\nImpact: {:.1}/10. {}\n", self.rating, self.rating_explanation));
        }
        for f in &self.findings {
            s.push_str(&format!("\n## {}\n\n{}\n", f.summary, f.explanation));
        }
        s
    }
}

impl CommunityReport {
    /// The short form that is embedded for search: title, summary and the findings'
    /// one-line summaries, at most [`SEARCH_TEXT_WORDS`] words. Embedding the whole report
    /// costs several times more (attention grows with length; the models truncate at 256
    /// or 512 tokens anyway) and the short form carries what a question matches against.
    pub fn search_text(&self) -> String {
        let mut s = format!("{}. {}", self.title.trim(), self.summary.trim());
        for f in &self.findings {
            s.push(' ');
            s.push_str(f.summary.trim());
        }
        let words: Vec<&str> = s.split_whitespace().collect();
        if words.len() > SEARCH_TEXT_WORDS {
            words[..SEARCH_TEXT_WORDS].join(" ")
        } else {
            words.join(" ")
        }
    }
}

/// Words of [`CommunityReport::search_text`].
pub const SEARCH_TEXT_WORDS: usize = 120;

/// The reports that cover the graph at `level`: those of communities at that level, and
/// those of leaf communities at shallower levels (which are not split further). A level
/// deeper than the hierarchy gives all leaves.
pub fn reports_at_level<'a>(
    communities: &[Community],
    reports: &'a [CommunityReport],
    level: u32,
) -> Vec<&'a CommunityReport> {
    use std::collections::HashMap;
    let by_id: HashMap<&str, &Community> = communities.iter().map(|c| (c.id.as_str(), c)).collect();
    reports
        .iter()
        .filter(|r| match by_id.get(r.community_id.as_str()) {
            Some(c) => c.level == level || (c.level < level && c.is_leaf()),
            None => r.level == level,
        })
        .collect()
}

/// A claim about an entity (Microsoft GraphRAG's covariate), as extracted from a chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Covariate {
    pub id: String,
    /// `claim` for GraphRAG's claims.
    pub covariate_type: String,
    /// The claim's type, e.g. `MISSION PREPARATION`.
    pub claim_type: String,
    /// Entity id of the subject.
    pub subject_id: String,
    /// Entity id of the object, when there is one.
    pub object_id: Option<String>,
    /// TRUE, FALSE or SUSPECTED.
    pub status: String,
    pub start_date: String,
    pub end_date: String,
    pub description: String,
    pub source_text: String,
}

impl Covariate {
    /// One line for a context: type, status, description.
    pub fn text(&self) -> String {
        format!("[{} · {}] {}", self.claim_type, self.status, self.description)
    }
}

/// A covariate supported by a document (and chunk).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CovariateRecord {
    pub covariate: Covariate,
    pub doc_id: String,
    pub chunk_id: Option<String>,
}

/// The id of a computed community: level and members decide it.
pub fn community_id(level: u32, entity_ids: &[String]) -> String {
    let mut parts: Vec<&str> = entity_ids.iter().map(String::as_str).collect();
    parts.sort_unstable();
    let level = level.to_string();
    parts.insert(0, &level);
    crate::ids::content_id("com_", &parts)
}

/// The fingerprint of a community's content: its members and the relations among them
/// (ids in any order). A report written for one fingerprint is reused while it holds.
pub fn community_fingerprint(entity_ids: &[String], relation_ids: &[String]) -> String {
    let mut e: Vec<&str> = entity_ids.iter().map(String::as_str).collect();
    e.sort_unstable();
    let mut r: Vec<&str> = relation_ids.iter().map(String::as_str).collect();
    r.sort_unstable();
    e.push("|");
    e.extend(r);
    crate::ids::content_id("cfp_", &e)
}
