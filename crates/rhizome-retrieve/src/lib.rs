//! Retrieval: one method per file behind the [`Retriever`] trait, chosen by [`Method`],
//! and answer building (extractive without an LLM).

mod answer;
mod basic;
mod method;

use std::collections::BTreeMap;

use rhizome_core::{Config, Embedder, Result, StoreRead};
use serde::Serialize;

pub use answer::{extractive_answer, INSUFFICIENT_EVIDENCE};
pub use basic::Basic;
pub use method::Method;

/// What a retriever needs: the index (read side only), the embedder whose vectors the
/// index holds, and the settings.
pub struct QueryEnv<'a> {
    pub store: &'a dyn StoreRead,
    pub embedder: &'a dyn Embedder,
    pub config: &'a Config,
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
    }
}

pub(crate) fn ms(since: std::time::Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}
