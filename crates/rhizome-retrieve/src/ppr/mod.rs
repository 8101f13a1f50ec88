//! Personalized PageRank by successive over-relaxation (Gauss-Seidel sweeps, each update
//! pushed a little past its Gauss-Seidel value) over an undirected weighted graph held in
//! compressed sparse row form ([`Csr`]).
//!
//! The walk follows an edge with probability `damping` (chosen in proportion to edge
//! weight) and jumps back to the reset distribution otherwise. A node without edges
//! (dangling) sends its mass back along the reset distribution, as igraph's PRPACK solver
//! does for personalized PageRank, so the scores always sum to 1.
//!
//! Speed (retrieval runs one PPR per question over ~20k nodes and ~50k edges): scores and
//! transition probabilities are `f32` (ranking needs ~1e-6, f32 carries ~1e-7 relative),
//! which halves the bytes a sweep reads; and over-relaxation ([`OVER_RELAXATION`]) cuts
//! the sweeps needed on the MuSiQue graph from 40 to 16 at the same tolerance.
//!
//! Retrieval first runs [`push`]: forward push from the seeds, stopped once the best
//! passages are certified, which touches only the nodes near the seeds; the sweeps
//! remain its fallback, and [`gauss_seidel_f64`] the exact reference.

pub mod push;

pub use push::{ranked_ppr, ranked_ppr_between, FusedRanking, PushPpr};

/// An undirected weighted graph: for each node, its neighbours and edge weights in one
/// flat array (`targets[offsets[v]..offsets[v + 1]]`). Each undirected edge is stored in
/// both rows; parallel edges are merged by summing their weights.
#[derive(Debug, Clone, Default)]
pub struct Csr {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    weights: Vec<f32>,
    /// Per entry of row `v` for neighbour `u`: `weight(v, u) / strength(u)`, the
    /// probability that a walker at `u` steps to `v`.
    step: Vec<f32>,
    /// Per entry of row `v` for neighbour `u`: `weight(v, u) / strength(v)`, the
    /// probability that a walker at `v` steps to `u` (what forward push spreads).
    out_step: Vec<f32>,
    /// Per node: the sum of its edge weights.
    strength: Vec<f32>,
    /// Nodes without edges (their mass goes back along the reset distribution).
    dangling: Vec<u32>,
}

