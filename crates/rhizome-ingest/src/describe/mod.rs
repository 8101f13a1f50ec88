//! Describing documents after indexing: a summary, a type from the configured list and a
//! handful of hashtags for each document, kept in its [`DocumentMeta`] beside what its
//! file said.
//!
//! With an LLM (and `describe.llm`): one call per document ([`PROMPT`], cached like every
//! call), its reply read leniently; a reply that cannot be read is counted and the
//! document described without the LLM. Without one: the extractive summary
//! ([`summary::extractive_summary`]), the type by format or by embedding
//! ([`doctype::TypeChooser`]) and hashtags ranked over the document's entities
//! ([`keyphrases::hashtags`]).
//!
//! Documents are described once: a run describes those not described yet (new ones, and
//! those of a run killed before it got to them), a batch at a time, each batch written at
//! once.

mod doctype;
mod keyphrases;
mod settings;
mod summary;

use std::sync::atomic::{AtomicBool, Ordering};

use rhizome_core::llm::{PromptCall, PromptLlm};
use rhizome_core::{DocumentMeta, Embedder, Error, Result, StoreWrite, VectorKind, WriteBatch};
use serde::Serialize;

pub use doctype::TypeChooser;
pub use keyphrases::hashtags;
pub use settings::{DescribeConfig, DocType};
pub use summary::extractive_summary;

use crate::setup::Progress;

/// The name of the describing prompt (its text: `describe_document.txt`, beside this file).
pub const PROMPT: &str = "describe_document";

/// The prompts this step owns, `(name, text)`, for the LLM's prompt set.
pub fn prompts() -> Vec<(&'static str, &'static str)> {
    vec![(PROMPT, include_str!("describe_document.txt"))]
}

/// The store meta key set to the time of the last description written: what a document
/// says of itself changes without the graph changing, and caches of it ask this.
pub const DESCRIBED_AT: &str = "documents_described_at";

/// Documents described together: read, described (their LLM calls run at once) and
/// written in one store write.
const BATCH: usize = 32;

/// What describing did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DescribeReport {
    /// Documents described in this run.
    pub described: u64,
    /// Of those, described by the LLM.
    pub by_llm: u64,
    /// LLM replies that could not be read (or calls that failed): those documents were
    /// described without the LLM, and are counted here.
    pub llm_failures: u64,
}

/// What one step of describing needs.
pub struct Describer<'a> {
    pub settings: &'a DescribeConfig,
    pub embedder: &'a dyn Embedder,
    /// The LLM, when one is configured and `describe.llm` is on.
    pub llm: Option<&'a dyn PromptLlm>,
    pub progress: &'a dyn Progress,
    pub cancel: &'a AtomicBool,
}

