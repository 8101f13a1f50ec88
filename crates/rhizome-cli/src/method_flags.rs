//! Flags for the multi-hop method's parameters (each is also the config key
//! `multihop.NAME` and the env var `RHIZOME_MULTIHOP_NAME`).

use clap::Args;
use rhizome_core::Config;

#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "Multi-hop (--method multihop)")]
pub struct MultihopFlags {
    /// Anchor nodes per question entity [multihop.anchor_per_entity].
    #[arg(long)]
    pub anchor_per_entity: Option<usize>,
    /// Most anchors [multihop.max_anchors].
    #[arg(long)]
    pub max_anchors: Option<usize>,
    /// Ego-graph radius [multihop.depth].
    #[arg(long)]
    pub depth: Option<usize>,
    /// Ego-graph candidates = this x neighbor-top-k [multihop.neighbor_candidate_multiplier].
    #[arg(long)]
    pub neighbor_candidate_multiplier: Option<usize>,
    /// Ego-graph edges kept after reranking [multihop.neighbor_top_k].
    #[arg(long)]
    pub neighbor_top_k: Option<usize>,
    /// Path length cutoff in edges [multihop.max_hops].
    #[arg(long)]
    pub max_hops: Option<usize>,
    /// Path candidates = this x top-k-paths [multihop.path_candidate_multiplier].
    #[arg(long)]
    pub path_candidate_multiplier: Option<usize>,
    /// Paths kept after reranking [multihop.top_k_paths].
    #[arg(long)]
    pub top_k_paths: Option<usize>,
    /// Least cosine between a question entity and an anchor [multihop.anchor_min_score].
    #[arg(long)]
    pub anchor_min_score: Option<f32>,
}

impl MultihopFlags {
    /// Flags win over file and environment.
    pub fn apply(&self, config: &mut Config) {
        let m = &mut config.multihop;
        let set = |slot: &mut usize, v: Option<usize>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut m.anchor_per_entity, self.anchor_per_entity);
        set(&mut m.max_anchors, self.max_anchors);
        set(&mut m.depth, self.depth);
        set(&mut m.neighbor_candidate_multiplier, self.neighbor_candidate_multiplier);
        set(&mut m.neighbor_top_k, self.neighbor_top_k);
        set(&mut m.max_hops, self.max_hops);
        set(&mut m.path_candidate_multiplier, self.path_candidate_multiplier);
        set(&mut m.top_k_paths, self.top_k_paths);
        if let Some(v) = self.anchor_min_score {
            m.anchor_min_score = v;
        }
    }
}
