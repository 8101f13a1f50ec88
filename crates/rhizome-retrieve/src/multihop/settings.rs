//! `multihop`'s settings (`[multihop]`): anchors, ego graph and paths, their valid ranges and calibration.
//! Each setting is one line of [`rhizome_core::section!`]: its default, and for numeric and
//! enum settings its rule and a `Valid: ...` sentence in its doc comment (`tests/settings.rs`
//! keeps the two in step).

use rhizome_core::config::Calibration;
use rhizome_core::section;

section! {
    "multihop",
    /// `multihop`: anchors, ego graph and paths.
    pub struct MultihopConfig {
        /// Anchor nodes found per question entity. Valid: an integer from 1 to 100.
        pub anchor_per_entity: usize = 3 => int(1, 100),
        /// Valid: an integer from 1 to 1000.
        pub max_anchors: usize = 10 => int(1, 1000),
        /// Ego-graph radius around anchors. Valid: an integer from 1 to 5.
        pub depth: usize = 1 => int(1, 5),
        /// Ego-graph candidates = this x `neighbor_top_k`. Valid: an integer from 1 to 100.
        pub neighbor_candidate_multiplier: usize = 3 => int(1, 100),
        /// Ego-graph edges kept after reranking. Valid: an integer from 1 to 1000.
        pub neighbor_top_k: usize = 4 => int(1, 1000),
        /// Path length cutoff (edges). Valid: an integer from 1 to 6.
        pub max_hops: usize = 3 => int(1, 6),
        /// Path candidates = this x `top_k_paths`. Valid: an integer from 1 to 100.
        pub path_candidate_multiplier: usize = 3 => int(1, 100),
        /// Paths kept after reranking. Valid: an integer from 1 to 100.
        pub top_k_paths: usize = 2 => int(1, 100),
        /// Least cosine between a question entity and an anchor node (a node whose name holds
        /// every word of the question entity is an anchor whatever its cosine). Measured with
        /// all-MiniLM-L6-v2: names absent from the graph reach at most 0.77 (Vietnamese names
        /// share romanised syllables: "Nguyễn Du" vs "bom nguyên tử"), 0.59 for English ones;
        /// partial names of present entities 0.82-0.86 ("Heisenberg" vs "Werner Heisenberg").
        /// A model with compressed cosines (multilingual-e5) needs a higher value.
        /// Valid: a number from 0 to 1.
        pub anchor_min_score: f32 = 0.8 => num(0.0, 1.0),
    }
    impl {
        /// `anchor_min_score` is a cosine threshold.
        fn calibrate(&mut self, c: Calibration) {
            self.anchor_min_score = c.threshold(self.anchor_min_score);
        }
    }
}
