//! `multipath`'s settings (`[multipath]`): how many entities, relations, chunks and facts each path keeps.
//! Every numeric and enum setting has a rule in [`Section::RULES`] and a `Valid: ...`
//! sentence in its doc comment (`tests/settings.rs` keeps the two in step).

use rhizome_core::config::Section;
use rhizome_core::config_rules::{int, Rule};
use serde::{Deserialize, Serialize};

/// `multipath`: entity, relationship, chunk and fact discovery by several paths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MultipathConfig {
    /// Keywords taken from the question. Valid: an integer from 1 to 100.
    pub keyword_limit: usize,
    /// Entities kept per discovery path. Valid: an integer from 1 to 1000.
    pub entity_top_k: usize,
    /// Valid: an integer from 1 to 10000.
    pub max_entities: usize,
    /// Entities whose 2-hop neighbourhood is expanded. Valid: an integer from 0 to 1000.
    pub expand_entities: usize,
    /// Valid: an integer from 0 to 10000.
    pub max_relationships: usize,
    /// Valid: an integer from 1 to 1000.
    pub chunk_top_k: usize,
    /// Valid: an integer from 0 to 1000.
    pub fact_top_k: usize,
    /// With an LLM configured: let it rerank the chunks.
    pub llm_rerank: bool,
}

impl Default for MultipathConfig {
    fn default() -> Self {
        MultipathConfig {
            keyword_limit: 10,
            entity_top_k: 5,
            max_entities: 30,
            expand_entities: 5,
            max_relationships: 20,
            chunk_top_k: 15,
            fact_top_k: 15,
            llm_rerank: false,
        }
    }
}

impl Section for MultipathConfig {
    const NAME: &'static str = "multipath";
    const RULES: &'static [Rule] = &[
        int("multipath.keyword_limit", 1, 100),
        int("multipath.entity_top_k", 1, 1000),
        int("multipath.max_entities", 1, 10_000),
        int("multipath.expand_entities", 0, 1000),
        int("multipath.max_relationships", 0, 10_000),
        int("multipath.chunk_top_k", 1, 1000),
        int("multipath.fact_top_k", 0, 1000),
    ];
}
