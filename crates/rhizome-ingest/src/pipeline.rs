//! The ingestion pipeline: load -> chunk -> lexical graph -> extract -> prune -> resolve ->
//! embed (chunks, new entities, new facts) -> SIMILAR_TO -> write, then synonymy.
//!
//! Work is committed in batches of documents (`embed.docs_per_batch`), one store
//! transaction each. Documents already in the store (same content hash) are skipped, so a
//! rerun after a crash, or after adding files, only processes what is new. A batch goes
//! through the steps of `stage.rs`; imports write each batch while the next one is
//! embedded (`overlap.rs`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::time::Instant;

use rhizome_core::{
    Chunk, Document, EmbedKind, Error, Extraction, ExtractionFailure, Result, StoreRead, StoreWrite, WriteBatch,
};

pub use crate::embed_texts::{embed_text, TITLE_BYTES};
use crate::overlap::{alongside, Pending};
pub use crate::resolve::resolve;
pub use crate::setup::{IndexReport, NoProgress, Pipeline, Prepared, Progress, SIMILAR_WINDOW};
use crate::stage::Unwritten;

/// Chunks of a paged document written at a time (about 30 pages of a report): each part
/// moves the progress on to its last page.
const PAGED_PART_CHUNKS: usize = 64;

impl Pipeline<'_> {
    /// Chunk and extract `docs`, then run the common stages.
    ///
    /// Work is committed in batches of at most `embed.docs_per_batch` documents and
    /// `embed.chunks_per_batch` chunks; a document with more chunks than that (a large
    /// file) is written in parts, so memory stays bounded, progress moves inside it, and
    /// a rerun after a kill goes on from the last part written
    /// ([`StoreRead::partial_documents`]). Progress is counted in bytes of text.
    ///
    /// [`StoreRead::partial_documents`]: rhizome_core::StoreRead::partial_documents
    pub fn index_documents(&self, store: &mut dyn StoreWrite, docs: Vec<Document>) -> Result<IndexReport> {
        let mut report = IndexReport::default();
        self.retry_failures(store, &mut report)?;
        let (docs, aliases) = self.only_new(store, docs, &mut report)?;
        let resume: HashMap<String, u32> = store.partial_documents()?.into_iter().collect();
        let max_docs = self.config.embed.docs_per_batch.max(1);
        let max_chunks = self.config.embed.chunks_per_batch.max(1);
        let bytes: u64 = docs.iter().map(|d| d.text.len() as u64).sum();
        self.progress.start_bytes("indexing", bytes);
        // Parts of the batch being filled: (document, its chunks, first, end of this part).
        let mut parts: Vec<Part<'_>> = Vec::new();
        let mut in_batch = 0usize;
        for doc in &docs {
            let chunks = self.chunker.chunk(doc);
            let n = chunks.len();
            let doc_bytes = doc.text.len() as u64;
            let share = |end: usize| if n == 0 { doc_bytes } else { doc_bytes * end as u64 / n as u64 };
            let mut from = resume.get(&doc.id).map_or(0, |&d| (d as usize).min(n));
            self.progress.advance(share(from));
            let chunks = std::sync::Arc::new(chunks);
            // A paged document (a long PDF) is written a few pages at a time, so that its
            // progress says which page indexing is at.
            let most = if doc.pages.is_some() { PAGED_PART_CHUNKS.min(max_chunks) } else { max_chunks };
            loop {
                let room = max_chunks.saturating_sub(in_batch).clamp(1, most);
                let end = (from + room).min(n);
                let advance = share(end) - share(from);
                parts.push(Part { doc, chunks: chunks.clone(), from, end, advance });
                in_batch += end - from;
                if parts.len() >= max_docs || in_batch >= max_chunks || (end < n && doc.pages.is_some()) {
                    self.write_parts(store, std::mem::take(&mut parts), &mut report)?;
                    in_batch = 0;
                }
                from = end;
                if from >= n {
                    break;
                }
            }
        }
        if !parts.is_empty() {
            self.write_parts(store, parts, &mut report)?;
        }
        self.progress.finish();
        self.write_aliases(store, aliases)?;
        self.finish(store, &mut report)?;
        Ok(report)
    }

    /// Extract and write one batch of document parts.
    fn write_parts(&self, store: &mut dyn StoreWrite, parts: Vec<Part<'_>>, report: &mut IndexReport) -> Result<()> {
        self.check_cancel()?;
        let t = Instant::now();
        let all: Vec<&Chunk> = parts.iter().flat_map(|p| p.chunks[p.from..p.end].iter()).collect();
        let mut prepared = self.extract_chunks(&all, parts.iter().map(|p| (p.doc, p.end - p.from)))?;
        report.time("extract", t);
        let mut progress = Vec::with_capacity(parts.len());
        let mut earlier = Vec::with_capacity(parts.len());
        for (p, prep) in parts.iter().zip(prepared.iter_mut()) {
            let last = p.end >= p.chunks.len();
            progress.push(if last { None } else { Some(p.end as u32) });
            // SIMILAR_TO reaches back into the parts written before.
            earlier.push(p.chunks[p.from.saturating_sub(SIMILAR_WINDOW)..p.from].to_vec());
            debug_assert_eq!(prep.chunks.len(), p.end - p.from);
        }
        self.write_prepared_parts(store, prepared, &progress, &earlier, true, report)?;
        self.progress.advance(parts.iter().map(|p| p.advance).sum());
        if let Some(place) = parts.last().and_then(Part::place) {
            self.progress.at(&place);
        }
        Ok(())
    }

    /// Run the common stages on documents that were chunked and extracted elsewhere
    /// (importers), in batches of `embed.import_docs_per_batch` documents; batch k-1 is
    /// written while batch k is embedded, by a writer thread at idle priority where the OS
    /// lets the process set it back (see `overlap.rs`), else before it.
    pub fn index_prepared(&self, store: &mut dyn StoreWrite, items: Vec<Prepared>) -> Result<IndexReport> {
        let mut report = IndexReport::default();
        let (new, aliases) = self.only_new(store, items.iter().map(|p| p.doc.clone()).collect(), &mut report)?;
        let ids: HashSet<String> = new.into_iter().map(|d| d.id).collect();
        let items: Vec<Prepared> = items.into_iter().filter(|p| ids.contains(&p.doc.id)).collect();
        self.progress.start("indexing", items.len() as u64);
        let per = self.config.embed.import_docs_per_batch.max(1);
        let mut it = items.into_iter().peekable();
        // Batch k is embedded while batch k-1 is written (`overlap`).
        let mut pending: Option<Pending> = None;
        let mut run = || -> Result<()> {
            while it.peek().is_some() {
                self.check_cancel()?;
                let batch: Vec<Prepared> = it.by_ref().take(per).collect();
                let n = batch.len();
                let unwritten = pending.as_ref().map(|(b, _)| Unwritten::of(b)).unwrap_or_default();
                // Imported graphs are taken as given: no merging by similarity.
                let staged = self.stage(store, batch, vec![None; n], &[], false, &unwritten, &mut report)?;
                let t = Instant::now();
                let (embedded, written) = alongside(store, pending.take(), || self.embed_staged(staged));
                let took = t.elapsed();
                if let Some(written) = written {
                    let w = written?;
                    // `embed` is the embedding's wall time, without the wait for the writer.
                    report.add_time("embed", took.saturating_sub(w.waited));
                    report.add_time("write", w.took);
                    report.add_time("write_wait", w.waited);
                    self.progress.advance(w.units);
                } else {
                    report.add_time("embed", took);
                }
                pending = Some((self.complete(None, embedded?, &mut report)?, n as u64));
            }
            Ok(())
        };
        let result = run();
        // A batch embedded is written whatever stopped the loop (cancel, a later batch's
        // error): no work done is thrown away.
        if let Some((batch, n)) = pending.take() {
            let t = Instant::now();
            store.write_batch(&batch)?;
            report.time("write", t);
            self.progress.advance(n);
        }
        result?;
        self.progress.finish();
        self.write_aliases(store, aliases)?;
        self.finish(store, &mut report)?;
        Ok(report)
    }

    fn check_cancel(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Sort the run's documents ([`crate::incoming`]): delete the documents new versions
    /// replace, count the unchanged, keep the new names of content indexed already for
    /// [`Pipeline::write_aliases`], and return the documents to index.
    fn only_new(
        &self,
        store: &mut dyn StoreWrite,
        docs: Vec<Document>,
        report: &mut IndexReport,
    ) -> Result<(Vec<Document>, Vec<(String, String)>)> {
        report.documents_seen += docs.len() as u64;
        let sorted = crate::incoming::sort(Some(&*store as &dyn StoreRead), docs)?;
        for old in &sorted.replaced {
            store.delete_document(old, &mut |names| self.embedder.embed(names, EmbedKind::Passage))?;
            report.documents_replaced += 1;
        }
        if !sorted.renames.is_empty() {
            report.documents_replaced += sorted.renames.len() as u64;
            store.write_batch(&WriteBatch { renames: sorted.renames, ..Default::default() })?;
        }
        report.documents_unchanged += sorted.unchanged;
        report.documents_duplicate += sorted.aliases.len() as u64;
        Ok((sorted.new, sorted.aliases))
    }

    /// Record the new names of content indexed already, once the documents they name are
    /// written (a name of a document that did not get written is dropped by the store).
    fn write_aliases(&self, store: &mut dyn StoreWrite, aliases: Vec<(String, String)>) -> Result<()> {
        if aliases.is_empty() {
            return Ok(());
        }
        store.write_batch(&WriteBatch { aliases, ..Default::default() })
    }

    /// Extract `chunks` on all cores, one result per chunk, in order.
    fn extract_all(&self, all: &[&Chunk]) -> Vec<Result<Extraction>> {
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let per = all.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let hs: Vec<_> = all.chunks(per).map(|part| s.spawn(move || self.extractor.extract_batch(part))).collect();
            hs.into_iter()
                .zip(all.chunks(per))
                .flat_map(|(h, part)| {
                    h.join().unwrap_or_else(|_| {
                        part.iter().map(|_| Err(Error::Store("extractor panicked".into()))).collect()
                    })
                })
                .collect()
        })
    }

    /// Extract `all`, the chunks of `docs` in order (each document with its count of
    /// chunks), into one [`Prepared`] per document.
    fn extract_chunks<'d>(
        &self,
        all: &[&Chunk],
        docs: impl Iterator<Item = (&'d Document, usize)>,
    ) -> Result<Vec<Prepared>> {
        let mut extractions = Vec::with_capacity(all.len());
        let mut failures: HashMap<String, Vec<ExtractionFailure>> = HashMap::new();
        for (r, c) in self.extract_all(all).into_iter().zip(all) {
            extractions.push(r.unwrap_or_else(|e| {
                // A failed extraction costs the chunk its graph until a later run, never
                // the chunk itself.
                self.progress.warn(&format!(
                    "extraction failed for chunk {} of {}: {e} (kept; the next `rhizome index` retries it)",
                    c.ordinal, c.doc_id
                ));
                failures.entry(c.doc_id.clone()).or_default().push(ExtractionFailure {
                    chunk_id: c.id.clone(),
                    doc_id: c.doc_id.clone(),
                    error: e.to_string(),
                    attempts: 1,
                });
                Extraction::default()
            }));
        }
        let mut ex = extractions.into_iter();
        let mut chunks = all.iter();
        Ok(docs
            .map(|(doc, n)| {
                let extractions = ex.by_ref().take(n).collect();
                let chunks = chunks.by_ref().take(n).map(|c| (*c).clone()).collect();
                let failures = failures.remove(&doc.id).unwrap_or_default();
                Prepared { doc: doc.clone(), chunks, extractions, doc_extraction: Extraction::default(), failures }
            })
            .collect())
    }

    /// Extract again the chunks whose extraction failed in an earlier run; write what
    /// succeeds, count another attempt for the rest.
    fn retry_failures(&self, store: &mut dyn StoreWrite, report: &mut IndexReport) -> Result<()> {
        let failures = store.extraction_failures()?;
        if failures.is_empty() {
            return Ok(());
        }
        let t = Instant::now();
        self.progress.start("retrying failed chunks", failures.len() as u64);
        let ids: Vec<String> = failures.iter().map(|f| f.chunk_id.clone()).collect();
        let chunks = store.chunks(&ids)?;
        let refs: Vec<&Chunk> = chunks.iter().map(|c| &c.chunk).collect();
        let attempts: HashMap<&str, u32> = failures.iter().map(|f| (f.chunk_id.as_str(), f.attempts)).collect();
        let mut batch = WriteBatch::default();
        for (r, c) in self.extract_all(&refs).into_iter().zip(&refs) {
            report.failures_retried += 1;
            match r {
                Ok(ex) => {
                    resolve(&ex, &c.doc_id, Some(&c.id), &mut batch);
                    batch.resolved_failures.push(c.id.clone());
                    report.failures_recovered += 1;
                }
                Err(e) => {
                    let n = attempts.get(c.id.as_str()).copied().unwrap_or(0) + 1;
                    self.progress.warn(&format!(
                        "extraction failed again for chunk {} of {} (attempt {n}): {e}",
                        c.ordinal, c.doc_id
                    ));
                    batch.failures.push(ExtractionFailure {
                        chunk_id: c.id.clone(),
                        doc_id: c.doc_id.clone(),
                        error: e.to_string(),
                        attempts: n,
                    });
                }
            }
        }
        self.progress.advance(refs.len() as u64);
        let staged =
            self.stage_resolved(store, batch, Vec::new(), Vec::new(), &[], true, &Unwritten::default(), report)?;
        let embedded = self.embed_staged(staged)?;
        let (batch, _, _) = self.vectors_in(Some(&*store as &dyn StoreRead), embedded, report)?;
        store.write_batch(&batch)?;
        self.progress.finish();
        report.time("retry", t);
        Ok(())
    }

    /// Resolve, embed, link and write one batch of document parts. `progress[i]` is
    /// `None` when item i ends its document, else the count of its document's chunks
    /// written once this batch is; `earlier[i]` are the chunks of its document just
    /// before the part (already written), for SIMILAR_TO.
    fn write_prepared_parts(
        &self,
        store: &mut dyn StoreWrite,
        items: Vec<Prepared>,
        progress: &[Option<u32>],
        earlier: &[Vec<Chunk>],
        merge: bool,
        report: &mut IndexReport,
    ) -> Result<()> {
        let staged = self.stage(store, items, progress.to_vec(), earlier, merge, &Unwritten::default(), report)?;
        let t = Instant::now();
        let embedded = self.embed_staged(staged)?;
        report.time("embed", t);
        let batch = self.complete(Some(&*store as &dyn StoreRead), embedded, report)?;
        let t = Instant::now();
        store.write_batch(&batch)?;
        report.time("write", t);
        Ok(())
    }

    /// After all batches: summarise entities described in many chunks (failures are
    /// warnings: the joined descriptions stay), then rebuild synonymy edges if entities
    /// changed.
    fn finish(&self, store: &mut dyn StoreWrite, report: &mut IndexReport) -> Result<()> {
        report.documents_new = report.documents_indexed.saturating_sub(report.documents_replaced);
        report.claim_replies_unreadable = self.extractor.counts().claim_replies_unreadable;
        if let Some(summarizer) = self.summarizer.filter(|_| self.summarize_min > 0) {
            let t = Instant::now();
            let tasks = store.summary_tasks(self.summarize_min)?;
            self.progress.start("summaries", tasks.len() as u64);
            for part in tasks.chunks(32) {
                self.check_cancel()?;
                for (task, r) in part.iter().zip(summarizer.summarize_batch(part)) {
                    match r {
                        Ok(s) if !s.trim().is_empty() => {
                            store.set_entity_summary(&task.entity_id, &task.fingerprint, s.trim())?;
                            report.entities_summarized += 1;
                        }
                        Ok(_) => self.progress.warn(&format!("empty summary for entity {:?}", task.name)),
                        Err(e) => self.progress.warn(&format!("summary of entity {:?} failed: {e}", task.name)),
                    }
                }
                self.progress.advance(part.len() as u64);
            }
            self.progress.finish();
            report.time("summarize", t);
        }
        if store.synonyms_dirty()? {
            let t = Instant::now();
            self.progress.start("synonymy", 1);
            let n = store.rebuild_synonyms(self.config.synonymy.top_k, self.config.synonymy.threshold, self.cancel)?;
            self.progress.finish();
            report.synonym_edges = Some(n);
            report.time("synonymy", t);
        }
        Ok(())
    }
}

