//! Settings of the corpus-wide methods: communities and their reports (`[communities]`),
//! `global` map-reduce (`[global]`), `drift` (`[drift]`) and Think-on-Graph (`[tog]`).
//! Names and defaults follow Microsoft GraphRAG and the ToG paper where they have them.

use serde::{Deserialize, Serialize};

/// Hierarchical Leiden communities of the entity graph and their reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommunitiesConfig {
    /// Compute communities and reports at the end of `rhizome index` (they are also
    /// (re)built by `rhizome communities`, and only when the graph changed).
    pub enabled: bool,
    /// A community with more entities than this is clustered again into sub-communities.
    /// Valid: an integer from 2 to 100000.
    pub max_cluster_size: usize,
    /// Seed of Leiden's randomised refinement: same graph + same seed = same communities.
    /// Valid: an integer of at least 0.
    pub seed: u64,
    /// Modularity resolution (higher: smaller communities).
    /// Valid: a number greater than 0 and at most 100.
    pub resolution: f64,
    /// Token budget of the material given to the LLM for one report; when a community's
    /// own entities, relations and claims exceed it, its sub-communities' reports stand in
    /// for their members. Valid: an integer from 1 to 1000000.
    pub report_max_input_tokens: usize,
    /// Most tokens the LLM may write for one report. Valid: an integer from 1 to 131072.
    pub report_max_tokens: u32,
    /// Extractive reports (no LLM): entities, relations and sentences listed.
    /// Valid: an integer from 1 to 1000.
    pub extractive_entities: usize,
    /// Valid: an integer from 0 to 1000.
    pub extractive_relations: usize,
    /// Valid: an integer from 0 to 1000.
    pub extractive_sentences: usize,
    /// Megabytes of entity rows, relations and chunk texts kept while reports are written
    /// (each is then read once instead of once per level); past it, material is read per
    /// community. Valid: an integer from 0 to 1000000.
    pub material_cache_mb: usize,
}

impl Default for CommunitiesConfig {
    fn default() -> Self {
        CommunitiesConfig {
            enabled: true,
            max_cluster_size: 10,
            seed: 42,
            resolution: 1.0,
            report_max_input_tokens: 8000,
            report_max_tokens: 1500,
            extractive_entities: 10,
            extractive_relations: 10,
            extractive_sentences: 5,
            material_cache_mb: 32,
        }
    }
}

/// `global`: map-reduce over community reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GlobalConfig {
    /// Hierarchy level whose reports are used (deeper levels are finer); leaf communities
    /// above this level stand for themselves, so the whole graph is covered.
    /// Valid: an integer from 0 to 100.
    pub community_level: u32,
    /// Reports whose impact rating (0 to 10) is below this are left out.
    /// Valid: a number from 0 to 10.
    pub min_rating: f32,
    /// Token budget of the reports in one map call. Valid: an integer from 1 to 1000000.
    pub map_max_tokens: usize,
    /// Most tokens one map call may write. Valid: an integer from 1 to 131072.
    pub map_max_output_tokens: u32,
    /// Token budget of the analysts' points given to the reduce call.
    /// Valid: an integer from 1 to 1000000.
    pub reduce_max_tokens: usize,
    /// Most tokens the reduce call may write. Valid: an integer from 1 to 131072.
    pub reduce_max_output_tokens: u32,
    /// Map calls in flight at once. Valid: an integer from 1 to 1024.
    pub concurrency: usize,
    /// Seed of the shuffle that spreads reports over map batches.
    /// Valid: an integer of at least 0.
    pub shuffle_seed: u64,
    /// Form of the answer, e.g. "multiple paragraphs", "a single sentence", "a list".
    pub response_type: String,
    /// Reports shown offline (no LLM): the best by relevance x rating.
    /// Valid: an integer from 1 to 1000.
    pub offline_reports: usize,
}

