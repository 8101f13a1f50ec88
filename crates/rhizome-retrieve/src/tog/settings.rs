//! `tog`'s settings (`[tog]`): beam width and depth, pruning and budgets.
//! Each setting is one line of [`rhizome_core::section!`]: its default, and for numeric and
//! enum settings its rule and a `Valid: ...` sentence in its doc comment (`tests/settings.rs`
//! keeps the two in step).

use rhizome_core::config_rules::{BUDGET, OUTPUT};
use rhizome_core::section;
use serde::{Deserialize, Serialize};

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

section! {
    "tog",
    /// `tog`: Think-on-Graph beam exploration.
    pub struct TogConfig {
        /// Starting entities (by embedding), and the beam: paths kept after each depth.
        /// Valid: an integer from 1 to 100.
        pub width: usize = 3 => int(1, 100),
        /// Most exploration rounds. Valid: an integer from 1 to 10.
        pub depth: usize = 3 => int(1, 10),
        /// Relations kept per frontier entity before the beam cut.
        /// Valid: an integer from 1 to 100.
        pub num_retain_entity: usize = 5 => int(1, 100),
        /// How candidate relations are scored. Valid: one of: auto, llm, semantic, bm25.
        pub pruning: TogPruning = TogPruning::Auto => one_of(&["auto", "llm", "semantic", "bm25"]),
        /// With an LLM: after each depth ask whether the paths suffice, and stop if so.
        pub early_stop: bool = true,
        /// Most tokens of the final answer. Valid: an integer from 1 to 131072.
        pub max_output_tokens: u32 = 800 => int(1, OUTPUT),
        /// Candidate relations of one frontier entity scored at one depth; a hub with more
        /// keeps those whose text best matches the question (BM25), then graph order.
        /// Valid: an integer from 1 to 10000.
        pub max_candidates: usize = 40 => int(1, 10_000),
        /// Token budget of the supporting chunk text returned as contexts and given to the
        /// answer call (0: none). Valid: an integer from 0 to 1000000.
        pub chunk_tokens: usize = 1500 => int(0, BUDGET),
    }
    impl {}
}
