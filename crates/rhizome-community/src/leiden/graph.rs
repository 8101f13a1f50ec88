//! The weighted graph Leiden works on (CSR rows, self-loops kept apart, node strengths),
//! and its aggregation on a partition.

use std::collections::HashMap;

/// Undirected weighted graph on nodes 0..n. Parallel edges add up; self-loops allowed.
#[derive(Debug, Clone, Default)]
pub struct WeightedGraph {
    /// CSR row starts (n + 1 entries) into `targets` / `weights`; rows sorted by target,
    /// one entry per neighbour, both directions of every edge; self-loops are kept apart.
    offsets: Vec<usize>,
    targets: Vec<u32>,
    weights: Vec<f64>,
    /// Self-loop weight per node.
    pub(super) loops: Vec<f64>,
    /// Strength per node: neighbour weights plus twice the self-loop.
    pub(super) strength: Vec<f64>,
    /// Sum of the edge weights, each edge (and self-loop) once.
    pub(super) total: f64,
}

impl WeightedGraph {
    /// A graph on `n` nodes. Edges with a weight that is not finite or is <= 0, or with an
    /// end >= `n`, are ignored.
    pub fn new(n: usize, edges: &[(u32, u32, f64)]) -> WeightedGraph {
        let ok = |&&(u, v, w): &&(u32, u32, f64)| w.is_finite() && w > 0.0 && (u as usize) < n && (v as usize) < n;
        let mut loops = vec![0.0; n];
        let mut offsets = vec![0usize; n + 1];
        for &(u, v, w) in edges.iter().filter(ok) {
            if u == v {
                loops[u as usize] += w;
            } else {
                offsets[u as usize + 1] += 1;
                offsets[v as usize + 1] += 1;
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut cursor = offsets.clone();
        let mut adj = vec![(0u32, 0.0f64); offsets[n]];
        for &(u, v, w) in edges.iter().filter(ok) {
            if u != v {
                adj[cursor[u as usize]] = (v, w);
                cursor[u as usize] += 1;
                adj[cursor[v as usize]] = (u, w);
                cursor[v as usize] += 1;
            }
        }
        Self::from_rows(&offsets, adj, loops)
    }

    /// Sorts and merges every row of a raw CSR adjacency, and derives strengths and `m`.
    fn from_rows(offsets: &[usize], mut adj: Vec<(u32, f64)>, loops: Vec<f64>) -> WeightedGraph {
        let n = loops.len();
        let mut g = WeightedGraph {
            offsets: Vec::with_capacity(n + 1),
            targets: Vec::with_capacity(adj.len()),
            weights: Vec::with_capacity(adj.len()),
            strength: vec![0.0; n],
            total: 0.0,
            loops,
        };
        g.offsets.push(0);
        let mut twice_edges = 0.0;
        for i in 0..n {
            let row = &mut adj[offsets[i]..offsets[i + 1]];
            row.sort_unstable_by_key(|e| e.0);
            let start = g.targets.len();
            let mut sum = 0.0;
            for &(t, w) in row.iter() {
                sum += w;
                if g.targets.len() > start && g.targets[g.targets.len() - 1] == t {
                    *g.weights.last_mut().expect("row not empty") += w;
                } else {
                    g.targets.push(t);
                    g.weights.push(w);
                }
            }
            g.offsets.push(g.targets.len());
            g.strength[i] = sum + 2.0 * g.loops[i];
            twice_edges += sum;
        }
        g.total = twice_edges / 2.0 + g.loops.iter().sum::<f64>();
        g
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.loops.len()
    }

    /// Sum of the edge weights, every edge (and self-loop) counted once.
    pub fn total_weight(&self) -> f64 {
        self.total
    }

    /// Induced subgraph on `nodes` (renumbered 0..nodes.len() in the given order). A node
    /// that is out of range, or repeated (its later copies), becomes an isolated node.
    pub fn subgraph(&self, nodes: &[u32]) -> WeightedGraph {
        let n = self.node_count();
        let k = nodes.len();
        // A map, not an n-sized array, so that many small subgraphs cost O(their size).
        let mut local: HashMap<u32, u32> = HashMap::with_capacity(k);
        let mut keep = vec![false; k];
        for (i, &g) in nodes.iter().enumerate() {
            if (g as usize) < n {
                if let std::collections::hash_map::Entry::Vacant(e) = local.entry(g) {
                    e.insert(i as u32);
                    keep[i] = true;
                }
            }
        }
        let mut offsets = Vec::with_capacity(k + 1);
        offsets.push(0);
        let mut adj = Vec::new();
        let mut loops = vec![0.0; k];
        for (i, &g) in nodes.iter().enumerate() {
            if keep[i] {
                loops[i] = self.loops[g as usize];
                for (t, w) in self.neighbors(g as usize) {
                    if let Some(&j) = local.get(&t) {
                        adj.push((j, w));
                    }
                }
            }
            offsets.push(adj.len());
        }
        Self::from_rows(&offsets, adj, loops)
    }

    /// Neighbours of `v` (self-loop excluded) with the edge weights.
    pub(super) fn neighbors(&self, v: usize) -> impl Iterator<Item = (u32, f64)> + '_ {
        let r = self.offsets[v]..self.offsets[v + 1];
        self.targets[r.clone()].iter().copied().zip(self.weights[r].iter().copied())
    }
}

/// The graph whose nodes are the `k` groups of `labels`: edges between groups add up,
/// edges inside a group (and self-loops) become its self-loop.
pub(super) fn aggregate(g: &WeightedGraph, labels: &[u32], k: usize) -> WeightedGraph {
    let mut edges = Vec::with_capacity(g.targets.len() / 2 + k);
    for u in 0..g.node_count() {
        let cu = labels[u];
        if g.loops[u] > 0.0 {
            edges.push((cu, cu, g.loops[u]));
        }
        for (t, w) in g.neighbors(u).filter(|&(t, _)| (t as usize) > u) {
            edges.push((cu, labels[t as usize], w));
        }
    }
    WeightedGraph::new(k, &edges)
}
