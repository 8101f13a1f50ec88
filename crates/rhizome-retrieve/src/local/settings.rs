//! `local`'s settings (`[local]`): Microsoft GraphRAG local search's entity mapping and token budget.
//! Every numeric and enum setting has a rule in [`Section::RULES`] and a `Valid: ...`
//! sentence in its doc comment (`tests/settings.rs` keeps the two in step).

use rhizome_core::config::CrossRule;
use rhizome_core::config::Section;
use rhizome_core::config_rules::{int, num, Rule, BUDGET};
use serde::{Deserialize, Serialize};

/// `local`: Microsoft GraphRAG's local search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalConfig {
    /// Entities mapped from the question. Valid: an integer from 1 to 1000.
    pub top_k_mapped_entities: usize,
    /// Candidates fetched per mapped entity before filtering (oversampling factor).
    /// Valid: an integer from 1 to 100.
    pub oversample: usize,
    /// Relationships kept per selected entity. Valid: an integer from 1 to 1000.
    pub top_k_relationships: usize,
    /// Token budget of the whole context. Valid: an integer from 1 to 1000000.
    pub max_context_tokens: usize,
    /// Share of the budget for text units (chunks); with `community_prop`, at most 1.
    /// Valid: a number from 0 to 1.
    pub text_unit_prop: f32,
    /// Share of the budget for community summaries (given to the rest when there are none).
    /// Valid: a number from 0 to 1.
    pub community_prop: f32,
}

impl Default for LocalConfig {
    fn default() -> Self {
        LocalConfig {
            top_k_mapped_entities: 10,
            oversample: 2,
            top_k_relationships: 10,
            max_context_tokens: 8000,
            text_unit_prop: 0.5,
            community_prop: 0.25,
        }
    }
}

impl Section for LocalConfig {
    const NAME: &'static str = "local";
    const RULES: &'static [Rule] = &[
        int("local.top_k_mapped_entities", 1, 1000),
        int("local.oversample", 1, 100),
        int("local.top_k_relationships", 1, 1000),
        int("local.max_context_tokens", 1, BUDGET),
        num("local.text_unit_prop", 0.0, 1.0),
        num("local.community_prop", 0.0, 1.0),
    ];
    const CROSS_RULES: &'static [CrossRule] = &[CrossRule {
        keys: ["local.text_unit_prop", "local.community_prop"],
        text: "the two shares of the context budget must add up to at most 1",
        holds: |c| {
            let l = c.section::<LocalConfig>();
            l.text_unit_prop + l.community_prop <= 1.0 + 1e-6
        },
    }];
}