impl Csr {
    /// A graph of `n` nodes from undirected edges `(a, b, weight)`. Edges with an end out
    /// of range, self-loops, and weights that are not finite and positive are ignored;
    /// parallel edges (either orientation) are merged by summing their weights.
    pub fn from_edges(n: usize, edges: impl IntoIterator<Item = (u32, u32, f32)>) -> Csr {
        let mut directed: Vec<(u32, u32, f32)> = Vec::new();
        for (a, b, w) in edges {
            if a == b || a as usize >= n || b as usize >= n || !w.is_finite() || w <= 0.0 {
                continue;
            }
            directed.push((a, b, w));
            directed.push((b, a, w));
        }
        // Stable: repeated edges are summed in the order given, so a graph built from the
        // same edges in the same order sums to the same bits whatever else it holds.
        directed.sort_by_key(|x| (x.0, x.1));
        let mut offsets = vec![0u32; n + 1];
        let mut targets: Vec<u32> = Vec::with_capacity(directed.len());
        let mut weights: Vec<f32> = Vec::with_capacity(directed.len());
        let mut last: Option<(u32, u32)> = None;
        for (a, b, w) in directed {
            if last == Some((a, b)) {
                if let Some(x) = weights.last_mut() {
                    *x += w;
                }
                continue;
            }
            last = Some((a, b));
            targets.push(b);
            weights.push(w);
            offsets[a as usize + 1] += 1;
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        Csr::from_rows(offsets, targets, weights)
    }

    /// The subgraph induced by `nodes` (sorted, distinct, in range): local node `i` is
    /// `nodes[i]`, with the edges between kept nodes and their weights. Edges to nodes
    /// left out are dropped, so a walk is kept inside. `local` maps a node to its local
    /// number (`u32::MAX`: left out), at least as long as the graph: it is left as it was
    /// found. Linear in the kept nodes' edges, whatever the size of the graph.
    pub fn induced(&self, nodes: &[u32], local: &mut [u32]) -> Csr {
        for (i, &v) in nodes.iter().enumerate() {
            local[v as usize] = i as u32;
        }
        // Local numbers follow global ones, so each kept row stays sorted by target.
        let mut offsets = Vec::with_capacity(nodes.len() + 1);
        offsets.push(0u32);
        let (mut targets, mut weights) = (Vec::new(), Vec::new());
        for &v in nodes {
            for (u, w) in self.neighbors(v) {
                let j = local[u as usize];
                if j != u32::MAX {
                    targets.push(j);
                    weights.push(w);
                }
            }
            offsets.push(targets.len() as u32);
        }
        for &v in nodes {
            local[v as usize] = u32::MAX;
        }
        Csr::from_rows(offsets, targets, weights)
    }

    /// A graph from its rows (each undirected edge in both rows, rows sorted by target,
    /// no repeats), with the transition probabilities derived from the weights.
    fn from_rows(offsets: Vec<u32>, targets: Vec<u32>, weights: Vec<f32>) -> Csr {
        let n = offsets.len().saturating_sub(1);
        let strength: Vec<f64> = (0..n)
            .map(|v| weights[offsets[v] as usize..offsets[v + 1] as usize].iter().map(|&w| w as f64).sum())
            .collect();
        let step = targets.iter().zip(&weights).map(|(&u, &w)| (w as f64 / strength[u as usize]) as f32).collect();
        let mut out_step = Vec::with_capacity(weights.len());
        for v in 0..n {
            let (lo, hi) = (offsets[v] as usize, offsets[v + 1] as usize);
            out_step.extend(weights[lo..hi].iter().map(|&w| (w as f64 / strength[v]) as f32));
        }
        let dangling = (0..n as u32).filter(|&v| strength[v as usize] <= 0.0).collect();
        let strength = strength.into_iter().map(|x| x as f32).collect();
        Csr { offsets, targets, weights, step, out_step, strength, dangling }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Sum of the weights of `v`'s edges (0 for an unknown node).
    pub fn strength(&self, v: u32) -> f64 {
        self.neighbors(v).map(|(_, w)| w as f64).sum()
    }

    /// Number of undirected edges (after merging).
    pub fn edges(&self) -> usize {
        self.targets.len() / 2
    }

    /// Neighbours of `v` with the (merged) edge weights.
    pub fn neighbors(&self, v: u32) -> impl Iterator<Item = (u32, f32)> + '_ {
        let (lo, hi) = match (self.offsets.get(v as usize), self.offsets.get(v as usize + 1)) {
            (Some(&lo), Some(&hi)) => (lo as usize, hi as usize),
            _ => (0, 0),
        };
        self.targets[lo..hi].iter().copied().zip(self.weights[lo..hi].iter().copied())
    }
}

/// Scores of a personalized PageRank run.
#[derive(Debug, Clone, PartialEq)]
pub struct Ppr {
    /// Stationary probability per node (sums to 1 unless the reset vector was all zero,
    /// in which case every score is 0).
    pub scores: Vec<f64>,
    /// Sweeps run.
    pub iterations: usize,
    /// L1 change of the last sweep.
    pub residual: f64,
}

/// Convergence tolerance (L1 change of one sweep) used by retrieval. Passage scores are
/// compared after dividing by the best one (~1e-2 of the mass), so 1e-6 leaves ranking
/// untouched: MuSiQue Recall@2/@5 are identical at 1e-6 and 1e-8 (29 vs 40 plain
/// Gauss-Seidel sweeps).
pub const DEFAULT_TOLERANCE: f64 = 1e-6;
/// Sweep cap used by retrieval (the MuSiQue graph needs 16-18 at damping 0.8).
pub const DEFAULT_MAX_ITERATIONS: usize = 200;
/// Over-relaxation factor: each sweep moves a node `OVER_RELAXATION` times the
/// Gauss-Seidel step. The system is similar to a symmetric positive definite one (the
/// graph is undirected), so any factor in (0, 2) converges; measured on the MuSiQue
/// OpenIE graph at damping 0.8, tolerance 1e-6, median sweeps per question: 1.0 -> 29,
/// 1.2 -> 19, 1.3 -> 16, 1.4 -> 21, 1.5 -> 27, 1.7 -> 51 (Recall@2/@5 unchanged).
pub const OVER_RELAXATION: f32 = 1.3;

/// Personalized PageRank of `g` with restart distribution `reset` (one non-negative
/// weight per node, normalised here; negative and non-finite entries count as 0).
/// `damping` is the probability of following an edge (clamped to [0, 1)). Sweeps until
/// the L1 change of a sweep drops below `tol` or `max_iter` sweeps have run.
pub fn personalized_pagerank(g: &Csr, reset: &[f64], damping: f64, tol: f64, max_iter: usize) -> Ppr {
    let Some((s, d)) = restart(g.nodes(), reset, damping) else {
        return Ppr { scores: vec![0.0; g.nodes()], iterations: 0, residual: 0.0 };
    };
    let s: Vec<f32> = s.into_iter().map(|x| x as f32).collect();
    let d = d as f32;
    // Sweeps update each node in place from its neighbours' newest values (Gauss-Seidel:
    // same fixed point as power iteration, in fewer sweeps), over-relaxed; the dangling
    // mass is taken from the last sweep.
    let mut x = s.clone();
    let (mut iterations, mut residual) = (0, f64::INFINITY);
    let (keep, damped) = (1.0 - d, d);
    while iterations < max_iter {
        let dangling: f32 = g.dangling.iter().map(|&u| x[u as usize]).sum();
        // The reset term of node v is `keep * s[v] + damped * dangling * s[v]`.
        let reset_scale = keep + damped * dangling;
        let mut sweep_residual = 0.0f32;
        for (v, (bounds, &sv)) in g.offsets.windows(2).zip(&s).enumerate() {
            let (lo, hi) = (bounds[0] as usize, bounds[1] as usize);
            let acc = gather(&g.targets[lo..hi], &g.step[lo..hi], &x);
            let gauss_seidel = reset_scale * sv + damped * acc;
            let delta = OVER_RELAXATION * (gauss_seidel - x[v]);
            sweep_residual += delta.abs();
            x[v] += delta;
        }
        residual = sweep_residual as f64;
        iterations += 1;
        if residual < tol {
            break;
        }
    }
    Ppr { scores: x.into_iter().map(f64::from).collect(), iterations, residual }
}

/// The restart distribution of both solvers, `reset` normalised over `n` nodes (negative
/// and non-finite entries count as 0), and `damping` clamped to [0, 1); `None` when no
/// reset mass is left.
fn restart(n: usize, reset: &[f64], damping: f64) -> Option<(Vec<f64>, f64)> {
    let mut s: Vec<f64> =
        (0..n).map(|v| reset.get(v).copied().filter(|x| x.is_finite() && *x > 0.0).unwrap_or(0.0)).collect();
    let total: f64 = s.iter().sum();
    if total <= 0.0 || !total.is_finite() {
        return None;
    }
    s.iter_mut().for_each(|x| *x /= total);
    let d = if damping.is_finite() { damping.clamp(0.0, 0.999_999) } else { 0.0 };
    Some((s, d))
}

/// `sum(step[i] * x[targets[i]])` with two partial sums, so that consecutive products do
/// not wait on one another's addition (the sweep is bound by that latency, not by memory).
#[inline]
fn gather(targets: &[u32], step: &[f32], x: &[f32]) -> f32 {
    let (mut a, mut b) = (0.0f32, 0.0f32);
    let mut t = targets.chunks_exact(2);
    let mut p = step.chunks_exact(2);
    for (t2, p2) in (&mut t).zip(&mut p) {
        a += p2[0] * x[t2[0] as usize];
        b += p2[1] * x[t2[1] as usize];
    }
    if let (Some(&u), Some(&w)) = (t.remainder().first(), p.remainder().first()) {
        a += w * x[u as usize];
    }
    a + b
}

/// Plain Gauss-Seidel sweeps in `f64` (same fixed point): the reference that tests compare
/// [`personalized_pagerank`] with, and that `rhizome bench retrieval` times beside it.
pub fn gauss_seidel_f64(g: &Csr, reset: &[f64], damping: f64, tol: f64, max_iter: usize) -> Ppr {
    let Some((s, d)) = restart(g.nodes(), reset, damping) else {
        return Ppr { scores: vec![0.0; g.nodes()], iterations: 0, residual: 0.0 };
    };
    let mut x = s.clone();
    let (mut iterations, mut residual) = (0, f64::INFINITY);
    while iterations < max_iter {
        let dangling: f64 = g.dangling.iter().map(|&u| x[u as usize]).sum();
        residual = 0.0;
        for (v, (bounds, &sv)) in g.offsets.windows(2).zip(&s).enumerate() {
            let (lo, hi) = (bounds[0] as usize, bounds[1] as usize);
            let mut acc = 0.0f64;
            for (&u, &p) in g.targets[lo..hi].iter().zip(&g.step[lo..hi]) {
                acc += p as f64 * x[u as usize];
            }
            let value = (1.0 - d) * sv + d * (acc + dangling * sv);
            residual += (value - x[v]).abs();
            x[v] = value;
        }
        iterations += 1;
        if residual < tol {
            break;
        }
    }
    Ppr { scores: x, iterations, residual }
}
