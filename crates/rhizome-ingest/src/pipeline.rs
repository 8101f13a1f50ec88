//! The ingestion pipeline: load -> chunk -> lexical graph -> extract -> prune -> resolve ->
//! embed (chunks, new entities, new facts) -> SIMILAR_TO -> write, then synonymy.
//!
//! Work is committed in batches of documents (`embed.docs_per_batch`), one store
//! transaction each. Documents already in the store (same content hash) are skipped, so a
//! rerun after a crash, or after adding files, only processes what is new.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rhizome_core::{
    Chunk, Chunker, Config, Document, EmbedKind, Embedder, Error, Extraction, ExtractionFailure,
    Extractor, Result, StoreWrite, Summarizer, VectorKind, WriteBatch,
};

pub use crate::embed_texts::{embed_text, TITLE_BYTES};
use crate::embed_texts::{embed_chunks, entity_texts, fact_texts};
pub use crate::resolve::resolve;
use serde::Serialize;

/// Reports progress; the CLI draws bars, tests and `--json` use [`NoProgress`].
pub trait Progress: Sync {
    /// A stage starts with `total` units (documents, items).
    fn start(&self, stage: &str, total: u64);
    fn advance(&self, n: u64);
    fn finish(&self);
    /// A stage starts whose units are bytes of text.
    fn start_bytes(&self, stage: &str, total: u64) {
        self.start(stage, total);
    }
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
    /// Documents written in this run: new ones and new versions of replaced ones.
    pub documents_indexed: u64,
    /// Documents that were not in the index in any version.
    pub documents_new: u64,
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
    ///
    /// Work is committed in batches of at most `embed.docs_per_batch` documents and
    /// `embed.chunks_per_batch` chunks; a document with more chunks than that (a large
    /// file) is written in parts, so memory stays bounded, progress moves inside it, and
    /// a rerun after a kill goes on from the last part written
    /// ([`StoreRead::partial_documents`]). Progress is counted in bytes of text.
    ///
    /// [`StoreRead::partial_documents`]: rhizome_core::StoreRead::partial_documents
    pub fn index_documents(&self, store: &mut dyn StoreWrite, docs: Vec<Document>)
        -> Result<IndexReport> {
        let mut report = IndexReport::default();
        self.retry_failures(store, &mut report)?;
        let docs = self.only_new(store, docs, &mut report)?;
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
            loop {
                let room = max_chunks.saturating_sub(in_batch).max(1);
                let end = (from + room).min(n);
                let advance = share(end) - share(from);
                parts.push(Part { doc, chunks: chunks.clone(), from, end, advance });
                in_batch += end - from;
                if parts.len() >= max_docs || in_batch >= max_chunks {
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
        self.finish(store, &mut report)?;
        Ok(report)
    }

    /// Extract and write one batch of document parts.
    fn write_parts(&self, store: &mut dyn StoreWrite, parts: Vec<Part<'_>>, report: &mut IndexReport)
        -> Result<()> {
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
        Ok(())
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
        let per = self.config.embed.import_docs_per_batch.max(1);
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

    /// Extract `all`, the chunks of `docs` in order (each document with its count of
    /// chunks), into one [`Prepared`] per document.
    fn extract_chunks<'d>(&self, all: &[&Chunk], docs: impl Iterator<Item = (&'d Document, usize)>)
        -> Result<Vec<Prepared>> {
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
        let entities = self.missing(store, VectorKind::Entity, entity_texts(batch))?;
        // `merge` is true exactly when this pipeline's extractor made the batch's facts.
        let facts = if self.embeds_facts(merge) {
            self.missing(store, VectorKind::Fact, fact_texts(batch))?
        } else {
            Vec::new()
        };
        // One call for both: short strings of similar lengths share forward passes, and a
        // batch has one partly filled pass instead of two.
        let inputs: Vec<String> = entities.iter().chain(&facts).map(|(_, t)| t.clone()).collect();
        let vecs = if inputs.is_empty() { Vec::new() } else { self.embedder.embed(&inputs, EmbedKind::Passage)? };
        let mut vecs = vecs.into_iter();
        let mut entity_vecs: Vec<(String, Vec<f32>)> =
            entities.into_iter().map(|(id, _)| id).zip(vecs.by_ref()).collect();
        let fact_vecs: Vec<(String, Vec<f32>)> = facts.into_iter().map(|(id, _)| id).zip(vecs).collect();
        let threshold = self.config.extract.resolve_similarity;
        if merge && threshold > 0.0 {
            let aliases = crate::resolve::merge_similar(store, batch, &mut entity_vecs, threshold)?;
            report.entities_merged += aliases.len() as u64;
        }
        for (id, v) in entity_vecs {
            batch.vectors.push((VectorKind::Entity, id, v));
        }
        for (id, v) in fact_vecs {
            batch.vectors.push((VectorKind::Fact, id, v));
        }
        Ok(())
    }

    /// Whether facts get vectors (`embed.fact_vectors`). A fact vector is read only to link
    /// the question to facts that an LLM then recognises (hippo) or that seed a path
    /// (multipath); the LLM-free extractor's triples never seed hippo without an LLM, and
    /// on MuSiQue hippo and multipath score the same with or without them, while they are
    /// a third of the strings embedded. So `auto` embeds the facts of an LLM extractor and
    /// of imports (another tool's LLM triples), not those of `nlp`.
    fn embeds_facts(&self, extracted_here: bool) -> bool {
        match self.config.embed.fact_vectors.as_str() {
            "always" => true,
            "never" => false,
            _ => !(extracted_here && self.extractor.name() == "nlp"),
        }
    }

    /// Resolve, embed, link and write one batch of whole documents.
    fn write_prepared(&self, store: &mut dyn StoreWrite, items: Vec<Prepared>, merge: bool,
        report: &mut IndexReport) -> Result<()> {
        let n = items.len();
        self.write_prepared_parts(store, items, &vec![None; n], &vec![Vec::new(); n], merge, report)
    }

    /// Resolve, embed, link and write one batch of document parts. `progress[i]` is
    /// `None` when item i ends its document, else the count of its document's chunks
    /// written once this batch is; `earlier[i]` are the chunks of its document just
    /// before the part (already written), for SIMILAR_TO.
    fn write_prepared_parts(&self, store: &mut dyn StoreWrite, items: Vec<Prepared>,
        progress: &[Option<u32>], earlier: &[Vec<Chunk>], merge: bool, report: &mut IndexReport)
        -> Result<()> {
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
        let chunk_ids: Vec<&Chunk> = items.iter().flat_map(|p| p.chunks.iter()).collect();
        let (chunk_vecs, sentence_vecs) = embed_chunks(self.embedder, &chunk_ids, &chunk_texts)?;
        let mut by_chunk: HashMap<&str, &Vec<f32>> = HashMap::new();
        for (c, v) in chunk_ids.iter().zip(&chunk_vecs) {
            by_chunk.insert(c.id.as_str(), v);
        }
        // SIMILAR_TO between chunks of one document at most SIMILAR_WINDOW apart.
        for (p, before) in items.iter().zip(earlier) {
            let ids: Vec<String> = before.iter().map(|c| c.id.clone()).collect();
            let stored: HashMap<String, Vec<f32>> = if ids.is_empty() {
                HashMap::new()
            } else {
                store.vectors(VectorKind::Chunk, &ids)?.into_iter().collect()
            };
            let known: Vec<(&Chunk, &Vec<f32>)> = before
                .iter()
                .filter_map(|c| stored.get(&c.id).map(|v| (c, v)))
                .chain(p.chunks.iter().map(|c| (c, by_chunk[c.id.as_str()])))
                .collect();
            let first_new = known.len() - p.chunks.len();
            for j in first_new..known.len() {
                for i in (0..j).rev() {
                    let (a, b) = (known[i].0, known[j].0);
                    if b.ordinal - a.ordinal > SIMILAR_WINDOW as u32 {
                        break;
                    }
                    let s = rhizome_core::dot(known[i].1, known[j].1);
                    if s >= self.config.similar.threshold {
                        batch.similar.push((a.id.clone(), b.id.clone(), s));
                    }
                }
            }
        }
        for (c, v) in chunk_ids.iter().zip(chunk_vecs) {
            batch.vectors.push((VectorKind::Chunk, c.id.clone(), v));
        }
        batch.vectors.extend(sentence_vecs.into_iter().map(|(id, v)| (VectorKind::Sentence, id, v)));
        self.embed_graph(store, &mut batch, merge, report)?;
        report.time("embed", t);

        let t = Instant::now();
        for (p, done) in items.iter().zip(progress) {
            batch.doc_progress.push((p.doc.id.clone(), *done));
            if done.is_none() {
                report.documents_indexed += 1;
                let lang = rhizome_core::lang::detect_language(&p.doc.text);
                *report.languages.entry(lang.code().to_string()).or_default() += 1;
            }
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

    /// The `(id, text)` pairs whose id has no vector of `kind` in the store.
    fn missing(&self, store: &dyn StoreWrite, kind: VectorKind, texts: Vec<(String, String)>)
        -> Result<Vec<(String, String)>> {
        let ids: Vec<String> = texts.iter().map(|(id, _)| id.clone()).collect();
        let missing: HashSet<String> = store.missing_vectors(kind, &ids)?.into_iter().collect();
        Ok(texts.into_iter().filter(|(id, _)| missing.contains(id)).collect())
    }

    /// After all batches: summarise entities described in many chunks (failures are
    /// warnings: the joined descriptions stay), then rebuild synonymy edges if entities
    /// changed.
    fn finish(&self, store: &mut dyn StoreWrite, report: &mut IndexReport) -> Result<()> {
        report.documents_new = report.documents_indexed.saturating_sub(report.documents_replaced);
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

/// SIMILAR_TO links chunks of one document at most this many positions apart: every
/// pair in a document of up to 65 chunks, and a bounded amount of work per chunk in a
/// large file.
pub const SIMILAR_WINDOW: usize = 64;

/// A part of a document in a batch: its chunks `from..end` of `chunks`.
struct Part<'d> {
    doc: &'d Document,
    chunks: std::sync::Arc<Vec<Chunk>>,
    from: usize,
    end: usize,
    /// Progress units (bytes of text) this part accounts for.
    advance: u64,
}
