//! One batch of the pipeline in three steps, so that only the first and the last touch the
//! store and the middle one (the embedding, ~90% of an import's time) can run while the
//! store writes the previous batch ([`crate::overlap`]):
//!
//! 1. [`Pipeline::stage`]: resolve the extractions into a [`WriteBatch`] and read from the
//!    store what embedding needs (which entities and facts have no vector yet, the vectors of
//!    the chunks just before a document part, for SIMILAR_TO);
//! 2. [`Pipeline::embed_staged`]: embed chunks, sentences, new entities and new facts and
//!    link SIMILAR_TO, with no store;
//! 3. [`Pipeline::complete`]: merge near-duplicate entities into aliases (a store read, only
//!    when the pipeline's own extractor made the batch), fill in the vectors, documents,
//!    chunks and counts.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use rhizome_core::{Chunk, EmbedKind, Result, StoreRead, StoreWrite, VectorKind, WriteBatch};

use crate::embed_texts::{embed_chunks, embed_text, entity_texts, fact_texts};
use crate::resolve::resolve;
use crate::setup::{IndexReport, Pipeline, Prepared, SIMILAR_WINDOW};

/// A batch resolved, with everything it needed from the store read.
pub(crate) struct Staged {
    batch: WriteBatch,
    items: Vec<Prepared>,
    /// Per item: `None` when it ends its document, else its document's chunks written once
    /// this batch is.
    progress: Vec<Option<u32>>,
    /// Per item: the chunks of its document just before the part, with their stored vectors.
    earlier: Vec<Vec<(Chunk, Vec<f32>)>>,
    /// `(id, text)` of the entities and facts to embed.
    entities: Vec<(String, String)>,
    facts: Vec<(String, String)>,
    merge: bool,
}

/// A batch embedded: its vectors, not yet merged or filled in.
pub(crate) struct Embedded {
    batch: WriteBatch,
    items: Vec<Prepared>,
    progress: Vec<Option<u32>>,
    entity_vecs: Vec<(String, Vec<f32>)>,
    fact_vecs: Vec<(String, Vec<f32>)>,
    merge: bool,
}

/// Vector ids of a batch that is embedded but not written yet, by kind: a later batch
/// must not embed them again.
#[derive(Default)]
pub(crate) struct Unwritten {
    ids: HashMap<VectorKind, HashSet<String>>,
}

impl Unwritten {
    pub(crate) fn of(batch: &WriteBatch) -> Self {
        let mut ids: HashMap<VectorKind, HashSet<String>> = HashMap::new();
        for (kind, id, _) in &batch.vectors {
            ids.entry(*kind).or_default().insert(id.clone());
        }
        Unwritten { ids }
    }

    fn has(&self, kind: VectorKind, id: &str) -> bool {
        self.ids.get(&kind).is_some_and(|s| s.contains(id))
    }
}

