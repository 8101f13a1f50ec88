//! Names of the plain Redis keys kept beside the graph, all under `rhizome:{graph}:`, and
//! small helpers to build commands.

use super::FalkorStore;

impl FalkorStore {
    /// `rhizome:{graph}:{suffix}`.
    pub(crate) fn key(&self, suffix: &str) -> Vec<u8> {
        format!("rhizome:{}:{suffix}", self.url.graph).into_bytes()
    }

    /// The command reading a document's whole support list `list` (`dm`, `dr`, `df`, `dc`).
    pub(crate) fn lrange(&self, list: &str, doc_id: &str) -> Vec<Vec<u8>> {
        cmd([b"LRANGE".to_vec(), self.key(&format!("{list}:{doc_id}")), b"0".to_vec(), b"-1".to_vec()])
    }
}

/// A command from string-ish parts.
pub(crate) fn cmd<I, T>(parts: I) -> Vec<Vec<u8>>
where
    I: IntoIterator<Item = T>,
    T: Into<Vec<u8>>,
{
    parts.into_iter().map(Into::into).collect()
}

/// Key suffixes.
pub(crate) const META: &str = "meta";
pub(crate) const SEQ: &str = "seq";
pub(crate) const PENDING: &str = "pending";
pub(crate) const PARTIAL: &str = "partial";
pub(crate) const FAILURES: &str = "failures";
pub(crate) const COVARIATES: &str = "covariates";
pub(crate) const COMMUNITIES: &str = "communities";
pub(crate) const REPORTS: &str = "reports";
pub(crate) const SUMMARIES: &str = "summaries";
pub(crate) const LLM: &str = "llm";
pub(crate) const BM25_LEN: &str = "bm25:len";
pub(crate) const BM25_ID: &str = "bm25:id";
/// Relations: id -> JSON `Relation` (the aggregate); `ers:ENTITY` / `ert:ENTITY` are
/// sorted sets of the relations an entity is the source / target of, by creation.
pub(crate) const REL: &str = "rel";

/// The set of a chunk's sentence vector ids (`vec:sentence` holds the vectors): what
/// deleting or copying the chunk reads.
pub(crate) fn sentences_key(chunk_id: &str) -> String {
    format!("sv:{chunk_id}")
}

pub(crate) fn vec_key(kind: rhizome_core::VectorKind) -> String {
    format!("vec:{}", kind.as_str())
}
