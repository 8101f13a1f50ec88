//! Beam paths of `tog`: a start entity and hops (relation, entity reached, the hop's
//! pruning score), the candidate relations of the beam's tail entities, and the step
//! that extends the beam by the best of them.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use crate::graph::Graph;
use crate::paths::render_hop;

/// One hop: the relation followed (either direction), the entity it reaches and the
/// pruning score the relation got.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hop {
    pub rel: u32,
    pub to: u32,
    pub score: f32,
}

/// A path of the beam: a start entity and the hops taken from it. It never visits an
/// entity twice.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Path {
    pub start: u32,
    pub hops: Vec<Hop>,
}

impl Path {
    pub fn new(start: u32) -> Self {
        Path { start, hops: Vec::new() }
    }

    /// The entity the path ends on.
    pub fn tail(&self) -> u32 {
        self.hops.last().map_or(self.start, |h| h.to)
    }

    /// True when the path visits entity `e`.
    pub fn visits(&self, e: u32) -> bool {
        self.start == e || self.hops.iter().any(|h| h.to == e)
    }

    /// True when the path already follows relation `r`.
    pub fn uses(&self, r: u32) -> bool {
        self.hops.iter().any(|h| h.rel == r)
    }

    /// True when the path may go on through relation `r` to entity `to`.
    pub fn may_take(&self, r: u32, to: u32) -> bool {
        !self.visits(to) && !self.uses(r)
    }

    /// The path's score: the mean of its hops' scores (0 without hops). Every hop counts
    /// alike, so a strong first hop does not carry a useless second one, and paths of
    /// different lengths (a dead end kept beside longer paths) compare on one scale.
    pub fn score(&self) -> f32 {
        if self.hops.is_empty() {
            return 0.0;
        }
        self.hops.iter().map(|h| h.score).sum::<f32>() / self.hops.len() as f32
    }

    /// The relations followed, in order.
    pub fn relations(&self) -> Vec<u32> {
        self.hops.iter().map(|h| h.rel).collect()
    }

    /// Hops in walk order, each in the relation's true direction: `A -[r]-> B ; C -[s]-> B`.
    pub fn render(&self, g: &Graph) -> String {
        self.hops.iter().map(|h| render_hop(g, h.rel)).collect::<Vec<_>>().join(" ; ")
    }

    /// [`Path::render`] with the score, as shown in `paths` and `extra`.
    pub fn render_scored(&self, g: &Graph) -> String {
        format!("{} (score {:.3})", self.render(g), self.score())
    }

    fn extended(&self, hop: Hop) -> Path {
        let mut p = self.clone();
        p.hops.push(hop);
        p
    }
}

/// Best first: by score, then (ties) by the start entity's id, then the relations' ids.
pub(crate) fn cmp_paths(g: &Graph, a: &Path, b: &Path) -> Ordering {
    b.score()
        .total_cmp(&a.score())
        .then_with(|| g.entity_ids[a.start as usize].cmp(&g.entity_ids[b.start as usize]))
        .then_with(|| {
            let ids = |p: &Path| p.hops.iter().map(|h| g.relations[h.rel as usize].id.clone()).collect::<Vec<_>>();
            ids(a).cmp(&ids(b))
        })
}

/// A tail entity of the beam and the relations a path ending there may follow next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Frontier {
    pub tail: u32,
    /// Indices (into the beam) of the paths that end on `tail`.
    pub paths: Vec<usize>,
    /// (relation, entity at its other end), distinct, in the graph's neighbour order.
    pub cands: Vec<(u32, u32)>,
}

/// The distinct tail entities of `beam`, in beam order, each with the relations that at
/// least one path ending there may take (other end not on that path, relation not used
/// on it). Tails with no such relation are left out.
pub(crate) fn frontiers(g: &Graph, beam: &[Path]) -> Vec<Frontier> {
    let mut out: Vec<Frontier> = Vec::new();
    for (i, p) in beam.iter().enumerate() {
        let tail = p.tail();
        match out.iter_mut().find(|f| f.tail == tail) {
            Some(f) => f.paths.push(i),
            None => out.push(Frontier { tail, paths: vec![i], cands: Vec::new() }),
        }
    }
    for f in &mut out {
        let mut seen = HashSet::new();
        for nb in &g.neighbors[f.tail as usize] {
            let allowed = f.paths.iter().any(|&i| beam[i].may_take(nb.relation, nb.entity));
            if allowed && seen.insert(nb.relation) {
                f.cands.push((nb.relation, nb.entity));
            }
        }
    }
    out.retain(|f| !f.cands.is_empty());
    out
}

