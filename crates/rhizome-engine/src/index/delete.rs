//! Deleting documents: what a deletion removed, the documents a name given by the user
//! stands for, and the synonymy and communities that follow.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use rhizome_community::CommunityOutcome;
use rhizome_core::{Document, Error, Result, StoreRead};
use serde::Serialize;

use crate::Engine;

/// What a deletion removed.
#[derive(Debug, Clone, Serialize)]
pub struct DeleteOutcome {
    pub deleted: rhizome_core::DeleteReport,
    pub synonym_edges: Option<u64>,
    pub communities: Option<CommunityOutcome>,
}

impl Engine {
    /// Remove the documents whose id or source is `doc` and everything only they
    /// supported; then synonymy and communities follow, as after indexing ("index A and B,
    /// delete B" equals "index A"). A deletion never spends LLM calls: communities it
    /// changed get extractive reports, which the next run with an LLM replaces.
    pub fn delete(&self, doc: &str, cancel: &AtomicBool) -> Result<DeleteOutcome> {
        let mut store = self.writer(false)?;
        let targets = find_targets(store.as_ref(), doc)?;
        if targets.is_empty() {
            return Err(Error::NotFound(format!(
                "no document with id or source {doc:?} in {}; `rhizome documents` lists what is indexed",
                self.url.display()
            )));
        }
        let mut total = rhizome_core::DeleteReport::default();
        // An entity re-keyed by a deletion needs the vector of its new name: the embedder
        // is loaded only then.
        let held = store.embedding_model()?;
        let mut embed =
            |names: &[String]| self.embedder_for(held.clone())?.embed(names, rhizome_core::EmbedKind::Passage);
        for d in &targets {
            let r = store.delete_document(&d.id, &mut embed)?;
            total.documents += r.documents;
            total.chunks += r.chunks;
            total.entities += r.entities;
            total.facts += r.facts;
            total.relations += r.relations;
        }
        let synonym_edges = if store.synonyms_dirty()? {
            // The index's own model decides the threshold's calibration.
            let scale = store.embedding_model()?.map_or(1.0, |m| rhizome_embed::cosine_scale(&m));
            let c = self.config.calibrated(scale).synonymy;
            Some(store.rebuild_synonyms(c.top_k, c.threshold, cancel)?)
        } else {
            None
        };
        let communities = if self.config.communities.enabled && store.communities_version()?.is_some() {
            let embedder = self.embedder(store.as_ref())?;
            Some(self.refresh_communities(store.as_mut(), embedder.as_ref(), None, false, cancel)?)
        } else {
            None
        };
        Ok(DeleteOutcome { deleted: total, synonym_edges, communities })
    }
}

/// The documents `doc` names: by source as typed, by its canonical path (sources are
/// canonical since they are made so at load time), by id, and in an index made before
/// that, by a stored relative source that resolves to the same file.
fn find_targets(store: &dyn StoreRead, doc: &str) -> Result<Vec<Document>> {
    let mut targets = store.documents_from_source(doc)?;
    let canonical = std::fs::canonicalize(doc).ok();
    if targets.is_empty() {
        if let Some(c) = &canonical {
            targets = store.documents_from_source(&c.display().to_string())?;
        }
    }
    if targets.is_empty() {
        if let Some(d) = store.find_document(doc)? {
            targets.push(d);
        }
    }
    if targets.is_empty() {
        if let (Some(c), Some(name)) = (&canonical, Path::new(doc).file_name().and_then(|n| n.to_str())) {
            let total = store.document_count(Some(name))? as usize;
            for s in store.documents(Some(name), 0, total)? {
                let file = s.source.split('#').next().unwrap_or(&s.source);
                if std::fs::canonicalize(file).ok().as_ref() == Some(c) {
                    targets.extend(store.documents_from_source(&s.source)?);
                }
            }
        }
    }
    targets.sort_by(|a, b| a.id.cmp(&b.id));
    targets.dedup_by(|a, b| a.id == b.id);
    Ok(targets)
}
