//! The ingestion pipeline: load -> chunk -> lexical graph -> extract -> prune -> resolve ->
//! embed (chunks, new entities, new facts) -> SIMILAR_TO -> write, then synonymy.
//!
//! Work is committed in batches of documents (`embed.docs_per_batch`), one store
//! transaction each. Documents already in the store (same content hash) are skipped, so a
//! rerun after a crash, or after adding files, only processes what is new.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rhizome_core::ids::normalize_name;
use rhizome_core::{
    Chunk, Chunker, Config, Document, EmbedKind, Embedder, Error, Extraction, ExtractionFailure,
    Extractor, Result, StoreWrite, Summarizer, VectorKind, WriteBatch,
};

pub use crate::resolve::resolve;
use serde::Serialize;

/// Reports progress; the CLI draws bars, tests and `--json` use [`NoProgress`].
pub trait Progress: Sync {
    /// A stage starts with `total` units (documents, items).
    fn start(&self, stage: &str, total: u64);
    fn advance(&self, n: u64);
    fn finish(&self);
    /// A warning for the user (skipped file, dropped record).
    fn warn(&self, msg: &str);
}

/// Progress that shows nothing but keeps warnings on stderr.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
    fn warn(&self, msg: &str) {
        eprintln!("warning: {msg}");
    }
}

/// A document ready for the common stages: chunked, with one extraction per chunk and
/// optionally records that belong to the document as a whole (e.g. an imported edge list).
#[derive(Debug, Clone)]
pub struct Prepared {
    pub doc: Document,
    pub chunks: Vec<Chunk>,
    pub extractions: Vec<Extraction>,
    pub doc_extraction: Extraction,
    /// Chunks whose extraction failed (their `extractions` entry is empty): recorded in
    /// the index and retried by the next run.
    pub failures: Vec<ExtractionFailure>,
}

/// What an indexing run did, printed by `rhizome index` and stored for the record.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IndexReport {
    pub documents_seen: u64,
    pub documents_indexed: u64,
    pub documents_unchanged: u64,
    pub documents_replaced: u64,
    pub chunks: u64,
    pub entities_mentioned: u64,
    pub relations: u64,
    pub facts: u64,
    pub vectors: u64,
    pub synonym_edges: Option<u64>,
    pub entities_summarized: u64,
    /// New entities merged into an existing one by embedding similarity (and name check).
    pub entities_merged: u64,
    /// Chunks whose extraction failed in this run.
    pub extraction_failures: u64,
    /// Earlier failed chunks retried in this run, and how many of them succeeded.
    pub failures_retried: u64,
    pub failures_recovered: u64,
    /// Documents indexed in this run per language (`en`, `vi`, `zh`), by
    /// [`rhizome_core::lang::detect_language`].
    pub languages: BTreeMap<String, u64>,
    pub timings_ms: BTreeMap<String, f64>,
}

impl IndexReport {
    fn time(&mut self, stage: &str, since: Instant) {
        *self.timings_ms.entry(stage.to_string()).or_default() += since.elapsed().as_secs_f64() * 1e3;
    }
}

/// The pipeline's steps and settings.
pub struct Pipeline<'a> {
    pub chunker: &'a dyn Chunker,
    pub extractor: &'a dyn Extractor,
    pub embedder: &'a dyn Embedder,
    pub config: &'a Config,
    pub progress: &'a dyn Progress,
    pub cancel: &'a AtomicBool,
    /// Summarises entities described in at least `summarize_min` chunks (None: never).
    pub summarizer: Option<&'a dyn Summarizer>,
    pub summarize_min: usize,
}

