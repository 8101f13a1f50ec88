//! `rhizome bench scale`: indexes of growing size and what each costs.
//!
//! The index (`--index`: a directory, or an empty `postgres://` database) is filled with
//! copies of a HippoRAG OpenIE corpus, every entity renamed per copy ([`corpus`]), written
//! straight through the store's batch API (`StoreWrite::write_batch`, as the pipeline
//! writes): no extractor runs (the triples are the corpus's own), and vectors are derived
//! from the base corpus's, embedded once ([`derived`]), so the figures are the store's and
//! the graph's, not the embedder's. Synonymy edges are cloned per copy ([`synonyms`]).
//! At each size of `--sizes` (chunks) the writing stops and [`measure`] prints a row:
//! indexing rate, store size, graph load time, resident memory of a `rhizome serve` on
//! the index, and per method p50/p95 at each `--top-k`.

mod corpus;
mod derived;
mod measure;
mod synonyms;

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use rhizome_core::ids::normalize_name;
use rhizome_core::{EmbedKind, Embedder, StoreWrite, VectorKind, WriteBatch};
use rhizome_ingest::pipeline::embed_text;
use rhizome_ingest::resolve::resolve;
use rhizome_store::{LockWait, StoreUrl};
use serde_json::json;

use crate::common::{bail, parse_methods, print_json, Bench, Result};
use corpus::Base;
use derived::DerivedEmbedder;
pub use measure::Row;
use synonyms::Synonyms;

/// What `bench scale` is asked.
pub struct ScaleArgs<'a> {
    pub openie: &'a Path,
    pub questions: &'a Path,
    pub sizes: &'a [usize],
    pub methods: &'a [String],
    pub top_k: &'a [usize],
    pub limit: usize,
    /// Chunks per written batch.
    pub batch: usize,
    /// Copy only the corpus's first passages (0: all).
    pub base_passages: usize,
    /// Measure the memory of a `rhizome serve` child on the index.
    pub serve: bool,
    /// Consecutive copies sharing one set of entities (0 or 1: each copy its own).
    pub entity_share: u32,
    /// Go on from the chunks an earlier run (same corpus, same sharing) left in the index.
    pub resume: bool,
}

/// What has been written so far.
struct Written {
    chunks: usize,
    /// Entity and fact ids of the current copy that have their vector.
    vectors: HashSet<String>,
    copy: u32,
    write_s: f64,
}

