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

use std::collections::{HashMap, VecDeque};

/// Undirected weighted graph on nodes 0..n. Parallel edges add up; self-loops allowed.
#[derive(Debug, Clone, Default)]
pub struct WeightedGraph {
    /// CSR row starts (n + 1 entries) into `targets` / `weights`; rows sorted by target,
    /// one entry per neighbour, both directions of every edge; self-loops are kept apart.
    offsets: Vec<usize>,
    targets: Vec<u32>,
    weights: Vec<f64>,
    /// Self-loop weight per node.
    loops: Vec<f64>,
    /// Strength per node: neighbour weights plus twice the self-loop.
    strength: Vec<f64>,
    /// Sum of the edge weights, each edge (and self-loop) once.
    total: f64,
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
    fn neighbors(&self, v: usize) -> impl Iterator<Item = (u32, f64)> + '_ {
        let r = self.offsets[v]..self.offsets[v + 1];
        self.targets[r.clone()].iter().copied().zip(self.weights[r].iter().copied())
    }
}

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

/// A small seeded generator (splitmix64): enough for shuffles and weighted choices.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn shuffled(&mut self, n: usize) -> Vec<u32> {
        let mut v: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            v.swap(i, self.below(i + 1));
        }
        v
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

/// Fast local moving: visit nodes from a queue (all nodes in random order first), move
/// each to the community of best gain (an empty one included), and queue the neighbours
/// outside its new community when it moves.
fn move_nodes_fast(g: &WeightedGraph, part: &mut [u32], gamma: f64, rng: &mut Rng) {
    let n = g.node_count();
    let scale = gamma / (2.0 * g.total);
    let mut comm_w = vec![0.0; n];
    let mut comm_n = vec![0u32; n];
    for v in 0..n {
        comm_w[part[v] as usize] += g.strength[v];
        comm_n[part[v] as usize] += 1;
    }
    let mut empty: Vec<u32> = (0..n as u32).rev().filter(|&c| comm_n[c as usize] == 0).collect();
    let mut queue: VecDeque<u32> = rng.shuffled(n).into();
    let mut queued = vec![true; n];
    let mut nw = vec![0.0; n];
    let mut touched: Vec<u32> = Vec::new();
    while let Some(v) = queue.pop_front() {
        let v = v as usize;
        queued[v] = false;
        let old = part[v];
        let k = g.strength[v];
        for (t, w) in g.neighbors(v) {
            let c = part[t as usize];
            if nw[c as usize] == 0.0 {
                touched.push(c);
            }
            nw[c as usize] += w;
        }
        comm_w[old as usize] -= k;
        comm_n[old as usize] -= 1;
        if comm_n[old as usize] == 0 {
            empty.push(old);
        }
        let gain = |c: u32| nw[c as usize] - scale * k * comm_w[c as usize];
        let stay = gain(old);
        let (mut best, mut best_gain) = (old, stay);
        let others = touched.iter().copied().chain(empty.last().copied());
        for c in others.filter(|&c| c != old) {
            let x = gain(c);
            if x > best_gain || (x == best_gain && c < best && best != old) {
                best = c;
                best_gain = x;
            }
        }
        if best_gain <= stay + 1e-12 * k {
            best = old;
        }
        if comm_n[best as usize] == 0 {
            empty.pop(); // `best` is the top: the old community or the empty candidate
        }
        comm_w[best as usize] += k;
        comm_n[best as usize] += 1;
        part[v] = best;
        if best != old {
            for (t, _) in g.neighbors(v) {
                if part[t as usize] != best && !queued[t as usize] {
                    queued[t as usize] = true;
                    queue.push_back(t);
                }
            }
        }
        for &c in &touched {
            nw[c as usize] = 0.0;
        }
        touched.clear();
    }
}