impl Pipeline<'_> {
    /// Chunk and extract `docs`, then run the common stages.
    pub fn index_documents(&self, store: &mut dyn StoreWrite, docs: Vec<Document>)
        -> Result<IndexReport> {
        let mut report = IndexReport::default();
        self.retry_failures(store, &mut report)?;
        let docs = self.only_new(store, docs, &mut report)?;
        self.progress.start("indexing", docs.len() as u64);
        for batch in docs.chunks(self.config.embed.docs_per_batch.max(1)) {
            self.check_cancel()?;
            let t = Instant::now();
            let prepared = self.chunk_and_extract(batch)?;
            report.time("extract", t);
            self.write_prepared(store, prepared, true, &mut report)?;
            self.progress.advance(batch.len() as u64);
        }
        self.progress.finish();
        self.finish(store, &mut report)?;
        Ok(report)
    }

    /// Run the common stages on documents that were chunked and extracted elsewhere
    /// (importers).
    pub fn index_prepared(&self, store: &mut dyn StoreWrite, items: Vec<Prepared>)
        -> Result<IndexReport> {
        let mut report = IndexReport::default();
        let ids: HashSet<String> = self
            .only_new(store, items.iter().map(|p| p.doc.clone()).collect(), &mut report)?
            .into_iter()
            .map(|d| d.id)
            .collect();
        let items: Vec<Prepared> = items.into_iter().filter(|p| ids.contains(&p.doc.id)).collect();
        self.progress.start("indexing", items.len() as u64);
        let per = self.config.embed.docs_per_batch.max(1);
        let mut it = items.into_iter().peekable();
        while it.peek().is_some() {
            self.check_cancel()?;
            let batch: Vec<Prepared> = it.by_ref().take(per).collect();
            let n = batch.len() as u64;
            // Imported graphs are taken as given: no merging by similarity.
            self.write_prepared(store, batch, false, &mut report)?;
            self.progress.advance(n);
        }
        self.progress.finish();
        self.finish(store, &mut report)?;
        Ok(report)
    }

    fn check_cancel(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) { Err(Error::Cancelled) } else { Ok(()) }
    }

    /// Drop documents already indexed; replace documents whose source changed content.
    fn only_new(&self, store: &mut dyn StoreWrite, docs: Vec<Document>, report: &mut IndexReport)
        -> Result<Vec<Document>> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for d in docs {
            report.documents_seen += 1;
            if !seen.insert(d.id.clone()) || store.has_document(&d.id)? {
                report.documents_unchanged += 1;
                continue;
            }
            if let Some(old) = store.find_document(&d.source)? {
                if old.source == d.source && old.id != d.id {
                    store.delete_document(&old.id)?;
                    report.documents_replaced += 1;
                }
            }
            out.push(d);
        }
        Ok(out)
    }

    /// Extract `chunks` on all cores, one result per chunk, in order.
    fn extract_all(&self, all: &[&Chunk]) -> Vec<Result<Extraction>> {
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let per = all.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let hs: Vec<_> = all
                .chunks(per)
                .map(|part| s.spawn(move || self.extractor.extract_batch(part)))
                .collect();
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

    fn chunk_and_extract(&self, docs: &[Document]) -> Result<Vec<Prepared>> {
        let chunked: Vec<(Document, Vec<Chunk>)> =
            docs.iter().map(|d| (d.clone(), self.chunker.chunk(d))).collect();
        let all: Vec<&Chunk> = chunked.iter().flat_map(|(_, c)| c.iter()).collect();
        let mut extractions = Vec::with_capacity(all.len());
        let mut failures: HashMap<String, Vec<ExtractionFailure>> = HashMap::new();
        for (r, c) in self.extract_all(&all).into_iter().zip(&all) {
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
        Ok(chunked
            .into_iter()
            .map(|(doc, chunks)| {
                let extractions = ex.by_ref().take(chunks.len()).collect();
                let failures = failures.remove(&doc.id).unwrap_or_default();
                Prepared { doc, chunks, extractions, doc_extraction: Extraction::default(), failures }
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
        let attempts: HashMap<&str, u32> =
            failures.iter().map(|f| (f.chunk_id.as_str(), f.attempts)).collect();
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
        self.embed_graph(store, &mut batch, true, report)?;
        store.write_batch(&batch)?;
        self.progress.finish();
        report.time("retry", t);
        Ok(())
    }

    /// Embed the batch's new entities (merging near-duplicates first when `merge`) and new
    /// facts.
    fn embed_graph(&self, store: &dyn StoreWrite, batch: &mut WriteBatch, merge: bool,
        report: &mut IndexReport) -> Result<()> {
        let mut entity_vecs = self.embed_missing(store, VectorKind::Entity, entity_texts(batch))?;
        let threshold = self.config.extract.resolve_similarity;
        if merge && threshold > 0.0 {
            let aliases = crate::resolve::merge_similar(store, batch, &mut entity_vecs, threshold)?;
            report.entities_merged += aliases.len() as u64;
        }
        for (id, v) in entity_vecs {
            batch.vectors.push((VectorKind::Entity, id, v));
        }
        for (id, v) in self.embed_missing(store, VectorKind::Fact, fact_texts(batch))? {
            batch.vectors.push((VectorKind::Fact, id, v));
        }
        Ok(())
    }

    /// Resolve, embed, link and write one batch.
    fn write_prepared(&self, store: &mut dyn StoreWrite, items: Vec<Prepared>, merge: bool,
        report: &mut IndexReport) -> Result<()> {
        let t = Instant::now();
        let mut batch = WriteBatch::default();
        let titles: HashMap<String, String> =
            items.iter().map(|p| (p.doc.id.clone(), p.doc.title.clone())).collect();
        for p in &items {
            for (c, ex) in p.chunks.iter().zip(&p.extractions) {
                resolve(ex, &p.doc.id, Some(&c.id), &mut batch);
            }
            resolve(&p.doc_extraction, &p.doc.id, None, &mut batch);
            batch.failures.extend(p.failures.iter().cloned());
        }
        report.extraction_failures += batch.failures.len() as u64;
        report.time("resolve", t);

        let t = Instant::now();
        let chunk_texts: Vec<String> = items
            .iter()
            .flat_map(|p| p.chunks.iter())
            .map(|c| embed_text(titles.get(&c.doc_id).map(String::as_str).unwrap_or(""), &c.text))
            .collect();
        let chunk_vecs = self.embedder.embed(&chunk_texts, EmbedKind::Passage)?;
        let chunk_ids: Vec<&Chunk> = items.iter().flat_map(|p| p.chunks.iter()).collect();
        let mut by_chunk: HashMap<&str, &Vec<f32>> = HashMap::new();
        for (c, v) in chunk_ids.iter().zip(&chunk_vecs) {
            by_chunk.insert(c.id.as_str(), v);
        }
        // SIMILAR_TO between chunks of one document.
        for p in &items {
            for i in 0..p.chunks.len() {
                for j in i + 1..p.chunks.len() {
                    let (a, b) = (&p.chunks[i].id, &p.chunks[j].id);
                    let s = rhizome_core::dot(by_chunk[a.as_str()], by_chunk[b.as_str()]);
                    if s >= self.config.similar.threshold {
                        batch.similar.push((a.clone(), b.clone(), s));
                    }
                }
            }
        }
        for (c, v) in chunk_ids.iter().zip(chunk_vecs) {
            batch.vectors.push((VectorKind::Chunk, c.id.clone(), v));
        }
        self.embed_graph(store, &mut batch, merge, report)?;
        report.time("embed", t);

        let t = Instant::now();
        report.documents_indexed += items.len() as u64;
        for p in &items {
            let lang = rhizome_core::lang::detect_language(&p.doc.text);
            *report.languages.entry(lang.code().to_string()).or_default() += 1;
        }
        report.chunks += chunk_ids.len() as u64;
        report.entities_mentioned += batch.mentions.len() as u64;
        report.relations += batch.relations.len() as u64;
        report.facts += batch.facts.len() as u64;
        report.vectors += batch.vectors.len() as u64;
        batch.chunks = chunk_ids.into_iter().cloned().collect();
        batch.documents = items.into_iter().map(|p| p.doc).collect();
        store.write_batch(&batch)?;
        report.time("write", t);
        Ok(())
    }

    /// Vectors for the `(id, text)` pairs whose id has no vector of `kind` in the store.
    fn embed_missing(&self, store: &dyn StoreWrite, kind: VectorKind,
        texts: Vec<(String, String)>) -> Result<Vec<(String, Vec<f32>)>> {
        let ids: Vec<String> = texts.iter().map(|(id, _)| id.clone()).collect();
        let missing: HashSet<String> = store.missing_vectors(kind, &ids)?.into_iter().collect();
        let todo: Vec<(String, String)> =
            texts.into_iter().filter(|(id, _)| missing.contains(id)).collect();
        if todo.is_empty() {
            return Ok(Vec::new());
        }
        let inputs: Vec<String> = todo.iter().map(|(_, t)| t.clone()).collect();
        let vecs = self.embedder.embed(&inputs, EmbedKind::Passage)?;
        Ok(todo.into_iter().map(|(id, _)| id).zip(vecs).collect())
    }

    /// After all batches: summarise entities described in many chunks (failures are
    /// warnings: the joined descriptions stay), then rebuild synonymy edges if entities
    /// changed.
    fn finish(&self, store: &mut dyn StoreWrite, report: &mut IndexReport) -> Result<()> {
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
            let n = store.rebuild_synonyms(
                self.config.synonymy.top_k,
                self.config.synonymy.threshold,
                self.cancel,
            )?;
            self.progress.finish();
            report.synonym_edges = Some(n);
            report.time("synonymy", t);
        }
        Ok(())
    }
}

/// The text embedded for a chunk: its document's title, then the chunk.
pub fn embed_text(title: &str, text: &str) -> String {
    if title.is_empty() || text.starts_with(title) {
        text.to_string()
    } else {
        format!("{title}\n{text}")
    }
}

/// Entity ids with the text embedded for each (the normalised name: the same entity
/// always gets the same vector, whichever document introduced it).
fn entity_texts(batch: &WriteBatch) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    batch
        .mentions
        .iter()
        .filter(|m| seen.insert(m.entity_id.clone()))
        .map(|m| (m.entity_id.clone(), normalize_name(&m.name)))
        .collect()
}

fn fact_texts(batch: &WriteBatch) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    batch
        .facts
        .iter()
        .filter(|f| seen.insert(f.fact.id.clone()))
        .map(|f| {
            let x = &f.fact;
            let t = format!(
                "{} {} {}",
                normalize_name(&x.subject),
                normalize_name(&x.predicate),
                normalize_name(&x.object)
            );
            (x.id.clone(), t)
        })
        .collect()
}