impl Describer<'_> {
    /// Describes the documents of `store` that are complete and not described yet
    /// (`force`: every complete document again).
    pub fn run(&self, store: &mut dyn StoreWrite, force: bool) -> Result<DescribeReport> {
        let todo: Vec<String> = store
            .documents(None, 0, usize::MAX)?
            .into_iter()
            .filter(|d| !d.partial && (force || d.meta.described_by.is_none()))
            .map(|d| d.id)
            .collect();
        let mut report = DescribeReport::default();
        if todo.is_empty() {
            return Ok(report);
        }
        let chooser = TypeChooser::new(&self.settings.doc_types(), self.embedder)?;
        self.progress.start("describing", todo.len() as u64);
        for ids in todo.chunks(BATCH) {
            if self.cancel.load(Ordering::Relaxed) {
                self.progress.finish();
                return Err(Error::Cancelled);
            }
            let mut batches = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(b) = store.document_batch(id)? {
                    batches.push(b);
                }
            }
            let offline: Vec<DocumentMeta> = batches.iter().map(|b| self.extractive(b, &chooser)).collect();
            let described = match self.llm {
                Some(llm) => self.with_llm(llm, &batches, offline, &chooser, &mut report),
                None => offline,
            };
            let metas: Vec<(String, DocumentMeta)> = batches
                .iter()
                .zip(described)
                .map(|(b, d)| (b.documents[0].id.clone(), b.documents[0].meta.with_description(&d)))
                .collect();
            store.set_document_meta(&metas)?;
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            store.set_meta(DESCRIBED_AT, &now.as_nanos().to_string())?;
            report.described += metas.len() as u64;
            self.progress.advance(ids.len() as u64);
        }
        self.progress.finish();
        Ok(report)
    }

    /// The description of one document's batch without an LLM.
    fn extractive(&self, b: &WriteBatch, chooser: &TypeChooser) -> DocumentMeta {
        let doc = &b.documents[0];
        let lang = rhizome_core::lang::detect_language(&doc.text);
        let s = self.settings;
        let summary = extractive_summary(&doc.text, lang, s.summary_sentences, s.summary_max_chars);
        let centroid = doctype::centroid(
            b.vectors.iter().filter(|(k, _, _)| *k == VectorKind::Chunk).map(|(_, _, v)| v.as_slice()),
        );
        DocumentMeta {
            summary: (!summary.is_empty()).then_some(summary),
            doc_type: chooser.choose(doc.meta.media_type.as_deref(), centroid.as_deref()),
            hashtags: hashtags(&b.mentions, &doc.text, s.hashtags),
            described_by: Some("extractive".into()),
            ..Default::default()
        }
    }

    /// The descriptions of `batches` by the LLM, one call each, run together; a reply
    /// that cannot be read keeps the document's `offline` description and is counted.
    fn with_llm(
        &self,
        llm: &dyn PromptLlm,
        batches: &[WriteBatch],
        offline: Vec<DocumentMeta>,
        chooser: &TypeChooser,
        report: &mut DescribeReport,
    ) -> Vec<DocumentMeta> {
        let types: String = self
            .settings
            .doc_types()
            .iter()
            .map(|t| format!("  - {}: {}\n", t.name, t.description))
            .collect::<String>()
            .trim_end()
            .to_string();
        let n = self.settings.hashtags.to_string();
        let calls: Vec<PromptCall> = batches
            .iter()
            .map(|b| {
                let d = &b.documents[0];
                let text: String = d.text.chars().take(self.settings.llm_max_chars).collect();
                PromptCall::new(
                    PROMPT,
                    "describe",
                    &[("types", &types), ("hashtags", &n), ("title", &d.title), ("source", &d.source), ("text", &text)],
                )
                .json()
            })
            .collect();
        let replies = llm.run(&calls);
        offline
            .into_iter()
            .zip(replies)
            .map(|(fallback, reply)| {
                match reply.ok().and_then(|r| read_reply(&r, chooser, self.settings.hashtags, &fallback)) {
                    Some(d) => {
                        report.by_llm += 1;
                        d
                    }
                    None => {
                        report.llm_failures += 1;
                        fallback
                    }
                }
            })
            .collect()
    }
}

/// The description in an LLM reply: the first JSON object in it with a non-empty
/// `summary`. A `type` not in the configured list keeps `fallback`'s; hashtags are kept
/// when they are strings (at most `max`), else `fallback`'s. None when there is no such
/// object.
pub fn read_reply(reply: &str, chooser: &TypeChooser, max: usize, fallback: &DocumentMeta) -> Option<DocumentMeta> {
    let start = reply.find('{')?;
    let end = reply.rfind('}')?;
    let v: serde_json::Value = serde_json::from_str(reply.get(start..=end)?).ok()?;
    let summary = v.get("summary")?.as_str()?.split_whitespace().collect::<Vec<_>>().join(" ");
    if summary.is_empty() {
        return None;
    }
    let doc_type = v
        .get("type")
        .and_then(|t| t.as_str())
        .map(|t| t.trim().to_lowercase())
        .filter(|t| chooser.knows(t))
        .or_else(|| fallback.doc_type.clone());
    let tags: Vec<String> = match v.get("hashtags").and_then(|h| h.as_array()) {
        Some(list) => list
            .iter()
            .filter_map(|t| t.as_str())
            .map(|t| t.trim().trim_start_matches('#').trim().to_string())
            .filter(|t| !t.is_empty() && t.chars().count() <= 60)
            .take(max)
            .collect(),
        None => fallback.hashtags.clone(),
    };
    Some(DocumentMeta {
        summary: Some(summary.chars().take(2000).collect()),
        doc_type,
        hashtags: tags,
        described_by: Some("llm".into()),
        ..Default::default()
    })
}
