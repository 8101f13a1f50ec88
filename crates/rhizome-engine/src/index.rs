//! Writing an index: index files or documents, imports, delete, communities. Each call
//! holds the writer lock from before it writes until it is done.
//!
//! Layout: this file indexes (and plans a dry run); `delete` deletes documents,
//! `communities` brings communities and reports up to date, `graphrag` imports a GraphRAG
//! output folder.

mod communities;
mod delete;
#[cfg(feature = "graphrag-parquet")]
mod graphrag;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use rhizome_community::CommunityOutcome;
use rhizome_core::{Chunker, Document, Error, Extractor, Result, Stats, StoreRead};
use rhizome_ingest::chunk::TokenChunker;
use rhizome_ingest::extract::NlpExtractor;
use rhizome_ingest::import;
use rhizome_ingest::load::{
    default_loaders, document_formats, extension_list, load_path_observed, CorpusLoader, FORMATS,
};
use rhizome_ingest::pipeline::{IndexReport, Pipeline, Progress};
use rhizome_llm::{LlmExtractor, StageUsage};
use serde::Serialize;

pub use self::delete::DeleteOutcome;
#[cfg(feature = "graphrag-parquet")]
pub use self::graphrag::GraphragOutcome;
use crate::llm::{record_usage, Llm};
use crate::Engine;

/// A file or entry that was not indexed, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skip {
    pub path: String,
    pub reason: String,
}

/// What to index.
#[derive(Debug, Clone)]
pub enum IndexInput {
    /// Files and folders (recursively), read by the loaders.
    Paths(Vec<PathBuf>),
    /// Documents already loaded (e.g. uploaded texts).
    Documents(Vec<Document>),
    /// HippoRAG OpenIE results JSON.
    HipporagOpenie(PathBuf),
    /// Edge list CSV.
    EdgesCsv(PathBuf),
    /// An uploaded edge list (source `upload:NAME`).
    EdgesUpload(crate::Upload),
    /// A JSON/JSONL corpus file.
    Corpus(PathBuf),
}

/// What an indexing call did.
#[derive(Debug, Clone, Serialize)]
pub struct IndexOutcome {
    pub report: IndexReport,
    pub skipped: Vec<Skip>,
    pub stats: Stats,
    /// This call's LLM usage per stage (None without an LLM).
    pub llm_usage: Option<BTreeMap<String, StageUsage>>,
    /// Chunks whose extraction failed and waits for the next run.
    pub failed_chunks_pending: Vec<rhizome_core::ExtractionFailure>,
    /// Documents described (summary, type, hashtags); None with `describe.enabled` off.
    pub described: Option<rhizome_ingest::describe::DescribeReport>,
    pub communities: Option<CommunityOutcome>,
    /// Warnings for the user (records an importer dropped).
    pub warnings: Vec<String>,
}

/// What `index --dry-run` would do.
#[derive(Debug, Clone, Serialize)]
pub struct DryRun {
    /// Documents whose source is not indexed yet.
    pub documents_new: usize,
    /// Documents whose source is indexed with other content (the old version would go).
    pub documents_replaced: usize,
    /// Documents indexed already, as they are.
    pub documents_unchanged: usize,
    /// Documents whose content is indexed already under another name (their name would
    /// be kept as another source of it).
    pub documents_duplicate: usize,
    pub chunks: usize,
    pub extractor: String,
    pub llm: rhizome_llm::ExtractionPlan,
    pub skipped: Vec<Skip>,
}

/// Documents and what was skipped loading them.
/// The documents of `paths`, telling `at` where a long read is (OCR of a scan, by page).
fn load(paths: &[PathBuf], at: &dyn Fn(&str)) -> (Vec<Document>, Vec<Skip>) {
    let loaders = default_loaders();
    let mut docs = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        let out = load_path_observed(p, &loaders, at);
        docs.extend(out.documents);
        skipped.extend(out.skipped.into_iter().map(|s| Skip { path: s.path, reason: s.reason }));
    }
    (docs, skipped)
}

impl Engine {
    fn llm_extractor(&self, llm: &Llm) -> LlmExtractor {
        let c = &self.config.llm;
        LlmExtractor {
            provider: llm.provider(),
            prompts: llm.prompts.clone(),
            schema: c.schema.clone(),
            gleanings: c.gleanings,
            temperature: c.temperature,
            max_tokens: c.max_tokens,
            runtime: llm.runtime.handle().clone(),
            claims: self.config.extract.claims.then(|| self.config.extract.claim_description.clone()),
            parse_warnings: Default::default(),
            claims_unreadable: Default::default(),
        }
    }

