//! Communities and their reports (`[communities]`), which indexing builds and the
//! corpus-wide methods read. Names and defaults follow Microsoft GraphRAG.

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
