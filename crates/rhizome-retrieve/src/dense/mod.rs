//! `dense`: dense vector search alone over chunks. The question is embedded like a query
//! and the `retrieval.top_k` chunks nearest to it by cosine are the contexts, scored by
//! their cosine. No BM25, no graph, no LLM: the plain baseline of embedding retrieval, and
//! what `basic` fuses with BM25.

use std::time::Instant;

use rhizome_core::{EmbedKind, Result, VectorKind};

use crate::basic::chunk_contexts;
use crate::{ms, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::named("dense"),
    description: "Dense vector search alone over chunks",
    settings: &[],
    retriever: |m| Box::new(Dense(m)),
    prompts: &[],
}];

/// The `dense` retriever (holding its registry name).
pub struct Dense(Method);

impl Retriever for Dense {
    fn method(&self) -> Method {
        self.0
    }

    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let mut out = Retrieval::default();
        let t = Instant::now();
        let q = env.embedder.embed(&[question.to_string()], EmbedKind::Query)?.remove(0);
        out.timings_ms.insert("embed_query".into(), ms(t));
        let t = Instant::now();
        let nearest = env.store.vector_search(VectorKind::Chunk, &q, env.config.retrieval.top_k)?;
        out.timings_ms.insert("dense".into(), ms(t));
        let t = Instant::now();
        out.contexts = chunk_contexts(env.store, &nearest)?;
        out.timings_ms.insert("fetch".into(), ms(t));
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