impl Pipeline<'_> {
    /// Step 1: resolve `items` (document parts: `progress[i]` is `None` when item i ends its
    /// document, else its document's chunk count once written; `earlier[i]` the chunks just
    /// before the part, already written) and read what embedding needs. Entities and facts
    /// with a vector in the store or in `unwritten` are not embedded again.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn stage(
        &self,
        store: &dyn StoreWrite,
        items: Vec<Prepared>,
        progress: Vec<Option<u32>>,
        earlier: &[Vec<Chunk>],
        merge: bool,
        unwritten: &Unwritten,
        report: &mut IndexReport,
    ) -> Result<Staged> {
        let t = Instant::now();
        let mut batch = WriteBatch::default();
        for p in &items {
            for (c, ex) in p.chunks.iter().zip(&p.extractions) {
                resolve(ex, &p.doc.id, Some(&c.id), &mut batch);
            }
            resolve(&p.doc_extraction, &p.doc.id, None, &mut batch);
            batch.failures.extend(p.failures.iter().cloned());
        }
        report.extraction_failures += batch.failures.len() as u64;
        report.time("resolve", t);

        self.stage_resolved(store, batch, items, progress, earlier, merge, unwritten, report)
    }

    /// [`stage`](Self::stage) for a batch already resolved (`items` may be empty: a batch
    /// of retried extractions).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn stage_resolved(
        &self,
        store: &dyn StoreWrite,
        batch: WriteBatch,
        items: Vec<Prepared>,
        progress: Vec<Option<u32>>,
        earlier: &[Vec<Chunk>],
        merge: bool,
        unwritten: &Unwritten,
        report: &mut IndexReport,
    ) -> Result<Staged> {
        let t = Instant::now();
        let mut stored_earlier = Vec::with_capacity(items.len());
        for before in earlier.iter().take(items.len()) {
            if before.is_empty() {
                stored_earlier.push(Vec::new());
                continue;
            }
            let ids: Vec<String> = before.iter().map(|c| c.id.clone()).collect();
            let mut stored: HashMap<String, Vec<f32>> = store.vectors(VectorKind::Chunk, &ids)?.into_iter().collect();
            stored_earlier.push(before.iter().filter_map(|c| stored.remove(&c.id).map(|v| (c.clone(), v))).collect());
        }
        stored_earlier.resize_with(items.len(), Vec::new);
        let entities = self.missing(store, VectorKind::Entity, entity_texts(&batch), unwritten)?;
        // `merge` is true exactly when this pipeline's extractor made the batch's facts.
        let facts = if self.embeds_facts(merge) {
            self.missing(store, VectorKind::Fact, fact_texts(&batch), unwritten)?
        } else {
            Vec::new()
        };
        report.time("embed", t);
        Ok(Staged { batch, items, progress, earlier: stored_earlier, entities, facts, merge })
    }

    /// Step 2: embed a staged batch and link SIMILAR_TO between chunks of one document.
    /// Reads nothing from the store. The caller times it.
    pub(crate) fn embed_staged(&self, s: Staged) -> Result<Embedded> {
        let Staged { mut batch, items, progress, earlier, entities, facts, merge } = s;
        let titles: HashMap<&str, &str> = items.iter().map(|p| (p.doc.id.as_str(), p.doc.title.as_str())).collect();
        let chunk_refs: Vec<&Chunk> = items.iter().flat_map(|p| p.chunks.iter()).collect();
        let chunk_texts: Vec<String> = chunk_refs
            .iter()
            .map(|c| embed_text(titles.get(c.doc_id.as_str()).copied().unwrap_or(""), &c.text))
            .collect();
        let (chunk_vecs, sentence_vecs) = embed_chunks(self.embedder, &chunk_refs, &chunk_texts)?;
        // SIMILAR_TO between chunks of one document at most SIMILAR_WINDOW apart.
        let mut at = 0;
        for (p, before) in items.iter().zip(&earlier) {
            let known: Vec<(&Chunk, &Vec<f32>)> = before
                .iter()
                .map(|(c, v)| (c, v))
                .chain(p.chunks.iter().zip(&chunk_vecs[at..at + p.chunks.len()]))
                .collect();
            at += p.chunks.len();
            let first_new = known.len() - p.chunks.len();
            for j in first_new..known.len() {
                for i in (0..j).rev() {
                    let (a, b) = (known[i].0, known[j].0);
                    if b.ordinal - a.ordinal > SIMILAR_WINDOW as u32 {
                        break;
                    }
                    let sim = rhizome_core::dot(known[i].1, known[j].1);
                    if sim >= self.config.similar.threshold {
                        batch.similar.push((a.id.clone(), b.id.clone(), sim));
                    }
                }
            }
        }
        for (c, v) in chunk_refs.iter().zip(chunk_vecs) {
            batch.vectors.push((VectorKind::Chunk, c.id.clone(), v));
        }
        batch.vectors.extend(sentence_vecs.into_iter().map(|(id, v)| (VectorKind::Sentence, id, v)));
        // One call for entities and facts: short strings of similar lengths share forward
        // passes, and a batch has one partly filled pass instead of two.
        let inputs: Vec<String> = entities.iter().chain(&facts).map(|(_, t)| t.clone()).collect();
        let vecs = if inputs.is_empty() { Vec::new() } else { self.embedder.embed(&inputs, EmbedKind::Passage)? };
        let mut vecs = vecs.into_iter();
        let entity_vecs = entities.into_iter().map(|(id, _)| id).zip(vecs.by_ref()).collect();
        let fact_vecs = facts.into_iter().map(|(id, _)| id).zip(vecs).collect();
        Ok(Embedded { batch, items, progress, entity_vecs, fact_vecs, merge })
    }

    /// Step 3: merge the batch's new entities into near-duplicates already stored or in the
    /// batch (only when the batch is the pipeline's own extraction; without a `store`
    /// nothing is merged) and fill in the batch to write.
    pub(crate) fn complete(
        &self,
        store: Option<&dyn StoreRead>,
        e: Embedded,
        report: &mut IndexReport,
    ) -> Result<WriteBatch> {
        let (mut batch, items, progress) = self.vectors_in(store, e, report)?;
        for (p, done) in items.iter().zip(&progress) {
            batch.doc_progress.push((p.doc.id.clone(), *done));
            if done.is_none() {
                report.documents_indexed += 1;
                let lang = rhizome_core::lang::detect_language(&p.doc.text);
                *report.languages.entry(lang.code().to_string()).or_default() += 1;
            }
        }
        report.entities_mentioned += batch.mentions.len() as u64;
        report.relations += batch.relations.len() as u64;
        report.facts += batch.facts.len() as u64;
        report.claims += batch.covariates.len() as u64;
        report.vectors += batch.vectors.len() as u64;
        for p in items {
            report.chunks += p.chunks.len() as u64;
            batch.chunks.extend(p.chunks);
            batch.documents.push(p.doc);
        }
        Ok(batch)
    }

    /// The merging part of [`complete`](Self::complete): the batch with its entity and fact
    /// vectors (after merging near-duplicates), its items and their progress.
    pub(crate) fn vectors_in(
        &self,
        store: Option<&dyn StoreRead>,
        e: Embedded,
        report: &mut IndexReport,
    ) -> Result<(WriteBatch, Vec<Prepared>, Vec<Option<u32>>)> {
        let Embedded { mut batch, items, progress, mut entity_vecs, fact_vecs, merge } = e;
        let threshold = self.config.extract.resolve_similarity;
        if let (true, Some(store)) = (merge && threshold > 0.0, store) {
            let t = Instant::now();
            let aliases = crate::resolve::merge_similar(store, &mut batch, &mut entity_vecs, threshold)?;
            report.entities_merged += aliases.len() as u64;
            report.time("embed", t);
        }
        batch.vectors.extend(entity_vecs.into_iter().map(|(id, v)| (VectorKind::Entity, id, v)));
        batch.vectors.extend(fact_vecs.into_iter().map(|(id, v)| (VectorKind::Fact, id, v)));
        Ok((batch, items, progress))
    }

    /// The `(id, text)` pairs whose id has no vector of `kind` in the store or in
    /// `unwritten`.
    fn missing(
        &self,
        store: &dyn StoreWrite,
        kind: VectorKind,
        texts: Vec<(String, String)>,
        unwritten: &Unwritten,
    ) -> Result<Vec<(String, String)>> {
        let texts: Vec<(String, String)> = texts.into_iter().filter(|(id, _)| !unwritten.has(kind, id)).collect();
        let ids: Vec<String> = texts.iter().map(|(id, _)| id.clone()).collect();
        let missing: HashSet<String> = store.missing_vectors(kind, &ids)?.into_iter().collect();
        Ok(texts.into_iter().filter(|(id, _)| missing.contains(id)).collect())
    }
}
