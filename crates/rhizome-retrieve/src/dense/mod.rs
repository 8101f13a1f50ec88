//! `dense`: dense vector search alone over chunks. The question is embedded like a query
//! and the `retrieval.top_k` chunks nearest to it by cosine are the contexts, scored by
//! their cosine. No BM25, no graph, no LLM: the plain baseline of embedding retrieval, and
//! what `basic` fuses with BM25.

use rhizome_core::{Result, VectorKind};

use crate::basic::chunk_contexts;
use crate::{embed_question, timed, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::named("dense"),
    description: "Dense vector search alone over chunks",
    reads_graph: false,
    settings: &[],
    retriever: |_| Box::new(Dense),
    prompts: &[],
}];

/// The `dense` retriever.
pub struct Dense;

impl Retriever for Dense {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let mut out = Retrieval::default();
        let q = embed_question(env, question, &mut out.timings_ms)?;
        let nearest = timed(&mut out.timings_ms, "dense", || {
            env.store.vector_search(VectorKind::Chunk, &q, env.config.retrieval.top_k)
        })?;
        out.contexts = timed(&mut out.timings_ms, "fetch", || chunk_contexts(env.store, &nearest))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
