//! `global`'s settings (`[global]`): the community level, the map and reduce budgets.
//! Each setting is one line of [`rhizome_core::section!`]: its default, and for numeric and
//! enum settings its rule and a `Valid: ...` sentence in its doc comment (`tests/settings.rs`
//! keeps the two in step).

use rhizome_core::config_rules::{BUDGET, NO_MAX, OUTPUT};
use rhizome_core::section;

section! {
    "global",
    /// `global`: map-reduce over community reports.
    pub struct GlobalConfig {
        /// Hierarchy level whose reports are used (deeper levels are finer); leaf communities
        /// above this level stand for themselves, so the whole graph is covered.
        /// Valid: an integer from 0 to 100.
        pub community_level: u32 = 2 => int(0, 100),
        /// Reports whose impact rating (0 to 10) is below this are left out.
        /// Valid: a number from 0 to 10.
        pub min_rating: f32 = 0.0 => num(0.0, 10.0),
        /// Token budget of the reports in one map call. Valid: an integer from 1 to 1000000.
        pub map_max_tokens: usize = 8000 => int(1, BUDGET),
        /// Most tokens one map call may write. Valid: an integer from 1 to 131072.
        pub map_max_output_tokens: u32 = 1000 => int(1, OUTPUT),
        /// Token budget of the analysts' points given to the reduce call.
        /// Valid: an integer from 1 to 1000000.
        pub reduce_max_tokens: usize = 8000 => int(1, BUDGET),
        /// Most tokens the reduce call may write. Valid: an integer from 1 to 131072.
        pub reduce_max_output_tokens: u32 = 1500 => int(1, OUTPUT),
        /// Map calls in flight at once. Valid: an integer from 1 to 1024.
        pub concurrency: usize = 32 => int(1, 1024),
        /// Seed of the shuffle that spreads reports over map batches.
        /// Valid: an integer of at least 0.
        pub shuffle_seed: u64 = 42 => int(0, NO_MAX),
        /// Form of the answer, e.g. "multiple paragraphs", "a single sentence", "a list".
        pub response_type: String = "multiple paragraphs".into(),
        /// Reports shown offline (no LLM): the best by relevance x rating.
        /// Valid: an integer from 1 to 1000.
        pub offline_reports: usize = 5 => int(1, 1000),
    }
    impl {
        const FREE_TEXT: &'static [&'static str] = &["global.response_type"];
    }
}
