//! Step 4 on a large graph: PageRank over the part of the graph the question touches.
//!
//! Over the whole graph, a question's PageRank costs work in proportion to the graph
//! (the restart and residual vectors, the rounds' scans, the ranking of every passage),
//! and every passage holds a share of the seed mass, a share that grows with the corpus.
//! With `hippo.ppr_nodes` set, past that many nodes the walk runs instead on the subgraph
//! reached breadth-first from the seeds (the entities linked to the question, then the
//! passages it matches best, by their relative score), up to that many nodes: the mass
//! stays near its seeds
//! (a step from a seed keeps `damping`, two steps `damping^2`, ...), so the passages it
//! ranks are the ones near them, and the work no longer grows with the graph. Passages
//! outside the subgraph are not ranked (they hold neither seed nor walk).

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::ppr::{personalized_pagerank, ranked_ppr, Csr, FusedRanking, DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE};

/// Passages (by relative score) that seed the subgraph besides the linked entities (and
/// that get a passage score): at the passage temperature, the ones below hold almost no
/// seed mass, and a longer list costs more to select than the walk itself.
pub(super) const PASSAGE_SEEDS: usize = 100;

/// What the bounded PageRank did, for `Retrieval::extra`.
pub(super) struct Bounded<T> {
    /// (passage, fused score), best first, for the passages of the subgraph.
    pub ranked: Vec<(T, f64)>,
    pub nodes: usize,
    pub pushes: usize,
}

/// How the walk runs and its passages are ranked.
pub(super) struct Walk {
    pub passage_weight: f64,
    pub damping: f64,
    pub share: f64,
    pub top_k: usize,
}

/// The seeds over the whole graph: on entities (node = entity number) and on passages.
pub(super) struct Seeds<'a> {
    pub entities: &'a BTreeMap<u32, f64>,
    /// Per chunk, its relative passage score.
    pub relative: &'a [f32],
    /// Chunks whose passage score was computed (the others hold the floor score).
    pub scored: &'a [u32],
}

thread_local! {
    /// Per-thread map from a node to its number in the subgraph (`u32::MAX`: out).
    static LOCAL: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Nodes reached breadth-first from `seeds` (in order), at most `budget`, sorted.
/// `mark` (at least as long as the graph, all `u32::MAX`) is left as it was found.
fn reach(g: &Csr, seeds: impl Iterator<Item = u32>, budget: usize, mark: &mut [u32]) -> Vec<u32> {
    let mut nodes: Vec<u32> = Vec::new();
    for s in seeds {
        if nodes.len() >= budget {
            break;
        }
        if (s as usize) < g.nodes() && mark[s as usize] == u32::MAX {
            mark[s as usize] = 0;
            nodes.push(s);
        }
    }
    // `nodes` is the breadth-first queue: node `at` is the next one to expand.
    let mut at = 0;
    'walk: while at < nodes.len() {
        let u = nodes[at];
        at += 1;
        for (v, _) in g.neighbors(u) {
            if nodes.len() >= budget {
                break 'walk;
            }
            if mark[v as usize] == u32::MAX {
                mark[v as usize] = 0;
                nodes.push(v);
            }
        }
    }
    for &v in &nodes {
        mark[v as usize] = u32::MAX;
    }
    nodes.sort_unstable();
    nodes
}

/// Rank the passages of the subgraph of `g` (entities `0..ne`, then chunks) around the
/// seeds, at most `budget` nodes, by hippo's fused score.
pub(super) fn bounded_ranking(g: &Csr, ne: usize, seeds: &Seeds, walk: &Walk, budget: usize) -> Bounded<u32> {
    let mut entities: Vec<(u32, f64)> = seeds.entities.iter().map(|(&e, &w)| (e, w)).collect();
    entities.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut passages: Vec<u32> = seeds.scored.to_vec();
    passages.sort_by(|&a, &b| seeds.relative[b as usize].total_cmp(&seeds.relative[a as usize]).then(a.cmp(&b)));
    passages.truncate(PASSAGE_SEEDS);
    let start = entities.iter().map(|&(e, _)| e).chain(passages.iter().map(|&c| ne as u32 + c));
    let (nodes, local) = LOCAL.with(|l| {
        let mut l = l.borrow_mut();
        if l.len() < g.nodes() {
            l.resize(g.nodes(), u32::MAX);
        }
        let nodes = reach(g, start, budget, &mut l);
        let local = g.induced(&nodes, &mut l);
        (nodes, local)
    });
    let first = nodes.partition_point(|&v| (v as usize) < ne);
    let entity_reset: Vec<f64> = nodes[..first].iter().map(|v| seeds.entities.get(v).copied().unwrap_or(0.0)).collect();
    let relative: Vec<f32> = nodes[first..].iter().map(|&v| seeds.relative[(v - ne as u32) as usize]).collect();
    let (ranked, pushes) = rank_local(&local, entity_reset, &relative, walk);
    let ranked = ranked.into_iter().map(|(i, s)| (nodes[first + i] - ne as u32, s)).collect();
    Bounded { ranked, nodes: nodes.len(), pushes }
}

