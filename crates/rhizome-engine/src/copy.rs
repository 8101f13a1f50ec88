//! `rhizome copy`: move an index between any two backends through the store traits only.
//!
//! Every document is read back as the batch that wrote it ([`StoreRead::document_batch`])
//! and written into the destination, several documents per batch; then what is derived
//! from the whole graph and not supported by a document: entity summaries, SYNONYM edges,
//! communities and their reports (with their vectors), and the markers that say whether
//! those are current. Nothing is recomputed or embedded again, so the copy answers as the
//! original does.

use std::sync::atomic::{AtomicBool, Ordering};

use rhizome_core::{Error, Result, Stats, VectorKind, WriteBatch};
use rhizome_store::StoreUrl;
use serde::Serialize;

use crate::Engine;

/// Documents per destination batch (one transaction each).
const DOCS_PER_BATCH: usize = 64;

/// Metadata copied as it is (the rest is the backends' own bookkeeping).
const COPIED_META: &[&str] = &["extractor", "llm_usage"];

/// What a copy wrote.
#[derive(Debug, Clone, Serialize)]
pub struct CopyOutcome {
    pub from: String,
    pub to: String,
    pub documents: u64,
    pub summaries: u64,
    pub synonyms: u64,
    pub communities: u64,
    pub reports: u64,
    /// Node and edge counts of the destination afterwards (equal to the source's).
    pub stats: Stats,
    pub seconds: f64,
}

fn append(into: &mut WriteBatch, b: WriteBatch) {
    into.documents.extend(b.documents);
    into.chunks.extend(b.chunks);
    into.mentions.extend(b.mentions);
    into.relations.extend(b.relations);
    into.facts.extend(b.facts);
    into.similar.extend(b.similar);
    into.vectors.extend(b.vectors);
    into.failures.extend(b.failures);
    into.covariates.extend(b.covariates);
    into.doc_progress.extend(b.doc_progress);
}

impl Engine {
    /// Copy this engine's index into the store at `to`, which must hold no documents yet.
    /// `progress(done, total)` is called after each written batch; `cancel` stops between
    /// batches (what was written stays, and a second copy into a fresh store starts over).
    pub fn copy_to(&self, to: &str, progress: &dyn Fn(u64, u64), cancel: &AtomicBool) -> Result<CopyOutcome> {
        let t0 = std::time::Instant::now();
        let dest_url = StoreUrl::parse(to)?;
        if dest_url == *self.url() {
            return Err(Error::bad_input(
                "--to",
                format!("{} is the index being copied; give another directory or database URL", dest_url.display()),
            ));
        }
        let src = self.reader()?;
        let Some(model) = src.embedding_model()? else {
            return Err(Error::bad_input(
                "--from",
                format!(
                    "{} holds no vectors yet (nothing indexed); index documents into it first",
                    self.url().display()
                ),
            ));
        };
        let dim: usize = src.meta("embedding_dim")?.and_then(|d| d.parse().ok()).unwrap_or(0);
        let on_wait = &self.write.on_wait;
        let mut dst = dest_url.open_writer(true, &self.write.command, self.write.wait, &mut |h| on_wait(h))?;
        if dst.document_count(None)? > 0 {
            return Err(Error::bad_input(
                "--to",
                format!(
                    "{} already holds {} documents; copy into an empty store (a new directory, database or graph)",
                    dest_url.display(),
                    dst.document_count(None)?
                ),
            ));
        }
        dst.set_embedding_model(&model, dim)?;
        for key in COPIED_META {
            if let Some(v) = src.meta(key)? {
                dst.set_meta(key, &v)?;
            }
        }

        // Documents, several per batch, as one bulk load (PostgreSQL builds its HNSW
        // indexes once, after the last batch).
        dst.bulk_load(true)?;
        let total = src.document_count(None)?;
        let docs = src.documents(None, 0, usize::MAX)?;
        let mut written = 0u64;
        for group in docs.chunks(DOCS_PER_BATCH) {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled);
            }
            let mut batch = WriteBatch::default();
            for d in group {
                if let Some(b) = src.document_batch(&d.id)? {
                    append(&mut batch, b);
                }
            }
            dst.write_batch(&batch)?;
            written += group.len() as u64;
            progress(written, total);
        }
        dst.bulk_load(false)?;

        // Derived from the whole graph: summaries, synonyms, communities and reports.
        let summaries = src.entity_summaries()?;
        for (id, fingerprint, summary) in &summaries {
            dst.set_entity_summary(id, fingerprint, summary)?;
        }
        let graph = src.graph_data()?;
        let synonyms = graph.synonyms.len() as u64;
        if !src.synonyms_dirty()? {
            dst.set_synonyms(&graph.synonyms)?;
        }
        let src_version = src.graph_version()?;
        let communities = src.communities()?;
        let reports = src.community_reports()?;
        if !communities.is_empty() {
            // Current in the source: current here too; stale there: stale here.
            let dst_version = dst.graph_version()?;
            let at = if src.communities_version()? == Some(src_version) { dst_version } else { 0 };
            dst.replace_communities(&communities, at)?;
            let ids: Vec<String> = reports.iter().map(|r| r.community_id.clone()).collect();
            let vectors = src.vectors(VectorKind::Report, &ids)?;
            dst.put_reports(&reports, &vectors)?;
            if src.reports_version()? == Some(src_version) {
                dst.set_reports_version(dst_version)?;
            }
        }
        let stats = dst.stats()?;
        let want = src.stats()?;
        if stats != want {
            return Err(Error::Store(format!(
                "the copy in {} does not count what {} holds ({:?} vs {:?}); the destination is incomplete: \
                 remove it and copy again",
                dest_url.display(),
                self.url().display(),
                stats,
                want
            )));
        }
        Ok(CopyOutcome {
            from: self.url().display(),
            to: dest_url.display(),
            documents: written,
            summaries: summaries.len() as u64,
            synonyms,
            communities: communities.len() as u64,
            reports: reports.len() as u64,
            stats,
            seconds: t0.elapsed().as_secs_f64(),
        })
    }
}
