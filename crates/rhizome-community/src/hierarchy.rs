//! Hierarchical Leiden, in the manner of graspologic's `hierarchical_leiden`: Leiden on
//! the whole graph gives level 0; every cluster larger than `max_cluster_size` is
//! clustered again on its own induced subgraph, its pieces becoming its children one
//! level down, until every leaf is small enough or cannot be split.
//!
//! Choices:
//! - A cluster that Leiden leaves in one piece is a leaf even when it is larger than
//!   `max_cluster_size`: Leiden communities are connected, so splitting it into connected
//!   components would change nothing, and cutting it anyway would make clusters that
//!   modularity says are not communities (e.g. a clique).
//! - Isolated nodes (no edges, or only a self-loop) are each a singleton cluster at
//!   level 0, so that every node of the graph belongs to exactly one top-level cluster.
//! - Each sub-run uses the caller's options with a seed derived from the caller's seed
//!   and the parent cluster's index, so the whole hierarchy is deterministic for a seed.

use crate::leiden::{leiden, LeidenOptions, Rng, WeightedGraph};

/// One cluster of the hierarchy.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Depth: 0 for the clusters of the whole graph.
    pub level: u32,
    /// Index of the parent cluster in the returned Vec (None at level 0).
    pub parent: Option<usize>,
    /// Indices of the child clusters (empty for a leaf), ascending.
    pub children: Vec<usize>,
    /// The nodes of the cluster, sorted.
    pub nodes: Vec<u32>,
}

/// Hierarchical Leiden as in graspologic: Leiden on the whole graph gives level 0; every
/// cluster with more than `max_cluster_size` nodes is clustered again (Leiden on its
/// induced subgraph) into children at the next level, recursively, until every leaf has
/// <= `max_cluster_size` nodes or Leiden leaves it in one piece (then it is a leaf as it
/// is). Isolated nodes are singleton clusters at level 0. Output order: by level, then by
/// smallest node; children's nodes partition their parent's. Deterministic for a seed.
pub fn hierarchical_leiden(g: &WeightedGraph, max_cluster_size: usize, opts: &LeidenOptions) -> Vec<Cluster> {
    let n = g.node_count();
    let all: Vec<u32> = (0..n as u32).collect();
    let mut out: Vec<Cluster> = groups(&leiden(g, opts), &all)
        .into_iter()
        .map(|nodes| Cluster { level: 0, parent: None, children: Vec::new(), nodes })
        .collect();
    let mut frontier: Vec<usize> = (0..out.len()).filter(|&i| out[i].nodes.len() > max_cluster_size).collect();
    let mut level = 0u32;
    while !frontier.is_empty() {
        let mut kids: Vec<(usize, Vec<u32>)> = Vec::new();
        for &p in &frontier {
            let nodes = &out[p].nodes;
            let sub = g.subgraph(nodes);
            let sub_opts = LeidenOptions { seed: derive_seed(opts.seed, p), ..opts.clone() };
            let pieces = groups(&leiden(&sub, &sub_opts), nodes);
            if pieces.len() > 1 {
                kids.extend(pieces.into_iter().map(|piece| (p, piece)));
            }
        }
        // Parents are disjoint, so the smallest nodes of all children are distinct.
        kids.sort_by_key(|(_, nodes)| nodes[0]);
        level += 1;
        frontier.clear();
        for (p, nodes) in kids {
            let idx = out.len();
            if nodes.len() > max_cluster_size {
                frontier.push(idx);
            }
            out[p].children.push(idx);
            out.push(Cluster { level, parent: Some(p), children: Vec::new(), nodes });
        }
    }
    out
}

/// The nodes of each community, communities in label order; `nodes[i]` is the graph node
/// of local node i (sorted `nodes` give sorted groups).
fn groups(partition: &[u32], nodes: &[u32]) -> Vec<Vec<u32>> {
    let k = partition.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut out = vec![Vec::new(); k];
    for (i, &c) in partition.iter().enumerate() {
        out[c as usize].push(nodes[i]);
    }
    out.retain(|g| !g.is_empty());
    out
}

/// A seed for the sub-run of cluster `index`, mixed from the caller's seed.
fn derive_seed(seed: u64, index: usize) -> u64 {
    let mut r = Rng::new(seed ^ (index as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93));
    r.next_u64()
}