/// Rank the passages of a subgraph (its entities first, seeded by `entity_reset`, then its
/// passages, with their relative scores) by hippo's fused score: (passage's place among
/// the subgraph's passages, score), best first, ties by place; and the pushes made.
pub(super) fn rank_local(
    local: &Csr,
    entity_reset: Vec<f64>,
    relative: &[f32],
    walk: &Walk,
) -> (Vec<(usize, f64)>, usize) {
    let first = entity_reset.len();
    let mut reset = entity_reset;
    reset.extend(relative.iter().map(|&r| walk.passage_weight * r as f64));
    let ranking = FusedRanking { first, relative, share: walk.share, top_k: walk.top_k };
    let push = ranked_ppr(local, &reset, walk.damping, &ranking);
    let sweeps;
    let mass: &[f64] = if push.exhausted {
        sweeps = personalized_pagerank(local, &reset, walk.damping, DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS);
        &sweeps.scores[first..]
    } else {
        &push.passages
    };
    let best = mass.iter().copied().fold(0.0f64, f64::max);
    let mut ranked: Vec<(usize, f64)> = relative
        .iter()
        .zip(mass)
        .enumerate()
        .map(|(i, (&r, &p))| {
            let p = if best > 0.0 { p / best } else { 0.0 };
            (i, (1.0 - walk.share) * r as f64 + walk.share * p)
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    (ranked, push.pushes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two entities (0, 1) and four passages (2..6): passages 2, 3 mention entity 0,
    /// passages 4, 5 entity 1; entities 0 and 1 are related.
    fn graph() -> Csr {
        Csr::from_edges(6, [(0, 2, 1.0), (0, 3, 1.0), (1, 4, 1.0), (1, 5, 1.0), (0, 1, 1.0)])
    }

    #[test]
    fn the_subgraph_is_what_the_seeds_reach_within_the_budget() {
        let g = graph();
        let mut local = vec![u32::MAX; 6];
        assert_eq!(reach(&g, [2].into_iter(), 100, &mut local), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(reach(&g, [2].into_iter(), 3, &mut local), vec![0, 1, 2]);
        assert_eq!(reach(&g, [5, 2].into_iter(), 2, &mut local), vec![2, 5], "seeds first");
        assert!(local.iter().all(|&x| x == u32::MAX), "the marks are left as found");
        let sub = g.induced(&[0, 2, 3], &mut local);
        assert_eq!((sub.nodes(), sub.edges()), (3, 2));
        assert!(local.iter().all(|&x| x == u32::MAX), "the map is left as found");
    }

    #[test]
    fn a_budget_holding_the_whole_graph_ranks_as_the_whole_graph() {
        let g = graph();
        let seeds = BTreeMap::from([(0u32, 1.0f64)]);
        let relative = [0.2f32, 1.0, 0.1, 0.05];
        let seeds = Seeds { entities: &seeds, relative: &relative, scored: &[0, 1, 2, 3] };
        let walk = Walk { passage_weight: 1.0, damping: 0.8, share: 0.7, top_k: 2 };
        let whole = bounded_ranking(&g, 2, &seeds, &walk, 100);
        assert_eq!(whole.nodes, 6);
        let order: Vec<u32> = whole.ranked.iter().map(|r| r.0).collect();
        assert_eq!(order[..2], [1, 0], "{:?}", whole.ranked);
        let small = bounded_ranking(&g, 2, &seeds, &walk, 3);
        assert!(small.ranked.len() < 4 && small.nodes == 3, "{:?}", small.ranked);
    }
}