/// A part of a document in a batch: its chunks `from..end` of `chunks`.
struct Part<'d> {
    doc: &'d Document,
    chunks: std::sync::Arc<Vec<Chunk>>,
    from: usize,
    end: usize,
    /// Progress units (bytes of text) this part accounts for.
    advance: u64,
}

impl Part<'_> {
    /// The last page this part wrote, of how many: `report.pdf: page 120 of 500`.
    fn place(&self) -> Option<String> {
        let pages = self.doc.pages.as_ref()?;
        let last = self.chunks.get(self.end.checked_sub(1)?)?.pages?.last;
        let name = self.doc.source.rsplit(['/', '\\']).next().unwrap_or(&self.doc.source);
        Some(format!("{name}: {} {last} of {}", pages.unit, pages.pages.len()))
    }
}

#[cfg(test)]
mod tests {
    use rhizome_core::{PageRange, PageSpan, Pagination};

    use super::*;

    #[test]
    fn a_part_of_a_paged_document_says_its_last_page() {
        let mut doc = Document::new("/docs/long report.pdf", "Long", "one two three");
        let span = |number, start, end| PageSpan { number, label: None, start, end };
        doc.pages = Some(Pagination { unit: "page".into(), pages: vec![span(1, 0, 4), span(2, 4, 8), span(3, 8, 13)] });
        let chunk = |ordinal: u32, page: u32| Chunk {
            id: format!("c{ordinal}"),
            doc_id: doc.id.clone(),
            ordinal,
            text: String::new(),
            tokens: 1,
            start: 0,
            end: 0,
            pages: Some(PageRange { first: page, last: page }),
        };
        let chunks = std::sync::Arc::new(vec![chunk(0, 1), chunk(1, 2), chunk(2, 3)]);
        let part = Part { doc: &doc, chunks: chunks.clone(), from: 0, end: 2, advance: 0 };
        assert_eq!(part.place().as_deref(), Some("long report.pdf: page 2 of 3"));
        doc.pages = None;
        let plain = Part { doc: &doc, chunks, from: 0, end: 2, advance: 0 };
        assert_eq!(plain.place(), None, "a document without pages says nothing");
    }
}