    /// The configured extractor. `will_extract` is false for imports, which bring their own
    /// extractions: the English POS tagger is then neither checked nor loaded (0.17 s).
    fn extractor(&self, will_extract: bool) -> Result<Box<dyn Extractor>> {
        if will_extract && self.config.extract.claims && self.config.extract.extractor != "llm" {
            return Err(Error::Config(
                "extract.claims = true asks the LLM extractor for claims: index with --extractor llm \
                 (and an LLM), or set extract.claims = false"
                    .into(),
            ));
        }
        match self.config.extract.extractor.as_str() {
            "nlp" => {
                if will_extract {
                    rhizome_ingest::extract::en_pos::check_installed()?;
                }
                Ok(Box::new(NlpExtractor::new(self.config.extract.max_entities_per_chunk)))
            }
            "llm" => {
                let Some(llm) = self.llm()? else {
                    return Err(Error::Config(
                        "--extractor llm needs an LLM: set --llm-provider openai|local and --llm-model \
                         (or RHIZOME_LLM_PROVIDER / RHIZOME_LLM_MODEL)"
                            .into(),
                    ));
                };
                Ok(Box::new(self.llm_extractor(&llm)))
            }
            other => {
                Err(Error::Config(format!("extract.extractor = {other:?}: use --extractor nlp or --extractor llm")))
            }
        }
    }

    /// Index `input`; then, when `communities.enabled`, bring communities and reports up
    /// to date.
    pub fn index(&self, input: IndexInput, progress: &dyn Progress, cancel: &AtomicBool) -> Result<IndexOutcome> {
        let (docs, prepared, skipped, warnings) = match input {
            IndexInput::Paths(paths) => {
                let (docs, skipped) = load(&paths, &|place| progress.at(place));
                if docs.is_empty() {
                    // Nothing is written, and no index is created.
                    let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                    let why: Vec<String> =
                        skipped.iter().take(5).map(|s| format!("{}: {}", s.path, s.reason)).collect();
                    let more = skipped.len().saturating_sub(5);
                    return Err(Error::bad_input(
                        named.join(", "),
                        format!(
                            "nothing to index: no readable file of a supported type ({}) there{}{}; \
                             give files or folders that hold some",
                            extension_list(document_formats()),
                            if why.is_empty() { String::new() } else { format!(" (skipped: {})", why.join("; ")) },
                            if more > 0 { format!(" and {more} more") } else { String::new() },
                        ),
                    ));
                }
                (Some(docs), None, skipped, vec![])
            }
            IndexInput::Documents(d) => (Some(d), None, vec![], vec![]),
            IndexInput::Corpus(file) => {
                if !file.is_file() {
                    let corpora = FORMATS.iter().filter(|f| f.kind.is_corpus());
                    return Err(Error::bad_input(
                        file.display().to_string(),
                        format!("no such file; give a corpus file ({})", extension_list(corpora)),
                    ));
                }
                (Some(rhizome_core::Loader::load(&CorpusLoader, &file)?), None, vec![], vec![])
            }
            IndexInput::HipporagOpenie(file) => {
                let imported = import::hipporag_openie(&file)?;
                (None, Some(imported.items), vec![], imported.dropped)
            }
            IndexInput::EdgesCsv(file) => {
                let imported = import::edges_csv(&file)?;
                (None, Some(imported.items), vec![], imported.dropped)
            }
            IndexInput::EdgesUpload(u) => {
                let imported = crate::upload::edges_upload(&u)?;
                (None, Some(imported.items), vec![], imported.dropped)
            }
        };
        for s in &skipped {
            progress.warn(&format!("skipped {}: {}", s.path, s.reason));
        }
        let extractor = self.extractor(docs.is_some())?;
        let extractor_name = extractor.name().to_string();
        let mut store = self.writer(true)?;
        let embedder = self.embedder(store.as_ref())?;
        store.set_embedding_model(embedder.model_id(), embedder.dim())?;
        let config = self.config.calibrated(embedder.cosine_scale());
        let chunker = TokenChunker { size: config.chunk.size, overlap: config.chunk.overlap };
        // Entity summaries and reports use the configured LLM even when extraction does not.
        let llm = self.llm()?;
        let summarizer = llm.as_ref().filter(|_| self.config.llm.summarize_min_descriptions > 0).map(|l| {
            rhizome_llm::LlmSummarizer {
                provider: l.provider(),
                prompts: l.prompts.clone(),
                temperature: self.config.llm.temperature,
                max_tokens: self.config.llm.max_tokens,
                runtime: l.runtime.handle().clone(),
            }
        });
        let pipeline = Pipeline {
            chunker: &chunker,
            extractor: extractor.as_ref(),
            embedder: embedder.as_ref(),
            config: &config,
            progress,
            cancel,
            summarizer: summarizer.as_ref().map(|s| s as &dyn rhizome_core::Summarizer),
            summarize_min: self.config.llm.summarize_min_descriptions,
        };
        let t = std::time::Instant::now();
        let mut report = match (docs, prepared) {
            (Some(d), _) => pipeline.index_documents(store.as_mut(), d)?,
            (None, Some(p)) => pipeline.index_prepared(store.as_mut(), p)?,
            (None, None) => IndexReport::default(),
        };
        store.set_meta("extractor", &extractor_name)?;
        let t_describe = std::time::Instant::now();
        let described = if self.config.section::<rhizome_ingest::describe::DescribeConfig>().enabled {
            let d = self.describe_in(store.as_mut(), embedder.as_ref(), llm.as_deref(), false, progress, cancel)?;
            report.timings_ms.insert("describe".into(), t_describe.elapsed().as_secs_f64() * 1e3);
            Some(d)
        } else {
            None
        };
        let communities = if self.config.communities.enabled {
            let t = std::time::Instant::now();
            let o = self.refresh_communities(store.as_mut(), embedder.as_ref(), llm.as_deref(), false, cancel)?;
            report.timings_ms.insert("communities".into(), t.elapsed().as_secs_f64() * 1e3);
            Some(o)
        } else {
            None
        };
        report.timings_ms.insert("total".into(), t.elapsed().as_secs_f64() * 1e3);
        let llm_usage = match &llm {
            Some(l) => Some(record_usage(store.as_mut(), l)?),
            None => None,
        };
        Ok(IndexOutcome {
            report,
            skipped,
            stats: store.stats()?,
            llm_usage,
            failed_chunks_pending: store.extraction_failures()?,
            described,
            communities,
            warnings,
        })
    }