pub fn scale(bench: Bench, a: ScaleArgs) -> Result<()> {
    let methods = parse_methods(a.methods)?;
    let mut sizes = a.sizes.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.first().is_none_or(|&s| s == 0) {
        bail!("--sizes: give index sizes in chunks, e.g. --sizes 10000,100000");
    }
    if a.top_k.is_empty() || a.top_k.contains(&0) {
        bail!("--top-k: give one or more numbers of passages from 1, e.g. --top-k 5,8");
    }
    let url = StoreUrl::parse(&bench.store)?;
    let t = Instant::now();
    let mut base = Base::load(a.openie, a.base_passages)?;
    base.share_entities(a.entity_share);
    if base.len() == 0 {
        bail!("{}: no passages to copy", a.openie.display());
    }
    let held = if url.exists() { held_chunks(&bench, &base)? } else { 0 };
    if held > 0 && !a.resume {
        bail!(
            "{} already holds documents: give an empty index (a new directory or an empty database) \
             to `rhizome bench scale`, or --resume to go on from an earlier run's",
            url.display()
        );
    }
    sizes.retain(|&s| s >= held);
    if sizes.is_empty() {
        bail!("--sizes: the index holds {held} chunks already: give a size from there");
    }
    let model = rhizome_engine::load_embedder(&bench.config, None)?;
    let derived = Arc::new(DerivedEmbedder::new(model));
    let config = bench.config.calibrated(derived.cosine_scale());
    let syn = Synonyms::compute(&base, derived.as_ref(), config.synonymy.top_k, config.synonymy.threshold)?;
    // Every text of copy 0 embedded now (the embedder remembers it): each step's rate is
    // then the store's.
    let mut scratch = Written { chunks: 0, vectors: HashSet::new(), copy: 0, write_s: 0.0 };
    for from in (0..base.len()).step_by(a.batch.max(1)) {
        let n = a.batch.max(1).min(base.len() - from);
        embed_batch(&base, derived.as_ref(), &mut scratch, n)?;
    }
    let prepare_s = t.elapsed().as_secs_f64();

    // Questions about one copy: copy 1 when every size holds it whole, else copy 0.
    let target: u32 = if sizes[0] >= 2 * base.len() && base.group(1) == 1 { 1 } else { 0 };
    let mut questions = Vec::new();
    for q in rhizome_eval::load_questions(a.questions)?.into_iter().take(a.limit.max(1)) {
        let gold: Vec<String> = q
            .supporting
            .iter()
            .filter_map(|s| base.passage_of(&s.title, s.text.as_deref()))
            .map(|i| base.chunk_id(target, i))
            .collect();
        questions.push(measure::Question { text: base.rewrite(&q.question, target), gold });
    }

    let header = json!({
        "corpus": a.openie.display().to_string(), "base_passages": base.len(),
        "base_entities": syn.entities(), "synonym_edges_per_copy": syn.per_copy(),
        "model": derived.model_id(), "questions": questions.len(), "questions_copy": target,
        "prepare_s": prepare_s, "store": url.display(),
    });
    if !bench.json {
        println!(
            "bench scale on {}: copies of {} ({} passages, {} entities, {} synonym edges per copy), \
             entities renamed per copy; batches written straight to the store (no extractor: the corpus's \
             own triples); vectors derived from the base corpus's, embedded once by {} ({prepare_s:.1} s \
             with synonymy), so the figures are the store's and the graph's, not the embedder's. \
             {} questions, rewritten for copy {target}.",
            url.display(),
            a.openie.display(),
            base.len(),
            syn.entities(),
            syn.per_copy(),
            derived.model_id(),
            questions.len()
        );
    }
    let mut rows: Vec<Row> = Vec::new();
    // Resumed: the current copy's entity and fact vectors are written again (the same).
    let copy = (held / base.len()) as u32;
    let mut w = Written { chunks: held, vectors: HashSet::new(), copy, write_s: 0.0 };
    for &size in &sizes {
        let t = Instant::now();
        let before = (w.chunks, w.write_s);
        let index_s = if w.chunks >= size {
            0.0
        } else {
            let wait = if bench.no_wait { LockWait::No } else { LockWait::Up(None) };
            let mut store = url.open_writer(true, "rhizome bench scale", wait, &mut |_| {})?;
            store.set_embedding_model(derived.model_id(), derived.dim())?;
            store.bulk_load(true)?;
            while w.chunks < size {
                let n = a.batch.max(1).min(size - w.chunks);
                write_batch(&mut *store, &base, derived.as_ref(), &mut w, n)?;
            }
            let (full, partial) = ((w.chunks / base.len()) as u32, w.chunks % base.len());
            // Copies that share entities share their synonymy too.
            let (full, partial) = match a.entity_share {
                s if s > 1 && full % s == 0 => (full / s, partial),
                s if s > 1 => (full / s + 1, 0),
                _ => (full, partial),
            };
            store.set_synonyms(&syn.edges(full, partial))?;
            let t = Instant::now();
            store.bulk_load(false)?;
            t.elapsed().as_secs_f64()
        };
        let step_s = t.elapsed().as_secs_f64();
        let mut row = measure::measure(&bench, &url, &derived, &methods, a.top_k, &questions, a.serve)?;
        row.chunks_added = w.chunks - before.0;
        row.step_s = step_s;
        row.write_s = w.write_s - before.1;
        row.index_s = index_s;
        if !bench.json {
            row.print(a.top_k);
        }
        rows.push(row);
    }
    if bench.json {
        let rows: Vec<serde_json::Value> = rows.iter().map(Row::json).collect();
        return print_json(&json!({"run": header, "sizes": rows}));
    }
    measure::print_summary(&rows, a.top_k);
    Ok(())
}

