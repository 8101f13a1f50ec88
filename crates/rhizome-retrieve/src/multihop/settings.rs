//! `multihop`'s settings (`[multihop]`): anchors, ego graph and paths, their valid ranges and calibration.
//! Every numeric and enum setting has a rule in [`Section::RULES`] and a `Valid: ...`
//! sentence in its doc comment (`tests/settings.rs` keeps the two in step).

use rhizome_core::config::{Calibration, Section};
use rhizome_core::config_rules::{int, num, Rule};
use serde::{Deserialize, Serialize};

/// `multihop`: anchors, ego graph and paths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MultihopConfig {
    /// Anchor nodes found per question entity. Valid: an integer from 1 to 100.
    pub anchor_per_entity: usize,
    /// Valid: an integer from 1 to 1000.
    pub max_anchors: usize,
    /// Ego-graph radius around anchors. Valid: an integer from 1 to 5.
    pub depth: usize,
    /// Ego-graph candidates = this x `neighbor_top_k`. Valid: an integer from 1 to 100.
    pub neighbor_candidate_multiplier: usize,
    /// Ego-graph edges kept after reranking. Valid: an integer from 1 to 1000.
    pub neighbor_top_k: usize,
    /// Path length cutoff (edges). Valid: an integer from 1 to 6.
    pub max_hops: usize,
    /// Path candidates = this x `top_k_paths`. Valid: an integer from 1 to 100.
    pub path_candidate_multiplier: usize,
    /// Paths kept after reranking. Valid: an integer from 1 to 100.
    pub top_k_paths: usize,
    /// Least cosine between a question entity and an anchor node (a node whose name holds
    /// every word of the question entity is an anchor whatever its cosine). Measured with
    /// all-MiniLM-L6-v2: names absent from the graph reach at most 0.77 (Vietnamese names
    /// share romanised syllables: "Nguyễn Du" vs "bom nguyên tử"), 0.59 for English ones;
    /// partial names of present entities 0.82-0.86 ("Heisenberg" vs "Werner Heisenberg").
    /// A model with compressed cosines (multilingual-e5) needs a higher value.
    /// Valid: a number from 0 to 1.
    pub anchor_min_score: f32,
}

impl Default for MultihopConfig {
    fn default() -> Self {
        MultihopConfig {
            anchor_per_entity: 3,
            max_anchors: 10,
            depth: 1,
            neighbor_candidate_multiplier: 3,
            neighbor_top_k: 4,
            max_hops: 3,
            path_candidate_multiplier: 3,
            top_k_paths: 2,
            anchor_min_score: 0.8,
        }
    }
}

impl Section for MultihopConfig {
    const NAME: &'static str = "multihop";
    const RULES: &'static [Rule] = &[
        int("multihop.anchor_per_entity", 1, 100),
        int("multihop.max_anchors", 1, 1000),
        int("multihop.depth", 1, 5),
        int("multihop.neighbor_candidate_multiplier", 1, 100),
        int("multihop.neighbor_top_k", 1, 1000),
        int("multihop.max_hops", 1, 6),
        int("multihop.path_candidate_multiplier", 1, 100),
        int("multihop.top_k_paths", 1, 100),
        num("multihop.anchor_min_score", 0.0, 1.0),
    ];

    /// `anchor_min_score` is a cosine threshold.
    fn calibrate(&mut self, c: Calibration) {
        self.anchor_min_score = c.threshold(self.anchor_min_score);
    }
}
