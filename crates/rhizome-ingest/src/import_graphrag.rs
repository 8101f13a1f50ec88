//! Import a Microsoft GraphRAG output folder (parquet tables: documents, text_units,
//! entities, relationships, communities, community_reports, covariates) into a Rhizome
//! index, so that every Rhizome method can query an existing GraphRAG index.
//!
//! Two steps, around the ordinary pipeline:
//! 1. [`read`]: the tables become [`Prepared`](crate::pipeline::Prepared) documents (text
//!    units as chunks, one extraction per chunk with the entities and relationships GraphRAG
//!    found in that unit), plus communities, reports and covariates with Rhizome ids.
//! 2. The caller runs the pipeline on the documents (which skips unchanged ones), then
//!    [`finish`] writes the covariates, the communities (as current for the graph as it is
//!    then) and the reports with their vectors.
//!
//! Mapping choices:
//! - An entity is mentioned (count 1, GraphRAG's description and type) in each chunk of its
//!   text units; a relationship (type `RELATED`) is supported by each chunk of its units with
//!   GraphRAG's weight divided among them, so the summed weight equals GraphRAG's.
//! - No facts: GraphRAG relationships carry a free-text description, not a predicate, and
//!   its claims are kept whole as covariates; a (subject, "related to", object) fact would
//!   only repeat the RELATED edge.
//! - Relationship endpoints that entities.parquet lacks (GraphRAG keeps such relationships)
//!   become entities of type ENTITY, so no relationship is lost; a warning names them.
//! - Importing the same folder again writes nothing new: documents are skipped by the
//!   pipeline, covariates already stored (by GraphRAG id) are not written again, communities
//!   are replaced by the same set, and reports that are stored unchanged with a vector are
//!   neither embedded nor written again.

mod build;
mod parquet_rows;
mod tables;

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use rhizome_core::{
    Community, CommunityReport, CovariateRecord, EmbedKind, Embedder, Result, StoreWrite, VectorKind, WriteBatch,
};
use serde::Serialize;

use crate::import::Imported;

/// What was read from a GraphRAG folder, in Rhizome's terms.
#[derive(Debug, Default)]
pub struct GraphragImport {
    /// One prepared document per GraphRAG document (and warnings in `dropped`).
    pub imported: Imported,
    pub covariates: Vec<CovariateRecord>,
    /// Empty when the folder has no communities table (stored communities are then kept).
    pub communities: Vec<Community>,
    pub reports: Vec<CommunityReport>,
    pub counts: ReadCounts,
}

/// Rows read per table.
#[derive(Debug, Default, Clone, Serialize)]
pub struct ReadCounts {
    pub documents: u64,
    pub text_units: u64,
    pub entities: u64,
    pub relationships: u64,
    pub communities: u64,
    pub community_reports: u64,
    pub covariates: u64,
    /// Relationship endpoints missing from entities.parquet, added as entities.
    pub endpoint_entities_added: u64,
}

/// What [`finish`] wrote.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Finished {
    pub covariates_written: u64,
    /// Covariates already in the index (an earlier import of the same folder).
    pub covariates_present: u64,
    pub communities: u64,
    pub reports_written: u64,
    /// Reports already stored, unchanged, with a vector.
    pub reports_unchanged: u64,
    pub warnings: Vec<String>,
}

