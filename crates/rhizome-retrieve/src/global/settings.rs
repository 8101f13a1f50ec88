//! `global`'s settings (`[global]`): the community level, the map and reduce budgets.
//! Every numeric and enum setting has a rule in [`Section::RULES`] and a `Valid: ...`
//! sentence in its doc comment (`tests/settings.rs` keeps the two in step).

use rhizome_core::config::Section;
use rhizome_core::config_rules::{int, num, Rule, BUDGET, NO_MAX, OUTPUT};
use serde::{Deserialize, Serialize};

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

impl Section for GlobalConfig {
    const NAME: &'static str = "global";
    const RULES: &'static [Rule] = &[
        int("global.community_level", 0, 100),
        num("global.min_rating", 0.0, 10.0),
        int("global.map_max_tokens", 1, BUDGET),
        int("global.map_max_output_tokens", 1, OUTPUT),
        int("global.reduce_max_tokens", 1, BUDGET),
        int("global.reduce_max_output_tokens", 1, OUTPUT),
        int("global.concurrency", 1, 1024),
        int("global.shuffle_seed", 0, NO_MAX),
        int("global.offline_reports", 1, 1000),
    ];
    const FREE_TEXT: &'static [&'static str] = &["global.response_type"];
}