    /// What indexing `paths` would do: new documents, chunks, and the LLM calls and
    /// tokens it would spend (cached calls excluded). Writes nothing.
    pub fn dry_run(&self, paths: &[PathBuf]) -> Result<DryRun> {
        let (docs, skipped) = load(paths, &|_| {});
        let existing = if self.exists() { Some(self.reader()?) } else { None };
        // As the run itself sorts them.
        let sorted = rhizome_ingest::incoming::sort(existing.as_deref().map(|s| s as &dyn StoreRead), docs)?;
        let (new_docs, replaced) = (sorted.new, sorted.replaced.len() + sorted.renames.len());
        let chunker = TokenChunker { size: self.config.chunk.size, overlap: self.config.chunk.overlap };
        let chunks: Vec<rhizome_core::Chunk> = new_docs.iter().flat_map(|d| chunker.chunk(d)).collect();
        let refs: Vec<&rhizome_core::Chunk> = chunks.iter().collect();
        let plan = match self.config.extract.extractor.as_str() {
            "llm" => {
                let llm = self.llm()?.ok_or_else(|| {
                    Error::Config("--extractor llm needs an LLM: set --llm-provider and --llm-model".into())
                })?;
                self.llm_extractor(&llm).plan(&refs, Some(llm.cache.as_ref()))?
            }
            _ => rhizome_llm::ExtractionPlan { chunks: chunks.len() as u64, ..Default::default() },
        };
        Ok(DryRun {
            documents_new: new_docs.len().saturating_sub(replaced),
            documents_replaced: replaced,
            documents_unchanged: sorted.unchanged as usize,
            documents_duplicate: sorted.aliases.len(),
            chunks: chunks.len(),
            extractor: self.config.extract.extractor.clone(),
            llm: plan,
            skipped,
        })
    }
}
