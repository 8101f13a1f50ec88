//! The two node-level phases of a Leiden level: fast local moving, and refinement of every
//! community into well-connected sub-communities.

use std::collections::VecDeque;

use super::graph::WeightedGraph;
use super::rng::Rng;

/// Fast local moving: visit nodes from a queue (all nodes in random order first), move
/// each to the community of best gain (an empty one included), and queue the neighbours
/// outside its new community when it moves.
pub(super) fn move_nodes_fast(g: &WeightedGraph, part: &mut [u32], gamma: f64, rng: &mut Rng) {
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
pub(super) fn refine(g: &WeightedGraph, part: &[u32], k: usize, gamma: f64, theta: f64, rng: &mut Rng) -> Vec<u32> {
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
