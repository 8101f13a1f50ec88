//! The pipeline's setup and what its parts share: [`Pipeline`] (its steps and settings),
//! [`Progress`], the [`Prepared`] documents a batch carries and the [`IndexReport`] every
//! step adds to. The driver (`pipeline.rs`) and the batch steps (`stage.rs`) both stand on
//! this file.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rhizome_core::{Chunk, Chunker, Config, Document, Embedder, Extraction, ExtractionFailure, Extractor, Summarizer};
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
    /// Where the stage is, in words a user reads (`report.pdf: page 120 of 500`), for
    /// documents with pages.
    fn at(&self, _place: &str) {}
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
    /// Documents whose content is indexed already under another name: not indexed again,
    /// their name kept as another source of that document.
    pub documents_duplicate: u64,
    pub chunks: u64,
    pub entities_mentioned: u64,
    pub relations: u64,
    pub facts: u64,
    /// Claims about entities written (`extract.claims`).
    pub claims: u64,
    /// Claim replies of the LLM that held no claims list: their chunks kept their entities.
    pub claim_replies_unreadable: u64,
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
    /// Milliseconds per stage. Imports write each batch while the next one is embedded
    /// (where the OS lets the writer run at idle priority, see `overlap`): their `write` is
    /// then the writer's CPU time, mostly hidden in `embed`'s wall time, and `write_wait` the
    /// time the pipeline still waited for it (all of the write where it runs first).
    pub timings_ms: BTreeMap<String, f64>,
}

impl IndexReport {
    pub(crate) fn time(&mut self, stage: &str, since: Instant) {
        self.add_time(stage, since.elapsed());
    }

    pub(crate) fn add_time(&mut self, stage: &str, took: std::time::Duration) {
        *self.timings_ms.entry(stage.to_string()).or_default() += took.as_secs_f64() * 1e3;
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
    /// Whether facts get vectors (`embed.fact_vectors`). A fact vector is read only to link
    /// the question to facts that an LLM then recognises (hippo) or that seed a path
    /// (multipath); the LLM-free extractor's triples never seed hippo without an LLM, and
    /// on MuSiQue hippo and multipath score the same with or without them, while they are
    /// a third of the strings embedded. So `auto` embeds the facts of an LLM extractor and
    /// of imports (another tool's LLM triples), not those of `nlp`.
    pub(crate) fn embeds_facts(&self, extracted_here: bool) -> bool {
        match self.config.embed.fact_vectors.as_str() {
            "always" => true,
            "never" => false,
            _ => !(extracted_here && self.extractor.name() == "nlp"),
        }
    }
}

/// SIMILAR_TO links chunks of one document at most this many positions apart: every
/// pair in a document of up to 65 chunks, and a bounded amount of work per chunk in a
/// large file.
pub const SIMILAR_WINDOW: usize = 64;
