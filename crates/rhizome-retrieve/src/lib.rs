//! Retrieval: one method per module behind the [`Retriever`] trait, each known by its
//! line in [`REGISTRY`] and chosen by [`Method`], and answer building (extractive without
//! an LLM).

pub mod analyze;
mod answer;
mod auto;
mod basic;
pub mod centrality;
mod dense;
mod drift;
#[doc(hidden)]
pub mod fuzzing;
mod global;
pub mod graph;
mod hippo;
mod local;
mod method;
mod modes;
mod multihop;
mod multipath;
mod name_prefix;
mod paths;
pub mod ppr;
mod query_entities;
pub mod scope;
mod tog;

use std::collections::BTreeMap;

use rhizome_core::config::SectionKind;
use rhizome_core::llm::PromptLlm;
use rhizome_core::{Config, Embedder, Result, StoreRead};
use serde::Serialize;

pub use analyze::{analyze, QueryAnalysis};
pub use answer::{extractive_answer, INSUFFICIENT_EVIDENCE};
pub use auto::{route, Auto, Route};
pub use basic::Basic;
pub use drift::{Drift, DriftConfig};
pub use global::{Global, GlobalConfig};
pub use graph::{Graph, GraphCache, NameIndex};
pub use hippo::{Hippo, HippoConfig, PprSolver};
pub use local::{Local, LocalConfig};
pub use method::{Method, MethodEntry};
pub use modes::{Mode, ModesConfig};
pub use multihop::{Multihop, MultihopConfig};
pub use multipath::{Multipath, MultipathConfig};
pub use tog::{Tog, TogConfig, TogPruning};

/// What a retriever needs: the index (read side only), the embedder whose vectors the
/// index holds, the settings, the LLM when one is configured (None: take the LLM-free
/// path and say so in [`Retrieval::notes`]), and the in-memory graph of the index.
pub struct QueryEnv<'a> {
    pub store: &'a dyn StoreRead,
    pub embedder: &'a dyn Embedder,
    pub config: &'a Config,
    pub llm: Option<&'a dyn PromptLlm>,
    pub graph: &'a GraphCache,
}

impl QueryEnv<'_> {
    /// The index's graph (loaded on first use, shared by later queries).
    pub fn graph(&self) -> Result<std::sync::Arc<Graph>> {
        self.graph.get(self.store)
    }

    /// The whole graph, or None on an index above `retrieval.whole_graph_up_to`
    /// entities whose graph is not held: then a method reads neighbourhoods.
    pub fn whole_graph(&self) -> Result<Option<std::sync::Arc<Graph>>> {
        self.graph.whole(self.store, self.config.retrieval.whole_graph_up_to)
    }
}

/// What a [`Context`] is; serialised in lower case (`chunk`, `relationship`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ContextKind {
    /// A passage of a document.
    Chunk,
    /// An entity and its description.
    Entity,
    /// A relationship between two entities, with its description.
    Relationship,
    /// A fact (subject, predicate, object) read from a chunk.
    Fact,
    /// One edge of the graph, rendered `A --rel--> B`.
    Edge,
    /// A path of relations.
    Path,
    /// A community report.
    Report,
    /// A claim attached to an entity.
    Claim,
    /// An analyst's point (global search's map step).
    Point,
}

impl ContextKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ContextKind::Chunk => "chunk",
            ContextKind::Entity => "entity",
            ContextKind::Relationship => "relationship",
            ContextKind::Fact => "fact",
            ContextKind::Edge => "edge",
            ContextKind::Path => "path",
            ContextKind::Report => "report",
            ContextKind::Claim => "claim",
            ContextKind::Point => "point",
        }
    }

    /// True for one statement (an edge, path, fact or relationship): its text is not
    /// split into sentences, whatever full stops its names hold.
    pub fn is_statement(self) -> bool {
        matches!(self, ContextKind::Edge | ContextKind::Path | ContextKind::Fact | ContextKind::Relationship)
    }

    /// True for material derived from the whole graph rather than read from a document
    /// (reports, analysts' points): Recall@k skips it.
    pub fn is_derived(self) -> bool {
        matches!(self, ContextKind::Report | ContextKind::Point)
    }
}

impl std::fmt::Display for ContextKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ContextKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// How an answer was written; serialised in lower case (`llm`, `extractive`, `none`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AnswerKind {
    /// By the LLM: the answer prompt, or the method's own LLM step ([`Retrieval::answer`]).
    Llm,
    /// From the contexts' sentences, without an LLM ([`extractive_answer`]).
    Extractive,
    /// Nothing was retrieved: the answer says the evidence is insufficient.
    None,
    /// Retrieval only was asked for: no answer was written.
    Skipped,
}

impl AnswerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerKind::Llm => "llm",
            AnswerKind::Extractive => "extractive",
            AnswerKind::None => "none",
            AnswerKind::Skipped => "skipped",
        }
    }
}

impl std::fmt::Display for AnswerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One piece of evidence, with provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Context {
    pub kind: ContextKind,
    pub id: String,
    pub text: String,
    pub score: f32,
    /// Where it came from: the document source (file path, `FILE#N`).
    pub source: String,
    /// The document title, when there is one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// The pages (slides, sheets) of a paged document the evidence is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<rhizome_core::PageRef>,
}