/// Refinement: within every community of `part`, start from singletons and merge each
/// well-connected singleton, in random order, into a well-connected sub-community of
/// non-negative gain chosen with probability ∝ exp(gain / θ) (staying alone has gain 0).
fn refine(g: &WeightedGraph, part: &[u32], k: usize, gamma: f64, theta: f64, rng: &mut Rng) -> Vec<u32> {
    let n = g.node_count();
    let scale = gamma / (2.0 * g.total);
    let mut comm_w = vec![0.0; k];
    for v in 0..n {
        comm_w[part[v] as usize] += g.strength[v];
    }
    // Sub-community weight and its edge weight to the rest of its community.
    let mut sub_w = g.strength.clone();
    let mut ext = vec![0.0; n];
    for (v, e) in ext.iter_mut().enumerate() {
        *e = g.neighbors(v).filter(|&(t, _)| part[t as usize] == part[v]).map(|(_, w)| w).sum();
    }
    let mut refined: Vec<u32> = (0..n as u32).collect();
    let mut singleton = vec![true; n];
    let mut nw = vec![0.0; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut cand: Vec<(u32, f64)> = Vec::new();
    let well_connected = |ext: f64, w: f64, total: f64| ext + 1e-12 * w >= scale * w * (total - w);
    for v in rng.shuffled(n) {
        let v = v as usize;
        let c = part[v];
        let (kv, kc) = (g.strength[v], comm_w[c as usize]);
        if !singleton[v] || !well_connected(ext[v], kv, kc) {
            continue;
        }
        for (t, w) in g.neighbors(v).filter(|&(t, _)| part[t as usize] == c) {
            let r = refined[t as usize];
            if nw[r as usize] == 0.0 {
                touched.push(r);
            }
            nw[r as usize] += w;
        }
        cand.clear();
        cand.push((v as u32, 0.0));
        for &r in &touched {
            let (rw, re) = (sub_w[r as usize], ext[r as usize]);
            let gain = nw[r as usize] - scale * kv * rw;
            if gain >= 0.0 && well_connected(re, rw, kc) {
                cand.push((r, gain));
            }
        }
        let chosen = choose(&cand, theta, rng);
        if chosen as usize != v {
            let r = chosen as usize;
            refined[v] = chosen;
            sub_w[r] += kv;
            ext[r] += ext[v] - 2.0 * nw[r];
            singleton[r] = false;
            sub_w[v] = 0.0;
        }
        for &r in &touched {
            nw[r as usize] = 0.0;
        }
        touched.clear();
    }
    refined
}

/// Random choice among candidates (first = stay), probability ∝ exp(gain / θ); the
/// greedy best when θ is not a positive finite number.
fn choose(cand: &[(u32, f64)], theta: f64, rng: &mut Rng) -> u32 {
    let max = cand.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max);
    if !(theta.is_finite() && theta > 0.0) {
        return cand.iter().find(|c| c.1 == max).map_or(cand[0].0, |c| c.0);
    }
    let total: f64 = cand.iter().map(|c| ((c.1 - max) / theta).exp()).sum();
    let mut r = rng.unit() * total;
    for &(id, gain) in cand {
        r -= ((gain - max) / theta).exp();
        if r < 0.0 {
            return id;
        }
    }
    cand.iter().rev().find(|c| c.1 == max).map_or(cand[0].0, |c| c.0)
}

/// The graph whose nodes are the `k` groups of `labels`: edges between groups add up,
/// edges inside a group (and self-loops) become its self-loop.
fn aggregate(g: &WeightedGraph, labels: &[u32], k: usize) -> WeightedGraph {
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

/// Renumbers labels densely in order of first node; returns the number of labels.
fn renumber(labels: &mut [u32]) -> usize {
    let mut map: HashMap<u32, u32> = HashMap::new();
    for l in labels.iter_mut() {
        let next = map.len() as u32;
        *l = *map.entry(*l).or_insert(next);
    }
    map.len()
}

/// Splits every community into its connected components (a safeguard: Leiden's own
/// guarantee makes this a no-op but for rare fallback aggregations). Splitting never
/// lowers modularity. The result is dense, in order of first node.
fn split_disconnected(g: &WeightedGraph, part: &mut [u32]) {
    let n = g.node_count();
    let mut out = vec![u32::MAX; n];
    let mut next = 0u32;
    let mut stack = Vec::new();
    for s in 0..n {
        if out[s] != u32::MAX {
            continue;
        }
        out[s] = next;
        stack.push(s);
        while let Some(v) = stack.pop() {
            for (t, _) in g.neighbors(v) {
                let t = t as usize;
                if out[t] == u32::MAX && part[t] == part[s] {
                    out[t] = next;
                    stack.push(t);
                }
            }
        }
        next += 1;
    }
    part.copy_from_slice(&out);
}

/// Newman modularity (with resolution) of a partition: Σ_c [in_c / m − γ (K_c / 2m)²],
/// with in_c the weight of the edges inside c (self-loops once) and K_c the strength of c.
/// 0 for a graph without edges; NaN when `partition` has not one entry per node.
pub fn modularity(g: &WeightedGraph, partition: &[u32], resolution: f64) -> f64 {
    let n = g.node_count();
    if partition.len() != n {
        return f64::NAN;
    }
    if g.total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return 0.0;
    }
    let mut dense = partition.to_vec();
    let k = renumber(&mut dense);
    let mut strength = vec![0.0; k];
    let mut inside = 0.0;
    for u in 0..n {
        let c = dense[u];
        strength[c as usize] += g.strength[u];
        inside += g.loops[u];
        let same = |&(t, _): &(u32, f64)| (t as usize) > u && dense[t as usize] == c;
        inside += g.neighbors(u).filter(same).map(|(_, w)| w).sum::<f64>();
    }
    let m2 = 2.0 * g.total;
    inside / g.total - resolution * strength.iter().map(|s| (s / m2) * (s / m2)).sum::<f64>()
}