/// Read the GraphRAG output folder `dir`. Errors name the file and, for a missing
/// column, what it should hold; rows that cannot be used are skipped with a warning in
/// `imported.dropped`.
pub fn read(dir: &Path) -> Result<GraphragImport> {
    let t = tables::read_tables(dir)?;
    if t.documents.is_empty() {
        return Err(rhizome_core::Error::bad_input(
            t.documents_path.display().to_string(),
            "no documents: nothing to import",
        ));
    }
    let mut b = build::documents(&t);
    let unknown = build::graph(&t, &mut b);
    let mut warnings = t.warnings.clone();
    let (communities, reports) = match &t.communities {
        Some(list) => build::communities(&t, list, &mut warnings),
        None => (Vec::new(), Vec::new()),
    };
    if t.communities.is_none() && t.reports.as_ref().is_some_and(|r| !r.is_empty()) {
        warnings.push("community reports without communities.parquet: reports not imported".into());
    }
    let covariates = build::covariates(&t, &b);
    let counts = ReadCounts {
        documents: t.documents.len() as u64,
        text_units: t.text_units.len() as u64,
        entities: t.entities.len() as u64,
        relationships: t.relationships.len() as u64,
        communities: communities.len() as u64,
        community_reports: reports.len() as u64,
        covariates: covariates.len() as u64,
        endpoint_entities_added: unknown.len() as u64,
    };
    warnings.extend(b.warnings);
    Ok(GraphragImport {
        imported: Imported { items: b.items, dropped: warnings },
        covariates,
        communities,
        reports,
        counts,
    })
}

/// After the pipeline has written the documents of `gi`: write the covariates not stored
/// yet (one batch), replace the communities with GraphRAG's as current for the graph
/// version at hand, and store the reports (embedded as passages) that are not stored
/// unchanged already.
pub fn finish(store: &mut dyn StoreWrite, embedder: &dyn Embedder, gi: &GraphragImport) -> Result<Finished> {
    let mut done = Finished::default();
    let entity_ids: Vec<String> = gi
        .covariates
        .iter()
        .flat_map(|c| std::iter::once(c.covariate.subject_id.clone()).chain(c.covariate.object_id.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let present: HashSet<String> = if entity_ids.is_empty() {
        HashSet::new()
    } else {
        store.covariates_of(&entity_ids)?.into_iter().map(|c| c.id).collect()
    };
    let mut docs_ok: std::collections::HashMap<&str, bool> = Default::default();
    let mut batch = WriteBatch::default();
    for c in &gi.covariates {
        if present.contains(&c.covariate.id) {
            done.covariates_present += 1;
            continue;
        }
        let ok = match docs_ok.get(c.doc_id.as_str()) {
            Some(&ok) => ok,
            None => {
                let ok = store.has_document(&c.doc_id)?;
                docs_ok.insert(&c.doc_id, ok);
                ok
            }
        };
        if ok {
            batch.covariates.push(c.clone());
        } else {
            done.warnings
                .push(format!("covariate {}: its document {} is not in the index; skipped", c.covariate.id, c.doc_id));
        }
    }
    if !batch.covariates.is_empty() {
        done.covariates_written = batch.covariates.len() as u64;
        store.write_batch(&batch)?;
    }
    if !gi.communities.is_empty() {
        // After every write, so that they count as current and are not recomputed.
        let version = store.graph_version()?;
        store.replace_communities(&gi.communities, version)?;
        done.communities = gi.communities.len() as u64;
    }
    let ids: Vec<String> = gi.reports.iter().map(|r| r.community_id.clone()).collect();
    let no_vector: HashSet<String> = store.missing_vectors(VectorKind::Report, &ids)?.into_iter().collect();
    let stored = store.community_reports()?;
    let todo: Vec<CommunityReport> =
        gi.reports.iter().filter(|r| no_vector.contains(&r.community_id) || !stored.contains(r)).cloned().collect();
    done.reports_unchanged = (gi.reports.len() - todo.len()) as u64;
    if !todo.is_empty() {
        let texts: Vec<String> = todo.iter().map(CommunityReport::search_text).collect();
        let vectors = embedder.embed(&texts, EmbedKind::Passage)?;
        let pairs: Vec<(String, Vec<f32>)> = todo.iter().map(|r| r.community_id.clone()).zip(vectors).collect();
        store.put_reports(&todo, &pairs)?;
        done.reports_written = todo.len() as u64;
    }
    Ok(done)
}

#[cfg(test)]
mod tests;
