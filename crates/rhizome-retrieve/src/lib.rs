//! Retrieval: one method per file behind the [`Retriever`] trait, chosen by [`Method`],
//! and answer building (extractive without an LLM).

pub mod analyze;
mod answer;
mod auto;
mod basic;
mod drift;
mod global;
pub mod graph;
mod hippo;
mod hippo_names;
mod local;
mod method;
mod modes;
mod multihop;
mod multipath;
mod paths;
mod query_entities;
mod tog;
#[doc(hidden)]
pub mod fuzzing;
pub mod ppr;

use std::collections::BTreeMap;

use rhizome_core::llm::PromptLlm;
use rhizome_core::{Config, Embedder, Result, StoreRead};
use serde::Serialize;

pub use answer::{extractive_answer, INSUFFICIENT_EVIDENCE};
pub use analyze::{analyze, QueryAnalysis};
pub use auto::{route, Auto, Route};
pub use basic::Basic;
pub use drift::Drift;
pub use global::Global;
pub use graph::{Graph, GraphCache};
pub use hippo::{Hippo, PprSolver};
pub use local::Local;
pub use method::Method;
pub use modes::Mode;
pub use multihop::Multihop;
pub use multipath::Multipath;
pub use tog::Tog;

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
}

/// One piece of evidence, with provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Context {
    /// `chunk`, `entity`, `relation`, `fact`, `path`, ...
    pub kind: String,
    pub id: String,
    pub text: String,
    pub score: f32,
    /// Where it came from: the document source (file path, `FILE#N`).
    pub source: String,
    /// The document title, when there is one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
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
}

/// A retrieval method.
pub trait Retriever {
    fn method(&self) -> Method;
    /// Retrieve evidence for `question`: at most `config.retrieval.top_k` contexts.
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval>;
}

/// The retriever implementing `method`.
pub fn retriever(method: Method) -> Box<dyn Retriever> {
    match method {
        Method::Basic => Box::new(Basic),
        Method::Local => Box::new(Local),
        Method::Hippo => Box::new(Hippo::default()),
        Method::Multihop => Box::new(Multihop),
        Method::Multipath => Box::new(Multipath),
        Method::ChunkOnly | Method::EntityOnly | Method::Hybrid | Method::GraphEnhanced => {
            Box::new(Mode(method))
        }
        Method::Global => Box::new(Global),
        Method::Drift => Box::new(Drift),
        Method::Tog => Box::new(Tog),
        Method::Auto => Box::new(Auto),
    }
}

pub(crate) fn ms(since: std::time::Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}