/// The next beam: every path extended by the best `retain` of its tail's scored
/// candidates (`scored`: tail -> (relation, other end, score)) that it may take, by score
/// then relation number; a path with hops whose tail offers nothing it may take stays as
/// it is (a dead end competing with the extended paths); a path without hops that cannot
/// go on is dropped. The best `width` paths are kept ([`cmp_paths`]). Also returns
/// whether any path was extended.
pub(crate) fn extend(
    g: &Graph,
    beam: &[Path],
    scored: &HashMap<u32, Vec<(u32, u32, f32)>>,
    retain: usize,
    width: usize,
) -> (Vec<Path>, bool) {
    let mut next: Vec<Path> = Vec::new();
    let mut grew = false;
    for p in beam {
        let mut options: Vec<(u32, u32, f32)> = scored
            .get(&p.tail())
            .map(|c| c.iter().copied().filter(|&(r, to, _)| p.may_take(r, to)).collect())
            .unwrap_or_default();
        options.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
        options.truncate(retain);
        if options.is_empty() {
            if !p.hops.is_empty() {
                next.push(p.clone());
            }
            continue;
        }
        grew = true;
        next.extend(options.into_iter().map(|(rel, to, score)| p.extended(Hop { rel, to, score })));
    }
    next.sort_by(|a, b| cmp_paths(g, a, b));
    next.truncate(width);
    (next, grew)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::graph::{EntityRow, RelationRow};
    use rhizome_core::GraphData;

    /// a - b - c - a (triangle) and b - d.
    fn graph() -> Graph {
        let entities = ["a", "b", "c", "d"]
            .iter()
            .map(|n| EntityRow { id: format!("e_{n}"), name: n.to_uppercase(), entity_type: "E".into() })
            .collect();
        let relations = [("a", "b"), ("b", "c"), ("c", "a"), ("b", "d")]
            .iter()
            .enumerate()
            .map(|(i, (s, t))| RelationRow {
                id: format!("r_{i}"),
                source_id: format!("e_{s}"),
                target_id: format!("e_{t}"),
                rel_type: format!("r{i}"),
                weight: 1.0,
            })
            .collect();
        Graph::build(GraphData { entities, relations, ..Default::default() })
    }

    #[test]
    fn paths_never_revisit_and_keep_the_best() {
        let g = graph();
        let a = g.entity("e_a").unwrap();
        let beam = vec![Path::new(a)];
        let f = frontiers(&g, &beam);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].cands.len(), 2);
        let scored: HashMap<u32, Vec<(u32, u32, f32)>> =
            [(a, f[0].cands.iter().map(|&(r, o)| (r, o, if r == 0 { 0.9 } else { 0.2 })).collect())].into();
        let (beam, grew) = extend(&g, &beam, &scored, 5, 1);
        assert!(grew);
        assert_eq!(beam.len(), 1);
        assert_eq!(beam[0].render(&g), "A -[r0]-> B");
        // From B: C and D, never back to A through r0.
        let f = frontiers(&g, &beam);
        let others: Vec<u32> = f[0].cands.iter().map(|c| c.1).collect();
        assert!(!others.contains(&a));
        assert_eq!(f[0].cands.len(), 2);
        // C -> A would revisit A: a path A-B-C has nowhere to go; it stays as a dead end.
        let b = g.entity("e_b").unwrap();
        let c = g.entity("e_c").unwrap();
        let scored: HashMap<u32, Vec<(u32, u32, f32)>> = [(b, vec![(1, c, 0.5)])].into();
        let (beam, _) = extend(&g, &beam, &scored, 5, 3);
        assert_eq!(beam[0].render(&g), "A -[r0]-> B ; B -[r1]-> C");
        assert!((beam[0].score() - 0.7).abs() < 1e-6);
        assert!(frontiers(&g, &beam).is_empty());
        let (same, grew) = extend(&g, &beam, &HashMap::new(), 5, 3);
        assert!(!grew);
        assert_eq!(same, beam);
    }
}
