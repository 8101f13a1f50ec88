//! `rhizome export`: the graph as files other tools read — GraphML for Gephi (and
//! networkx, yEd), CSV for `neo4j-admin database import` (the Neo4j-based system's users
//! keep their database). Both are written from one [`Snapshot`] read through the store
//! traits, so every backend exports the same files.
//!
//! The exported graph: `Document`, `Chunk`, `Entity` (label `__Entity__` plus its type)
//! and `Fact` nodes; `PART_OF` (chunk -> document), `NEXT_CHUNK`, `MENTIONED_IN` (entity
//! -> chunk), the relations between entities typed by their relation type,
//! `SYNONYM`, `SIMILAR_TO`, and `SUBJECT` / `OBJECT` (fact -> entity).

mod graphml;
mod neo4j_csv;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rhizome_core::{Chunk, DocumentSummary, Entity, Error, Fact, GraphData, Relation, Result, StoreRead};
use serde::Serialize;

use crate::Engine;

/// Ids asked of the store per call.
const PAGE: usize = 500;

/// The file formats `rhizome export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// One `.graphml` file.
    GraphMl,
    /// A folder of CSV files with neo4j-admin headers and the import command.
    Neo4jCsv,
}

impl ExportFormat {
    pub fn parse(s: &str) -> Result<ExportFormat> {
        match s.trim().to_ascii_lowercase().as_str() {
            "graphml" => Ok(ExportFormat::GraphMl),
            "neo4j-csv" | "neo4j" | "csv" => Ok(ExportFormat::Neo4jCsv),
            other => Err(Error::bad_input(
                "--format",
                format!(
                    "unknown export format {other:?}; use graphml (Gephi) or neo4j-csv (neo4j-admin database import)"
                ),
            )),
        }
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Serialize)]
pub struct ExportOutcome {
    pub format: String,
    pub files: Vec<PathBuf>,
    /// Nodes per label and edges per type, as written.
    pub nodes: BTreeMap<String, u64>,
    pub edges: BTreeMap<String, u64>,
}

/// Everything exported, read once.
pub(crate) struct Snapshot {
    pub documents: Vec<DocumentSummary>,
    pub chunks: Vec<Chunk>,
    pub entities: Vec<Entity>,
    pub relations: Vec<Relation>,
    pub facts: Vec<Fact>,
    pub graph: GraphData,
}

impl Snapshot {
    fn read(store: &dyn StoreRead) -> Result<Snapshot> {
        let graph = store.graph_data()?;
        let documents = store.documents(None, 0, usize::MAX)?;
        let mut chunks = Vec::with_capacity(graph.chunks.len());
        for page in graph.chunks.chunks(PAGE) {
            let ids: Vec<String> = page.iter().map(|c| c.id.clone()).collect();
            chunks.extend(store.chunks(&ids)?.into_iter().map(|c| c.chunk));
        }
        let entity_ids: Vec<String> = graph.entities.iter().map(|e| e.id.clone()).collect();
        let mut entities = Vec::with_capacity(entity_ids.len());
        let mut relations: BTreeMap<String, Relation> = BTreeMap::new();
        for page in entity_ids.chunks(PAGE) {
            entities.extend(store.entities(page)?);
            for r in store.relations_of(page)? {
                relations.entry(r.id.clone()).or_insert(r);
            }
        }
        let mut fact_ids: Vec<String> = graph.facts.iter().map(|f| f.id.clone()).collect();
        fact_ids.dedup();
        let mut facts = Vec::with_capacity(fact_ids.len());
        for page in fact_ids.chunks(PAGE) {
            facts.extend(store.facts(page)?);
        }
        Ok(Snapshot { documents, chunks, entities, relations: relations.into_values().collect(), facts, graph })
    }

    /// Node counts per label, as both formats write them.
    fn node_counts(&self) -> BTreeMap<String, u64> {
        BTreeMap::from([
            ("Document".to_string(), self.documents.len() as u64),
            ("Chunk".to_string(), self.chunks.len() as u64),
            ("Entity".to_string(), self.entities.len() as u64),
            ("Fact".to_string(), self.facts.len() as u64),
        ])
    }
}

/// An edge of the exported graph.
pub(crate) struct Edge<'a> {
    pub source: &'a str,
    pub target: &'a str,
    /// The edge type (relations: their sanitised relation type).
    pub kind: String,
    pub weight: Option<f32>,
    pub count: Option<u32>,
    pub description: Option<&'a str>,
    /// Relations only: the relation type as extracted.
    pub rel_type: Option<&'a str>,
}

