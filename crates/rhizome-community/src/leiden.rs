//! One level of Leiden community detection (Traag, Waltman & van Eck, "From Louvain to
//! Leiden: guaranteeing well-connected communities", 2019), maximising Newman modularity
//! with a resolution parameter γ.
//!
//! An iteration runs, level by level: fast local moving of nodes (a queue of nodes whose
//! neighbourhood changed), refinement of every community into well-connected
//! sub-communities (singletons merged at random among well-connected subsets, with
//! probability ∝ exp(gain / θ)), and aggregation of the graph on the refined partition,
//! with the non-refined partition as the starting partition of the aggregate. A level
//! where no node changes community ends the iteration. Iterations repeat from the last
//! partition until modularity stops improving (or `max_iterations`). With
//! `refine: false` the refinement is skipped and the graph is aggregated on the moved
//! partition itself: that is Louvain (with the same fast local moving).
//!
//! Conventions: the weight of the graph `m` counts every edge once (a self-loop too); a
//! node's strength counts its self-loop twice; aggregation turns the edges inside a
//! community into a self-loop, so strengths and `m` are preserved. Gains are kept in edge
//! weight units, `w(v, C) - γ k_v K_C / 2m`, which is also the scale θ applies to.
//!
//! Layout: `graph` (the weighted graph and its aggregation), `rng` (the seeded generator),
//! `moves` (local moving and refinement), `partition` (renumbering, connected splits,
//! modularity); this file runs the levels and iterations.

mod graph;
mod moves;
mod partition;
mod rng;

use graph::aggregate;
pub use graph::WeightedGraph;
use moves::{move_nodes_fast, refine};
pub use partition::modularity;
use partition::renumber;
use partition::split_disconnected;
pub(crate) use rng::Rng;

/// Options of one Leiden run.
#[derive(Debug, Clone)]
pub struct LeidenOptions {
    /// Modularity resolution γ (default 1.0): higher gives smaller communities.
    pub resolution: f64,
    /// θ of the refinement (default 0.01): how random the merge of a singleton is.
    pub randomness: f64,
    /// Seed of the pseudo-random order and merges (default 42).
    pub seed: u64,
    /// Iterations of the whole algorithm; 0 (default) repeats until modularity stops
    /// improving (with a safety cap of 256 iterations).
    pub max_iterations: usize,
    /// Refine before aggregating (default true); false gives Louvain.
    pub refine: bool,
}

impl Default for LeidenOptions {
    fn default() -> Self {
        LeidenOptions { resolution: 1.0, randomness: 0.01, seed: 42, max_iterations: 0, refine: true }
    }
}

/// One level of Leiden: a community number per node, numbered 0.. densely in order of
/// first node. Deterministic for a seed. Isolated nodes (and every node of a graph without
/// edges) are singletons. With `refine`, every community induces a connected subgraph.
pub fn leiden(g: &WeightedGraph, opts: &LeidenOptions) -> Vec<u32> {
    let n = g.node_count();
    if g.total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return (0..n as u32).collect();
    }
    let gamma = if opts.resolution.is_finite() { opts.resolution.max(0.0) } else { 1.0 };
    let mut rng = Rng::new(opts.seed);
    let mut part: Vec<u32> = (0..n as u32).collect();
    let mut q = modularity(g, &part, gamma);
    let cap = if opts.max_iterations == 0 { 256 } else { opts.max_iterations };
    for _ in 0..cap {
        let next = iterate(g, &part, gamma, opts, &mut rng);
        let q_next = modularity(g, &next, gamma);
        let improved = q_next > q + 1e-12 * q.abs().max(1.0);
        let changed = next != part;
        if q_next >= q {
            part = next;
            q = q_next;
        }
        if !improved || !changed {
            break;
        }
    }
    if opts.refine {
        split_disconnected(g, &mut part);
    }
    part
}

/// One Leiden (or Louvain) iteration from `init`: move, refine, aggregate, until a level
/// where every node stays its own community. Returns a dense partition of `g0`.
fn iterate(g0: &WeightedGraph, init: &[u32], gamma: f64, opts: &LeidenOptions, rng: &mut Rng) -> Vec<u32> {
    let mut membership: Vec<u32> = (0..g0.node_count() as u32).collect();
    let mut part = init.to_vec();
    let mut owned: Option<WeightedGraph> = None;
    loop {
        let g = owned.as_ref().unwrap_or(g0);
        move_nodes_fast(g, &mut part, gamma, rng);
        let k = renumber(&mut part);
        if k == g.node_count() {
            break;
        }
        let mut labels = if opts.refine { refine(g, &part, k, gamma, opts.randomness, rng) } else { part.clone() };
        let mut k_agg = renumber(&mut labels);
        if k_agg == g.node_count() {
            // Refinement merged nothing: aggregate on the moved partition so that the
            // next level is smaller (as the reference implementation does).
            labels = part.clone();
            k_agg = k;
        }
        let mut next = vec![0u32; k_agg];
        for (v, &l) in labels.iter().enumerate() {
            next[l as usize] = part[v];
        }
        let agg = aggregate(g, &labels, k_agg);
        for m in membership.iter_mut() {
            *m = labels[*m as usize];
        }
        part = next;
        owned = Some(agg);
    }
    let mut out: Vec<u32> = membership.iter().map(|&m| part[m as usize]).collect();
    renumber(&mut out);
    out
}
