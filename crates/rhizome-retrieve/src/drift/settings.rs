//! `drift`'s settings (`[drift]`): the primer, the follow-up rounds and the budgets.
//! Every numeric and enum setting has a rule in [`Section::RULES`] and a `Valid: ...`
//! sentence in its doc comment (`tests/settings.rs` keeps the two in step).

use rhizome_core::config::Section;
use rhizome_core::config_rules::{int, Rule, BUDGET, OUTPUT};
use serde::{Deserialize, Serialize};

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

impl Section for DriftConfig {
    const NAME: &'static str = "drift";
    const RULES: &'static [Rule] = &[
        int("drift.primer_top_k", 1, 1000),
        int("drift.primer_folds", 1, 100),
        int("drift.n_depth", 0, 10),
        int("drift.drift_k_followups", 1, 100),
        int("drift.local_max_tokens", 1, BUDGET),
        int("drift.max_output_tokens", 1, OUTPUT),
        int("drift.reduce_max_tokens", 1, BUDGET),
        int("drift.reduce_max_output_tokens", 1, OUTPUT),
    ];
    const FREE_TEXT: &'static [&'static str] = &["drift.response_type"];
}
