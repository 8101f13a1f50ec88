//! Partitions of a graph: dense renumbering, splitting communities into connected
//! components, and Newman modularity.

use std::collections::HashMap;

use super::graph::WeightedGraph;

/// Renumbers labels densely in order of first node; returns the number of labels.
pub(super) fn renumber(labels: &mut [u32]) -> usize {
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
pub(super) fn split_disconnected(g: &WeightedGraph, part: &mut [u32]) {
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