impl Snapshot {
    /// Every edge, in a stable order: structure, mentions, relations, synonyms, similar
    /// chunks, fact edges.
    pub(crate) fn edges(&self) -> Vec<Edge<'_>> {
        let plain = |source, target, kind: &str| Edge {
            source,
            target,
            kind: kind.to_string(),
            weight: None,
            count: None,
            description: None,
            rel_type: None,
        };
        let mut out = Vec::new();
        let mut by_doc: BTreeMap<&str, Vec<&Chunk>> = BTreeMap::new();
        for c in &self.chunks {
            out.push(plain(&c.id, &c.doc_id, "PART_OF"));
            by_doc.entry(&c.doc_id).or_default().push(c);
        }
        for chunks in by_doc.values_mut() {
            chunks.sort_by_key(|c| c.ordinal);
            for w in chunks.windows(2) {
                if w[1].ordinal == w[0].ordinal + 1 {
                    out.push(plain(&w[0].id, &w[1].id, "NEXT_CHUNK"));
                }
            }
        }
        for (e, c, n) in &self.graph.mentions {
            out.push(Edge { count: Some(*n), ..plain(e, c, "MENTIONED_IN") });
        }
        for r in &self.relations {
            out.push(Edge {
                weight: Some(r.weight),
                description: Some(&r.description),
                rel_type: Some(&r.rel_type),
                ..plain(&r.source_id, &r.target_id, &relation_type(&r.rel_type))
            });
        }
        for (a, b, s) in &self.graph.synonyms {
            out.push(Edge { weight: Some(*s), ..plain(a, b, "SYNONYM") });
        }
        for (a, b, s) in &self.graph.similar {
            out.push(Edge { weight: Some(*s), ..plain(a, b, "SIMILAR_TO") });
        }
        for f in &self.facts {
            out.push(plain(&f.id, &f.subject_id, "SUBJECT"));
            out.push(plain(&f.id, &f.object_id, "OBJECT"));
        }
        out
    }
}

/// A relation type as an edge type: upper case, letters and digits of any script kept,
/// everything else `_` (so `is located in` -> `IS_LOCATED_IN`); empty -> `RELATED`.
pub fn relation_type(t: &str) -> String {
    let mut s = String::new();
    for ch in t.trim().chars() {
        if ch.is_alphanumeric() {
            s.extend(ch.to_uppercase());
        } else if !s.ends_with('_') && !s.is_empty() {
            s.push('_');
        }
    }
    let s = s.trim_end_matches('_').to_string();
    match s.chars().next() {
        None => "RELATED".into(),
        Some(c) if c.is_ascii_digit() => format!("R_{s}"),
        _ => s,
    }
}

/// An entity type as a node label (same rules; empty -> no extra label).
pub fn type_label(t: &str) -> Option<String> {
    let l = relation_type(t);
    (l != "RELATED" || t.trim().eq_ignore_ascii_case("related")).then_some(l)
}

fn edge_counts(edges: &[Edge<'_>]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for e in edges {
        let k = if e.rel_type.is_some() { "RELATED" } else { e.kind.as_str() };
        *m.entry(k.to_string()).or_insert(0) += 1;
    }
    m
}

impl Engine {
    /// Write the index's graph to `out`: a `.graphml` file, or a folder of neo4j-admin
    /// CSV files (created; files in it with the same names are replaced).
    pub fn export(&self, format: ExportFormat, out: &Path) -> Result<ExportOutcome> {
        let store = self.reader()?;
        let mut snap = Snapshot::read(&*store)?;
        let g = self.graph().get(&*store)?;
        for e in &mut snap.entities {
            e.importance = g.importance(&e.id, e.importance);
        }
        let edges = snap.edges();
        let files = match format {
            ExportFormat::GraphMl => vec![graphml::write(&snap, &edges, out)?],
            ExportFormat::Neo4jCsv => neo4j_csv::write(&snap, &edges, out)?,
        };
        Ok(ExportOutcome {
            format: match format {
                ExportFormat::GraphMl => "graphml",
                ExportFormat::Neo4jCsv => "neo4j-csv",
            }
            .into(),
            files,
            nodes: snap.node_counts(),
            edges: edge_counts(&edges),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relation_types_become_edge_types() {
        assert_eq!(relation_type("is located in"), "IS_LOCATED_IN");
        assert_eq!(relation_type("CO_OCCURS"), "CO_OCCURS");
        assert_eq!(relation_type("đoạt giải"), "ĐOẠT_GIẢI");
        assert_eq!(relation_type("投资"), "投资");
        assert_eq!(relation_type("  "), "RELATED");
        assert_eq!(relation_type("1st of"), "R_1ST_OF");
        assert_eq!(relation_type("a -- b!"), "A_B");
        assert_eq!(type_label("person"), Some("PERSON".into()));
        assert_eq!(type_label(""), None);
    }
}
