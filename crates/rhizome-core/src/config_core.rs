//! The settings of core's own sections, each a struct with its defaults; [`crate::config::Config`]
//! holds them.

use serde::{Deserialize, Serialize};

/// Where the index lives.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// An index directory (the embedded SQLite index) or a store URL; empty: `--index`
    /// (default `./.rhizome`). Flag `--store`, env `RHIZOME_STORE_URL`.
    pub url: String,
    /// A PostgreSQL streaming replica of `url` (same database, read-only) that queries
    /// read from while writes go to `url`; empty: queries read `url`. Reads then lag
    /// writes by the replica's replay delay. Env `RHIZOME_STORE_READ_URL`.
    pub read_url: String,
}

/// The LLM used for extraction and answers. `provider = "none"` (the default) keeps
/// everything LLM-free.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// `none`, `openai` (any OpenAI-compatible endpoint) or `local` (a GGUF model).
    /// Valid: one of: none, openai, local (empty: none).
    pub provider: String,
    /// OpenAI-compatible base URL (…/v1, or an Azure deployment URL).
    pub base_url: String,
    /// Model name (`openai`) or local model name (`local`: see `rhizome models list`).
    pub model: String,
    /// Name of the environment variable holding the API key.
    pub api_key_env: String,
    /// Azure-style endpoints: the `api-version` query parameter (empty: not Azure).
    pub azure_api_version: String,
    /// Seconds before an HTTP call is given up.
    /// Valid: a number greater than 0 and at most 3600.
    pub timeout_s: f64,
    /// Retries of a transient failure. Valid: an integer from 0 to 100.
    pub max_retries: u32,
    /// First backoff delay. Valid: an integer from 0 to 600000.
    pub retry_base_ms: u64,
    /// Longest backoff delay (at least `retry_base_ms` is used).
    /// Valid: an integer from 0 to 3600000.
    pub retry_max_ms: u64,
    /// Calls in flight at once. Valid: an integer from 1 to 1024.
    pub concurrency: usize,
    /// 0: unlimited. Valid: an integer from 0 to 1000000.
    pub requests_per_minute: u32,
    /// 0: unlimited. Valid: an integer from 0 to 1000000000.
    pub tokens_per_minute: u64,
    /// Valid: a number from 0 to 2.
    pub temperature: f32,
    /// Most tokens one call may write. Valid: an integer from 1 to 131072.
    pub max_tokens: u32,
    /// Directory of prompt files overriding the built-in ones (`NAME.txt`); empty: none.
    pub prompts_dir: String,
    /// Extra "anything missed?" passes per chunk. Valid: an integer from 0 to 10.
    pub gleanings: u32,
    /// Entity types the LLM extractor keeps (others become CONCEPT or are dropped).
    pub schema: Vec<String>,
    /// Entities described in at least this many chunks get an LLM summary (0: never).
    /// Valid: an integer from 0 to 10000.
    pub summarize_min_descriptions: usize,
    /// Context size for local models, in tokens. Valid: an integer from 256 to 131072.
    pub context_tokens: u32,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: "none".into(),
            base_url: "http://localhost:11434/v1".into(),
            model: String::new(),
            api_key_env: "RHIZOME_LLM_API_KEY".into(),
            azure_api_version: String::new(),
            timeout_s: 120.0,
            max_retries: 5,
            retry_base_ms: 500,
            retry_max_ms: 30_000,
            concurrency: 8,
            requests_per_minute: 0,
            tokens_per_minute: 0,
            temperature: 0.0,
            max_tokens: 1024,
            prompts_dir: String::new(),
            gleanings: 0,
            schema: [
                "PERSON",
                "ORGANIZATION",
                "LOCATION",
                "EVENT",
                "CONCEPT",
                "TECHNOLOGY",
                "PRODUCT",
                "DATE",
                "MONEY",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            summarize_min_descriptions: 0,
            context_tokens: 4096,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkConfig {
    /// Tokens per chunk. Valid: an integer from 16 to 8192.
    pub size: usize,
    /// Tokens shared by consecutive chunks, less than `size`.
    /// Valid: an integer from 0 to 8191.
    pub overlap: usize,
}

/// The embedder of a new index when `embed.model = "auto"`: it measured better than
/// all-MiniLM-L6-v2 on our English (MuSiQue Recall@2/@5), Vietnamese and Chinese data
/// (figures in docs/benchmarks.md).
pub const DEFAULT_EMBED_MODEL: &str = "multilingual-e5-small";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// Embedding model name (see `rhizome models list`), or `auto`: the model an existing
    /// index was built with, and [`DEFAULT_EMBED_MODEL`] for a new one.
    pub model: String,
    /// Texts embedded at once. Valid: an integer from 1 to 1024.
    pub batch_size: usize,
    /// Documents per ingestion batch (one transaction each).
    /// Valid: an integer from 1 to 100000.
    pub docs_per_batch: usize,
    /// Chunks per ingestion batch: a batch closes at `docs_per_batch` documents or this
    /// many chunks, and a larger document is written in parts of this size.
    /// Valid: an integer from 1 to 1000000000.
    pub chunks_per_batch: usize,
    /// Documents per batch of an import (`rhizome import`, edge uploads: another tool's
    /// graph, no extraction here), one transaction each. Larger than `docs_per_batch`: an
    /// imported batch costs no LLM call to redo, and fewer, larger transactions write the
    /// MuSiQue OpenIE import ~0.8 s faster (256 against 64). Valid: an integer from 1 to 100000.
    pub import_docs_per_batch: usize,
    /// Which facts get vectors: `auto` (those of an LLM extractor or an import, not the
    /// LLM-free extractor's, which no method reads without an LLM), `always` or `never`.
    /// A fact without a vector is never linked to a question by similarity (hippo's LLM
    /// recognition, multipath's fact path). Valid: one of: auto, always, never.
    pub fact_vectors: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExtractConfig {
    /// `nlp` (LLM-free, default) or `llm`. Valid: one of: nlp, llm.
    pub extractor: String,
    /// Most entities kept per chunk (prune step). Valid: an integer from 1 to 1000.
    pub max_entities_per_chunk: usize,
    /// A new entity whose name embeds at least this close to an existing entity, and whose
    /// name passes a lexical check (same numbers; equal but for punctuation, plural or
    /// initials), is merged into it. 0 turns merging off.
    /// Valid: a number from 0 to 1.
    pub resolve_similarity: f32,
    /// Ask the LLM extractor for claims about entities too (subject, object, type,
    /// status, dates, description, source text): one more call per chunk, cached like the
    /// others. Needs `extractor = "llm"`.
    pub claims: bool,
    /// What counts as a claim worth keeping, in the words given to the model.
    pub claim_description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SynonymyConfig {
    /// SYNONYM edges kept per entity (0: none). Valid: an integer from 0 to 100.
    pub top_k: usize,
    /// Least cosine between two entities joined by a SYNONYM edge.
    /// Valid: a number from 0 to 1.
    pub threshold: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimilarConfig {
    /// Cosine above which two chunks of one document get a SIMILAR_TO edge.
    /// Valid: a number from 0 to 1.
    pub threshold: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalConfig {
    /// Contexts returned. Valid: an integer from 1 to 1000.
    pub top_k: usize,
    /// Candidates taken from each of dense and BM25 before fusion.
    /// Valid: an integer from 1 to 10000.
    pub candidates: usize,
    /// Reciprocal-rank-fusion constant. Valid: a number from 0 to 1000.
    pub rrf_k: f32,
    /// How dense and BM25 results are fused: `score` (weighted cosine + max-normalised
    /// BM25) or `rrf` (weighted reciprocal rank). Valid: one of: score, rrf.
    pub fusion: String,
    /// Weight of the dense (embedding) ranking in the fusion (not both weights 0).
    /// Valid: a number from 0 to 100.
    pub dense_weight: f32,
    /// Weight of the BM25 ranking in the fusion. Valid: a number from 0 to 100.
    pub bm25_weight: f32,
    /// Sentences in an extractive answer. Valid: an integer from 1 to 100.
    pub answer_sentences: usize,
    /// Entities up to which graph methods load the whole graph into memory (once per
    /// graph version); above it, `local` reads the neighbourhood of the question's
    /// entities from the store instead. Valid: an integer from 0 to 1000000000.
    pub whole_graph_up_to: usize,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig { size: 256, overlap: 32 }
    }
}
impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            model: "auto".into(),
            batch_size: 32,
            docs_per_batch: 64,
            chunks_per_batch: 512,
            import_docs_per_batch: 256,
            fact_vectors: "auto".into(),
        }
    }
}
impl Default for ExtractConfig {
    fn default() -> Self {
        ExtractConfig {
            extractor: "nlp".into(),
            max_entities_per_chunk: 40,
            resolve_similarity: 0.85,
            claims: false,
            claim_description: "Any claim or fact about an entity that could matter to someone looking into it: \
                                what it did, what was done to it, what it is accused of or credited with."
                .into(),
        }
    }
}
impl Default for SynonymyConfig {
    fn default() -> Self {
        SynonymyConfig { top_k: 10, threshold: 0.8 }
    }
}
impl Default for SimilarConfig {
    fn default() -> Self {
        SimilarConfig { threshold: 0.8 }
    }
}
impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            top_k: 5,
            candidates: 50,
            rrf_k: 60.0,
            fusion: "score".into(),
            dense_weight: 1.0,
            bm25_weight: 0.1,
            answer_sentences: 3,
            whole_graph_up_to: 250_000,
        }
    }
}
