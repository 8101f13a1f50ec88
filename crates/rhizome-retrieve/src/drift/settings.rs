//! `drift`'s settings (`[drift]`): the primer, the follow-up rounds and the budgets.
//! Each setting is one line of [`rhizome_core::section!`]: its default, and for numeric and
//! enum settings its rule and a `Valid: ...` sentence in its doc comment (`tests/settings.rs`
//! keeps the two in step).

use rhizome_core::config_rules::{BUDGET, OUTPUT};
use rhizome_core::section;

section! {
    "drift",
    /// `drift`: a primer over community reports, then rounds of local search on follow-ups.
    pub struct DriftConfig {
        /// Reports the primer reads (by similarity to the expanded question).
        /// Valid: an integer from 1 to 1000.
        pub primer_top_k: usize = 6 => int(1, 1000),
        /// Parallel primer calls the reports are split into. Valid: an integer from 1 to 100.
        pub primer_folds: usize = 3 => int(1, 100),
        /// Rounds of follow-ups after the primer (0: the primer only).
        /// Valid: an integer from 0 to 10.
        pub n_depth: usize = 2 => int(0, 10),
        /// Unanswered follow-ups answered per round, best score first.
        /// Valid: an integer from 1 to 100.
        pub drift_k_followups: usize = 3 => int(1, 100),
        /// Token budget of the local-search context of one follow-up.
        /// Valid: an integer from 1 to 1000000.
        pub local_max_tokens: usize = 4000 => int(1, BUDGET),
        /// Most tokens of one primer or follow-up answer. Valid: an integer from 1 to 131072.
        pub max_output_tokens: u32 = 800 => int(1, OUTPUT),
        /// Token budget of the answers given to the final reduce call.
        /// Valid: an integer from 1 to 1000000.
        pub reduce_max_tokens: usize = 8000 => int(1, BUDGET),
        /// Most tokens the final reduce call may write. Valid: an integer from 1 to 131072.
        pub reduce_max_output_tokens: u32 = 1500 => int(1, OUTPUT),
        /// Form of the answer, e.g. "multiple paragraphs", "a single sentence", "a list".
        pub response_type: String = "multiple paragraphs".into(),
    }
    impl {
        const FREE_TEXT: &'static [&'static str] = &["drift.response_type"];
    }
}