impl Default for GlobalConfig {
    fn default() -> Self {
        GlobalConfig {
            community_level: 2,
            min_rating: 0.0,
            map_max_tokens: 8000,
            map_max_output_tokens: 1000,
            reduce_max_tokens: 8000,
            reduce_max_output_tokens: 1500,
            concurrency: 32,
            shuffle_seed: 42,
            response_type: "multiple paragraphs".into(),
            offline_reports: 5,
        }
    }
}

/// `drift`: a primer over community reports, then rounds of local search on follow-ups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DriftConfig {
    /// Reports the primer reads (by similarity to the expanded question).
    /// Valid: an integer from 1 to 1000.
    pub primer_top_k: usize,
    /// Parallel primer calls the reports are split into. Valid: an integer from 1 to 100.
    pub primer_folds: usize,
    /// Rounds of follow-ups after the primer (0: the primer only).
    /// Valid: an integer from 0 to 10.
    pub n_depth: usize,
    /// Unanswered follow-ups answered per round, best score first.
    /// Valid: an integer from 1 to 100.
    pub drift_k_followups: usize,
    /// Token budget of the local-search context of one follow-up.
    /// Valid: an integer from 1 to 1000000.
    pub local_max_tokens: usize,
    /// Most tokens of one primer or follow-up answer. Valid: an integer from 1 to 131072.
    pub max_output_tokens: u32,
    /// Token budget of the answers given to the final reduce call.
    /// Valid: an integer from 1 to 1000000.
    pub reduce_max_tokens: usize,
    /// Most tokens the final reduce call may write. Valid: an integer from 1 to 131072.
    pub reduce_max_output_tokens: u32,
    /// Form of the answer, e.g. "multiple paragraphs", "a single sentence", "a list".
    pub response_type: String,
}

impl Default for DriftConfig {
    fn default() -> Self {
        DriftConfig {
            primer_top_k: 6,
            primer_folds: 3,
            n_depth: 2,
            drift_k_followups: 3,
            local_max_tokens: 4000,
            max_output_tokens: 800,
            reduce_max_tokens: 8000,
            reduce_max_output_tokens: 1500,
            response_type: "multiple paragraphs".into(),
        }
    }
}

/// How Think-on-Graph scores candidate relations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TogPruning {
    /// The LLM scores the candidates when one is configured, else `semantic`.
    Auto,
    /// The LLM scores the candidates (ToG's own pruning).
    Llm,
    /// Cosine between the question and the relation's text.
    Semantic,
    /// BM25 of the relation's text against the question.
    Bm25,
}

/// `tog`: Think-on-Graph beam exploration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TogConfig {
    /// Starting entities (by embedding), and the beam: paths kept after each depth.
    /// Valid: an integer from 1 to 100.
    pub width: usize,
    /// Most exploration rounds. Valid: an integer from 1 to 10.
    pub depth: usize,
    /// Relations kept per frontier entity before the beam cut.
    /// Valid: an integer from 1 to 100.
    pub num_retain_entity: usize,
    /// How candidate relations are scored. Valid: one of: auto, llm, semantic, bm25.
    pub pruning: TogPruning,
    /// With an LLM: after each depth ask whether the paths suffice, and stop if so.
    pub early_stop: bool,
    /// Most tokens of the final answer. Valid: an integer from 1 to 131072.
    pub max_output_tokens: u32,
    /// Candidate relations of one frontier entity scored at one depth; a hub with more
    /// keeps those whose text best matches the question (BM25), then graph order.
    /// Valid: an integer from 1 to 10000.
    pub max_candidates: usize,
    /// Token budget of the supporting chunk text returned as contexts and given to the
    /// answer call (0: none). Valid: an integer from 0 to 1000000.
    pub chunk_tokens: usize,
}

impl Default for TogConfig {
    fn default() -> Self {
        TogConfig {
            width: 3,
            depth: 3,
            num_retain_entity: 5,
            pruning: TogPruning::Auto,
            early_stop: true,
            max_output_tokens: 800,
            max_candidates: 40,
            chunk_tokens: 1500,
        }
    }
}