impl Context {
    /// A chunk's context, with its document's title, source and the pages it is on.
    pub fn of_chunk(c: rhizome_core::ChunkWithDoc, score: f32) -> Context {
        Context {
            kind: ContextKind::Chunk,
            pages: c.page_ref(),
            id: c.chunk.id,
            text: c.chunk.text,
            score,
            source: c.doc_source,
            title: c.doc_title,
        }
    }

    /// Where it came from, for a citation: the source, then the pages when there are
    /// some (`report.pdf, p. 3`).
    pub fn cite(&self) -> String {
        match &self.pages {
            Some(p) => format!("{}, {}", self.source, p.cite()),
            None => self.source.clone(),
        }
    }
}

/// A method's evidence: ranked contexts, graph paths where the method has them, and
/// per-stage timings.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Retrieval {
    pub contexts: Vec<Context>,
    pub paths: Vec<String>,
    pub timings_ms: BTreeMap<String, f64>,
    /// What the method did or skipped that a user should know, e.g. "no LLM configured:
    /// query entities found by the rule-based extractor".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Method-specific evidence (scores, anchors, the routed method, a query graph...).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
    /// An answer the method wrote itself with the LLM (global's and drift's reduce, tog's
    /// answer over its paths): the caller shows it instead of running the answer prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// How many of the first contexts go to the answer (hippo's `qa_top_k`); None: all.
    #[serde(skip)]
    pub answer_top_k: Option<usize>,
}

impl Retrieval {
    /// The contexts the answer is written from: the first [`Retrieval::answer_top_k`].
    pub fn answer_contexts(&self) -> &[Context] {
        let n = self.answer_top_k.map_or(self.contexts.len(), |n| n.min(self.contexts.len()));
        &self.contexts[..n]
    }
}

/// A retrieval method. Which one it is, its name and settings, is its registry entry's
/// business ([`MethodEntry`]); the retriever only retrieves.
pub trait Retriever {
    /// Retrieve evidence for `question`: at most `config.retrieval.top_k` contexts.
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval>;
}

/// Every retrieval method, in the order listings show them (`auto` last). A method is its
/// module (its retriever, settings, prompts and docs) plus its line here.
pub(crate) const REGISTRY: &[&[MethodEntry]] = &[
    basic::METHODS,
    local::METHODS,
    hippo::METHODS,
    multihop::METHODS,
    multipath::METHODS,
    modes::METHODS,
    global::METHODS,
    drift::METHODS,
    tog::METHODS,
    dense::METHODS,
    auto::METHODS,
];

/// The retriever implementing `method`.
pub fn retriever(method: Method) -> Box<dyn Retriever> {
    method.retriever()
}

/// The config sections of every method, each once, in the registry's order: what a
/// configuration must hold for every method to run with its settings
/// ([`Config::load_with_sections`], [`Config::with_sections`]).
pub fn settings() -> Vec<&'static SectionKind> {
    let mut out: Vec<&'static SectionKind> = Vec::new();
    for kind in REGISTRY.iter().flat_map(|m| m.iter()).flat_map(|e| e.settings.iter().copied()) {
        if !out.iter().any(|k| k.name == kind.name) {
            out.push(kind);
        }
    }
    out
}

/// The prompts retrieval owns, `(name, text)`, each once: those shared by several methods
/// (question entities, query analysis, follow-up rewriting), then each method's, in the
/// registry's order. The LLM's prompt set takes them in (`Prompts::builtin_with`).
pub fn prompts() -> Vec<(&'static str, &'static str)> {
    let shared: &[(&'static str, &'static str)] = &[
        ("query_entities", include_str!("query_entities.txt")),
        ("analyze_query", include_str!("analyze/analyze_query.txt")),
        ("rewrite_followup", include_str!("analyze/rewrite_followup.txt")),
    ];
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for &(name, text) in shared.iter().chain(REGISTRY.iter().flat_map(|m| m.iter()).flat_map(|e| e.prompts.iter())) {
        if !out.iter().any(|(n, _)| *n == name) {
            out.push((name, text));
        }
    }
    out
}

/// `config` with every method's settings section (at its defaults where missing).
pub fn with_method_settings(config: Config) -> Config {
    config.with_sections(&settings())
}

pub(crate) fn ms(since: std::time::Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Runs one step of a retrieval, recording its wall time in `timings` under `step`.
/// Each step is also a span named after it (`otel.name`), under the query's `retrieve`.
pub(crate) fn timed<T>(timings: &mut BTreeMap<String, f64>, step: &str, f: impl FnOnce() -> T) -> T {
    let t = std::time::Instant::now();
    let v = tracing::info_span!("stage", otel.name = step).in_scope(f);
    timings.insert(step.into(), ms(t));
    v
}

/// The question's query vector, timed as `embed_query`.
pub(crate) fn embed_question(env: &QueryEnv, question: &str, timings: &mut BTreeMap<String, f64>) -> Result<Vec<f32>> {
    timed(timings, "embed_query", || {
        Ok(env.embedder.embed(&[question.to_string()], rhizome_core::EmbedKind::Query)?.remove(0))
    })
}
