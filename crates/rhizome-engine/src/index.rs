//! Writing an index: index files or documents, imports, delete, communities. Each call
//! holds the writer lock from before it writes until it is done.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use rhizome_community::CommunityOutcome;
use rhizome_core::llm::PromptLlm;
use rhizome_core::{Chunker, Document, Error, Extractor, Result, Stats, StoreRead, StoreWrite};
use rhizome_ingest::chunk::TokenChunker;
use rhizome_ingest::extract::NlpExtractor;
use rhizome_ingest::import;
use rhizome_ingest::load::{default_loaders, document_formats, extension_list, load_path, CorpusLoader, FORMATS};
use rhizome_ingest::pipeline::{IndexReport, Pipeline, Progress};
use rhizome_llm::{LlmExtractor, StageUsage};
use serde::Serialize;

use crate::llm::Llm;
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

/// What a deletion removed.
#[derive(Debug, Clone, Serialize)]
pub struct DeleteOutcome {
    pub deleted: rhizome_core::DeleteReport,
    pub synonym_edges: Option<u64>,
    pub communities: Option<CommunityOutcome>,
}

/// Documents and what was skipped loading them.
fn load(paths: &[PathBuf]) -> (Vec<Document>, Vec<Skip>) {
    let loaders = default_loaders();
    let mut docs = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        let out = load_path(p, &loaders);
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
                let (docs, skipped) = load(&paths);
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
        let (docs, skipped) = load(paths);
        let existing = if self.exists() { Some(self.reader()?) } else { None };
        // As the run itself sorts them.
        let sorted = rhizome_ingest::incoming::sort(existing.as_deref().map(|s| s as &dyn StoreRead), docs)?;
        let (new_docs, replaced) = (sorted.new, sorted.replaced.len());
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

    /// `rhizome communities`: bring communities and reports up to date (`force`:
    /// recompute the communities and rewrite every report), with the configured LLM.
    pub fn communities(
        &self,
        force: bool,
        cancel: &AtomicBool,
    ) -> Result<(CommunityOutcome, Option<BTreeMap<String, StageUsage>>)> {
        let mut store = self.writer(false)?;
        let embedder = self.embedder(store.as_ref())?;
        store.set_embedding_model(embedder.model_id(), embedder.dim())?;
        let llm = self.llm()?;
        let outcome = self.refresh_communities(store.as_mut(), embedder.as_ref(), llm.as_deref(), force, cancel)?;
        let usage = match &llm {
            Some(l) => Some(record_usage(store.as_mut(), l)?),
            None => None,
        };
        Ok((outcome, usage))
    }

    fn refresh_communities(
        &self,
        store: &mut dyn StoreWrite,
        embedder: &dyn rhizome_core::Embedder,
        llm: Option<&Llm>,
        force: bool,
        cancel: &AtomicBool,
    ) -> Result<CommunityOutcome> {
        let prompt_llm = llm.map(|l| l.prompt_llm(&self.config));
        rhizome_community::refresh(
            store,
            embedder,
            prompt_llm.as_ref().map(|p| p as &dyn PromptLlm),
            &self.config.communities,
            force,
            cancel,
        )
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

/// Add this run's LLM usage to the totals kept in the index; returns this run's.
fn record_usage(store: &mut dyn StoreWrite, llm: &Llm) -> Result<BTreeMap<String, StageUsage>> {
    let run = llm.stack.usage();
    let mut total: BTreeMap<String, StageUsage> =
        store.meta("llm_usage")?.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
    for (stage, u) in &run {
        let t = total.entry(stage.clone()).or_default();
        t.calls += u.calls;
        t.cached_calls += u.cached_calls;
        t.failed_calls += u.failed_calls;
        t.prompt_tokens += u.prompt_tokens;
        t.completion_tokens += u.completion_tokens;
    }
    store.set_meta("llm_usage", &serde_json::to_string(&total).unwrap_or_default())?;
    Ok(run)
}

#[cfg(feature = "graphrag-parquet")]
pub use graphrag::GraphragOutcome;

#[cfg(feature = "graphrag-parquet")]
mod graphrag {
    use std::path::Path;
    use std::sync::atomic::AtomicBool;

    use rhizome_core::{Result, Stats};
    use rhizome_ingest::chunk::TokenChunker;
    use rhizome_ingest::extract::NlpExtractor;
    use rhizome_ingest::import_graphrag as gr;
    use rhizome_ingest::pipeline::{IndexReport, Pipeline, Progress};
    use serde::Serialize;

    use crate::Engine;

    /// What a GraphRAG import read and wrote.
    #[derive(Debug, Clone, Serialize)]
    pub struct GraphragOutcome {
        pub read: gr::ReadCounts,
        pub written: gr::Finished,
        pub report: IndexReport,
        pub warnings: Vec<String>,
        pub stats: Stats,
    }

    impl Engine {
        /// `import graphrag-parquet`: the pipeline on GraphRAG's documents, without entity
        /// summaries (GraphRAG's descriptions are summaries already) and without community
        /// detection (GraphRAG's communities are imported); then its covariates,
        /// communities and reports.
        pub fn import_graphrag(
            &self,
            dir: &Path,
            progress: &dyn Progress,
            cancel: &AtomicBool,
        ) -> Result<GraphragOutcome> {
            let mut gi = gr::read(dir)?;
            let mut store = self.writer(true)?;
            let embedder = self.embedder(store.as_ref())?;
            store.set_embedding_model(embedder.model_id(), embedder.dim())?;
            let config = self.config.calibrated(embedder.cosine_scale());
            let chunker = TokenChunker { size: config.chunk.size, overlap: config.chunk.overlap };
            rhizome_ingest::extract::en_pos::check_installed()?;
            let extractor = NlpExtractor::new(config.extract.max_entities_per_chunk);
            let pipeline = Pipeline {
                chunker: &chunker,
                extractor: &extractor,
                embedder: embedder.as_ref(),
                config: &config,
                progress,
                cancel,
                summarizer: None,
                summarize_min: 0,
            };
            let t = std::time::Instant::now();
            let mut report = pipeline.index_prepared(store.as_mut(), std::mem::take(&mut gi.imported.items))?;
            let t_finish = std::time::Instant::now();
            let written = gr::finish(store.as_mut(), embedder.as_ref(), &gi)?;
            report.timings_ms.insert("covariates_communities_reports".into(), t_finish.elapsed().as_secs_f64() * 1e3);
            report.timings_ms.insert("total".into(), t.elapsed().as_secs_f64() * 1e3);
            store.set_meta("extractor", "graphrag-parquet")?;
            let mut warnings = gi.imported.dropped.clone();
            warnings.extend(written.warnings.iter().cloned());
            Ok(GraphragOutcome { read: gi.counts.clone(), written, report, warnings, stats: store.stats()? })
        }
    }
}