/// Write the next `n` passages (continuing the current copy, then the next).
fn write_batch(
    store: &mut dyn StoreWrite,
    base: &Base,
    embedder: &dyn Embedder,
    w: &mut Written,
    n: usize,
) -> Result<()> {
    let batch = embed_batch(base, embedder, w, n)?;
    let t = Instant::now();
    store.write_batch(&batch)?;
    w.write_s += t.elapsed().as_secs_f64();
    Ok(())
}

/// The batch of the next `n` passages with their vectors.
fn embed_batch(base: &Base, embedder: &dyn Embedder, w: &mut Written, n: usize) -> Result<WriteBatch> {
    let mut batch = WriteBatch::default();
    let mut chunk_texts = Vec::new();
    let mut new_vectors: Vec<(VectorKind, String, String)> = Vec::new();
    for _ in 0..n {
        let (k, i) = ((w.chunks / base.len()) as u32, w.chunks % base.len());
        if k != w.copy {
            // Copies sharing entities share their vectors: each is written once.
            if base.group(k) != base.group(w.copy) {
                w.vectors.clear();
            }
            w.copy = k;
        }
        let (doc, chunk, ex) = base.copy(k, i);
        let (m0, f0) = (batch.mentions.len(), batch.facts.len());
        resolve(&ex, &doc.id, Some(&chunk.id), &mut batch);
        for m in &batch.mentions[m0..] {
            if w.vectors.insert(m.entity_id.clone()) {
                new_vectors.push((VectorKind::Entity, m.entity_id.clone(), normalize_name(&m.name)));
            }
        }
        for f in &batch.facts[f0..] {
            let x = &f.fact;
            if w.vectors.insert(x.id.clone()) {
                let text = format!(
                    "{} {} {}",
                    normalize_name(&x.subject),
                    normalize_name(&x.predicate),
                    normalize_name(&x.object)
                );
                new_vectors.push((VectorKind::Fact, x.id.clone(), text));
            }
        }
        chunk_texts.push((chunk.id.clone(), embed_text(&doc.title, &chunk.text)));
        batch.doc_progress.push((doc.id.clone(), None));
        batch.documents.push(doc);
        batch.chunks.push(chunk);
        w.chunks += 1;
    }
    let texts: Vec<String> = chunk_texts.iter().map(|(_, t)| t.clone()).collect();
    for ((id, _), v) in chunk_texts.into_iter().zip(embedder.embed(&texts, EmbedKind::Passage)?) {
        batch.vectors.push((VectorKind::Chunk, id, v));
    }
    let texts: Vec<String> = new_vectors.iter().map(|(_, _, t)| t.clone()).collect();
    for ((kind, id, _), v) in new_vectors.into_iter().zip(embedder.embed(&texts, EmbedKind::Passage)?) {
        batch.vectors.push((kind, id, v));
    }
    Ok(batch)
}

/// The chunks an earlier run left in the index: each document one chunk, the last one the
/// chunk this corpus (with the same sharing of entities) has at that place; else an error.
fn held_chunks(bench: &Bench, base: &Base) -> Result<usize> {
    let engine = bench.reading_engine()?;
    let stats = engine.stats()?;
    let (docs, chunks) = (stats.nodes.get("Document").copied(), stats.nodes.get("Chunk").copied());
    let n = chunks.unwrap_or(0) as usize;
    if n == 0 {
        return Ok(0);
    }
    let last = n - 1;
    let id = base.chunk_id((last / base.len()) as u32, last % base.len());
    let found = engine.reader()?.chunks(std::slice::from_ref(&id))?;
    if docs != chunks || found.is_empty() {
        bail!(
            "{}: its {n} chunks are not the first {n} of this corpus with this --entity-share: \
             give an empty index",
            bench.store
        );
    }
    Ok(n)
}
