//! Flags for the multi-hop method's parameters (each is also the config key
//! `multihop.NAME` and the env var `RHIZOME_MULTIHOP_NAME`).

use clap::Args;
use rhizome_core::config_load::FlagSetting;

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
    /// The flags given, as settings: they apply over file, environment and `--set`, and
    /// are checked with them.
    pub fn settings(&self) -> Vec<FlagSetting> {
        let counts = [
            ("anchor_per_entity", self.anchor_per_entity),
            ("max_anchors", self.max_anchors),
            ("depth", self.depth),
            ("neighbor_candidate_multiplier", self.neighbor_candidate_multiplier),
            ("neighbor_top_k", self.neighbor_top_k),
            ("max_hops", self.max_hops),
            ("path_candidate_multiplier", self.path_candidate_multiplier),
            ("top_k_paths", self.top_k_paths),
        ];
        let flag = |name: &str| (format!("multihop.{name}"), format!("--{}", name.replace('_', "-")));
        let mut out = Vec::new();
        for (name, v) in counts {
            if let Some(v) = v {
                let (key, f) = flag(name);
                out.push(FlagSetting::new(&key, v, &f));
            }
        }
        if let Some(v) = self.anchor_min_score {
            let (key, f) = flag("anchor_min_score");
            out.push(FlagSetting::new(&key, v, &f));
        }
        out
    }
}
