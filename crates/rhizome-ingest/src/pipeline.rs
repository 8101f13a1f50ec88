//! The ingestion pipeline: load -> chunk -> lexical graph -> extract -> prune -> resolve ->
//! embed (chunks, new entities, new facts) -> SIMILAR_TO -> write, then synonymy.
//!
//! Work is committed in batches of documents (`embed.docs_per_batch`), one store
//! transaction each. Documents already in the store (same content hash) are skipped, so a
//! rerun after a crash, or after adding files, only processes what is new.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rhizome_core::ids::{entity_id, fact_id, normalize_name, relation_id};
use rhizome_core::{
    Chunk, Chunker, Config, Document, EmbedKind, Embedder, Error, Extraction, Extractor, Fact,
    FactRecord, MentionRecord, Relation, RelationRecord, Result, StoreWrite, Summarizer, VectorKind,
    WriteBatch,
};
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
        let docs = self.only_new(store, docs, &mut report)?;
        self.progress.start("indexing", docs.len() as u64);
        for batch in docs.chunks(self.config.embed.docs_per_batch.max(1)) {
            self.check_cancel()?;
            let t = Instant::now();
            let prepared = self.chunk_and_extract(batch)?;
            report.time("extract", t);
            self.write_prepared(store, prepared, &mut report)?;
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
            self.write_prepared(store, batch, &mut report)?;
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

    fn chunk_and_extract(&self, docs: &[Document]) -> Result<Vec<Prepared>> {
        let chunked: Vec<(Document, Vec<Chunk>)> =
            docs.iter().map(|d| (d.clone(), self.chunker.chunk(d))).collect();
        let all: Vec<&Chunk> = chunked.iter().flat_map(|(_, c)| c.iter()).collect();
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let per = all.len().div_ceil(threads).max(1);
        let parts: Vec<Vec<Result<Extraction>>> = std::thread::scope(|s| {
            let hs: Vec<_> = all
                .chunks(per)
                .map(|part| s.spawn(move || self.extractor.extract_batch(part)))
                .collect();
            hs.into_iter()
                .zip(all.chunks(per))
                .map(|(h, part)| {
                    h.join().unwrap_or_else(|_| {
                        part.iter().map(|_| Err(Error::Store("extractor panicked".into()))).collect()
                    })
                })
                .collect()
        });
        let mut extractions = Vec::with_capacity(all.len());
        for (results, part) in parts.into_iter().zip(all.chunks(per)) {
            for (r, c) in results.into_iter().zip(part) {
                extractions.push(r.unwrap_or_else(|e| {
                    // A failed extraction costs the chunk its graph, never the chunk itself.
                    self.progress.warn(&format!(
                        "extraction failed for chunk {} of {}: {e}",
                        c.ordinal, c.doc_id
                    ));
                    Extraction::default()
                }));
            }
        }
        let mut ex = extractions.into_iter();
        Ok(chunked
            .into_iter()
            .map(|(doc, chunks)| {
                let extractions = ex.by_ref().take(chunks.len()).collect();
                Prepared { doc, chunks, extractions, doc_extraction: Extraction::default() }
            })
            .collect())
    }

    /// Resolve, embed, link and write one batch.
    fn write_prepared(&self, store: &mut dyn StoreWrite, items: Vec<Prepared>,
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
        }
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
        self.embed_missing(store, VectorKind::Entity, entity_texts(&batch), &mut batch)?;
        self.embed_missing(store, VectorKind::Fact, fact_texts(&batch), &mut batch)?;
        report.time("embed", t);

        let t = Instant::now();
        report.documents_indexed += items.len() as u64;
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

    fn embed_missing(&self, store: &dyn StoreWrite, kind: VectorKind,
        texts: Vec<(String, String)>, batch: &mut WriteBatch) -> Result<()> {
        let ids: Vec<String> = texts.iter().map(|(id, _)| id.clone()).collect();
        let missing: HashSet<String> = store.missing_vectors(kind, &ids)?.into_iter().collect();
        let todo: Vec<(String, String)> =
            texts.into_iter().filter(|(id, _)| missing.contains(id)).collect();
        if todo.is_empty() {
            return Ok(());
        }
        let inputs: Vec<String> = todo.iter().map(|(_, t)| t.clone()).collect();
        let vecs = self.embedder.embed(&inputs, EmbedKind::Passage)?;
        for ((id, _), v) in todo.into_iter().zip(vecs) {
            batch.vectors.push((kind, id, v));
        }
        Ok(())
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

/// Resolve one extraction into records: entities merged by normalised name; relation and
/// fact endpoints become entities too. Records with an empty name are dropped.
pub fn resolve(ex: &Extraction, doc_id: &str, chunk_id: Option<&str>, batch: &mut WriteBatch) {
    let mut mentions: BTreeMap<String, MentionRecord> = BTreeMap::new();
    let mut mention = |name: &str, ty: &str, desc: &str, count: u32| {
        let key = normalize_name(name);
        if key.is_empty() {
            return None;
        }
        let id = entity_id(name);
        let m = mentions.entry(id.clone()).or_insert_with(|| MentionRecord {
            entity_id: id.clone(),
            name: name.trim().to_string(),
            entity_type: ty.to_string(),
            description: desc.to_string(),
            doc_id: doc_id.to_string(),
            chunk_id: chunk_id.map(str::to_string),
            count: 0,
        });
        m.count += count;
        if m.description.is_empty() {
            m.description = desc.to_string();
        }
        Some(id)
    };
    for e in &ex.entities {
        mention(&e.name, &e.entity_type, &e.description, e.count.max(1));
    }
    let mut relations: BTreeMap<String, RelationRecord> = BTreeMap::new();
    for r in &ex.relations {
        let (Some(s), Some(t)) =
            (mention(&r.source, "ENTITY", "", 0), mention(&r.target, "ENTITY", "", 0))
        else {
            continue;
        };
        let rel_type = if r.rel_type.trim().is_empty() { "RELATED" } else { r.rel_type.trim() };
        if s == t {
            continue;
        }
        let id = relation_id(&s, rel_type, &t);
        let rec = relations.entry(id.clone()).or_insert_with(|| RelationRecord {
            relation: Relation {
                id,
                source_id: s,
                target_id: t,
                rel_type: rel_type.to_string(),
                description: r.description.clone(),
                weight: 0.0,
            },
            doc_id: doc_id.to_string(),
            chunk_id: chunk_id.map(str::to_string),
        });
        rec.relation.weight += if r.weight > 0.0 { r.weight } else { 1.0 };
    }
    let mut facts: BTreeMap<String, FactRecord> = BTreeMap::new();
    for f in &ex.facts {
        let (Some(s), Some(o)) =
            (mention(&f.subject, "ENTITY", "", 0), mention(&f.object, "ENTITY", "", 0))
        else {
            continue;
        };
        if normalize_name(&f.predicate).is_empty() {
            continue;
        }
        let id = fact_id(&f.subject, &f.predicate, &f.object);
        facts.entry(id.clone()).or_insert_with(|| FactRecord {
            fact: Fact {
                id,
                subject: f.subject.trim().to_string(),
                predicate: f.predicate.trim().to_string(),
                object: f.object.trim().to_string(),
                subject_id: s,
                object_id: o,
            },
            doc_id: doc_id.to_string(),
            chunk_id: chunk_id.map(str::to_string),
        });
    }
    batch.mentions.extend(mentions.into_values().map(|mut m| {
        m.count = m.count.max(1);
        m
    }));
    batch.relations.extend(relations.into_values());
    batch.facts.extend(facts.into_values());
}
