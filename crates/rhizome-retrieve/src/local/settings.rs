//! `local`'s settings (`[local]`): Microsoft GraphRAG local search's entity mapping and token budget.
//! Each setting is one line of [`rhizome_core::section!`]: its default, and for numeric and
//! enum settings its rule and a `Valid: ...` sentence in its doc comment (`tests/settings.rs`
//! keeps the two in step).

use rhizome_core::config::CrossRule;
use rhizome_core::config_rules::BUDGET;
use rhizome_core::section;

section! {
    "local",
    /// `local`: Microsoft GraphRAG's local search.
    pub struct LocalConfig {
        /// Entities mapped from the question. Valid: an integer from 1 to 1000.
        pub top_k_mapped_entities: usize = 10 => int(1, 1000),
        /// Candidates fetched per mapped entity before filtering (oversampling factor).
        /// Valid: an integer from 1 to 100.
        pub oversample: usize = 2 => int(1, 100),
        /// Relationships kept per selected entity. Valid: an integer from 1 to 1000.
        pub top_k_relationships: usize = 10 => int(1, 1000),
        /// Token budget of the whole context. Valid: an integer from 1 to 1000000.
        pub max_context_tokens: usize = 8000 => int(1, BUDGET),
        /// Share of the budget for text units (chunks); with `community_prop`, at most 1.
        /// Valid: a number from 0 to 1.
        pub text_unit_prop: f32 = 0.5 => num(0.0, 1.0),
        /// Share of the budget for community summaries (given to the rest when there are none).
        /// Valid: a number from 0 to 1.
        pub community_prop: f32 = 0.25 => num(0.0, 1.0),
    }
    impl {
        const CROSS_RULES: &'static [CrossRule] = &[CrossRule {
            keys: ["local.text_unit_prop", "local.community_prop"],
            text: "the two shares of the context budget must add up to at most 1",
            holds: |c| {
                let l = c.section::<LocalConfig>();
                l.text_unit_prop + l.community_prop <= 1.0 + 1e-6
            },
        }];
    }
}
