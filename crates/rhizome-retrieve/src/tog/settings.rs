//! `tog`'s settings (`[tog]`): beam width and depth, pruning and budgets.
//! Every numeric and enum setting has a rule in [`Section::RULES`] and a `Valid: ...`
//! sentence in its doc comment (`tests/settings.rs` keeps the two in step).

use rhizome_core::config::Section;
use rhizome_core::config_rules::{int, one_of, Rule, BUDGET, OUTPUT};
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

impl Section for TogConfig {
    const NAME: &'static str = "tog";
    const RULES: &'static [Rule] = &[
        int("tog.width", 1, 100),
        int("tog.depth", 1, 10),
        int("tog.num_retain_entity", 1, 100),
        one_of("tog.pruning", &["auto", "llm", "semantic", "bm25"]),
        int("tog.max_output_tokens", 1, OUTPUT),
        int("tog.max_candidates", 1, 10_000),
        int("tog.chunk_tokens", 0, BUDGET),
    ];
}
