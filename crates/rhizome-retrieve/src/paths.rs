//! Graph walks shared by the graph methods: the edges of the ego graph around anchor
//! entities, and simple paths between anchors.
//!
//! Both treat RELATED edges as undirected for traversal but always render each hop in
//! the relation's true direction, so `B <-rel- A` reached from B still reads `A -[rel]-> B`.
//! Everything is deterministic: anchors in the order given, neighbours in the graph's
//! order (relations by id), ties broken by relation index.

use std::collections::{HashMap, HashSet, VecDeque};

use rhizome_core::{Result, StoreRead};

use crate::graph::Graph;

/// Hop distances kept as bytes; anything farther than the cutoff is `FAR`.
const FAR: u8 = u8::MAX;

/// Simple paths between two different anchors, each a sequence of relation indices into
/// [`Graph::relations`], at most `max_hops` relations long, shortest first, at most
/// `limit` of them.
///
/// Traversal is undirected. Each unordered pair of anchors is linked once per distinct
/// relation sequence: a path is listed from the anchor that comes first in `anchors`.
/// Intermediate nodes are never anchors (a walk through another anchor is the
/// concatenation of two shorter anchor-to-anchor paths, which are listed themselves).
/// Within one length, paths come by start anchor, then in neighbour order. Anchors that
/// are not entity numbers of `g` are ignored; repeated anchors count once.
pub(crate) fn simple_paths(g: &Graph, anchors: &[u32], max_hops: usize, limit: usize) -> Vec<Vec<u32>> {
    let n = g.entity_ids.len();
    let mut seen = HashSet::new();
    let anchors: Vec<u32> = anchors.iter().copied().filter(|&a| (a as usize) < n && seen.insert(a)).collect();
    let mut out = Vec::new();
    if anchors.len() < 2 || max_hops == 0 || limit == 0 {
        return out;
    }
    let max_hops = max_hops.min(FAR as usize - 1);
    let mut is_anchor = vec![false; n];
    for &a in &anchors {
        is_anchor[a as usize] = true;
    }
    // dist[i][v]: hops from v to the nearest anchor listed after anchors[i] (a lower bound
    // that prunes the search to walks that can still end on a target in time).
    let dist: Vec<Vec<u8>> = (0..anchors.len() - 1).map(|i| bfs_distances(g, &anchors[i + 1..], max_hops)).collect();
    for len in 1..=max_hops {
        for (i, &start) in anchors.iter().enumerate().take(anchors.len() - 1) {
            let targets = &anchors[i + 1..];
            let mut walk = Walk {
                g,
                is_anchor: &is_anchor,
                targets,
                dist: &dist[i],
                len,
                limit,
                rels: Vec::with_capacity(len),
                on_path: vec![start],
                out: &mut out,
            };
            walk.extend(start);
            if out.len() >= limit {
                return out;
            }
        }
    }
    out
}

/// Depth-first enumeration of simple paths of exactly `len` relations.
struct Walk<'a> {
    g: &'a Graph,
    is_anchor: &'a [bool],
    targets: &'a [u32],
    dist: &'a [u8],
    len: usize,
    limit: usize,
    rels: Vec<u32>,
    on_path: Vec<u32>,
    out: &'a mut Vec<Vec<u32>>,
}

impl Walk<'_> {
    fn extend(&mut self, node: u32) {
        let hops = self.rels.len();
        for nb in &self.g.neighbors[node as usize] {
            if self.out.len() >= self.limit {
                return;
            }
            let v = nb.entity;
            if v == node || self.on_path.contains(&v) {
                continue;
            }
            let left = self.len - hops - 1;
            if self.dist[v as usize] as usize > left {
                continue;
            }
            if left == 0 {
                if self.targets.contains(&v) {
                    let mut p = self.rels.clone();
                    p.push(nb.relation);
                    self.out.push(p);
                }
                continue;
            }
            if self.is_anchor[v as usize] {
                continue;
            }
            self.rels.push(nb.relation);
            self.on_path.push(v);
            self.extend(v);
            self.rels.pop();
            self.on_path.pop();
        }
    }
}

/// Undirected hop distances from the nearest of `sources`, up to `cutoff` (farther: FAR).
fn bfs_distances(g: &Graph, sources: &[u32], cutoff: usize) -> Vec<u8> {
    let mut dist = vec![FAR; g.entity_ids.len()];
    let mut queue = VecDeque::new();
    for &s in sources {
        if dist[s as usize] != 0 {
            dist[s as usize] = 0;
            queue.push_back(s);
        }
    }
    while let Some(u) = queue.pop_front() {
        let d = dist[u as usize];
        if d as usize >= cutoff {
            continue;
        }
        for nb in &g.neighbors[u as usize] {
            if dist[nb.entity as usize] == FAR {
                dist[nb.entity as usize] = d + 1;
                queue.push_back(nb.entity);
            }
        }
    }
    dist
}

/// The entities a path visits, in order (one more than its relations). For a one-hop
/// path the relation's source comes first. Empty for an empty path.
pub(crate) fn path_nodes(g: &Graph, path: &[u32]) -> Vec<u32> {
    let Some(&first) = path.first() else { return Vec::new() };
    let r0 = &g.relations[first as usize];
    // Start at the end of the first relation that the second one does not touch.
    let mut cur = match path.get(1).map(|&r| &g.relations[r as usize]) {
        Some(r1) if r1.source == r0.source || r1.target == r0.source => r0.target,
        _ => r0.source,
    };
    let mut nodes = vec![cur];
    for &r in path {
        let r = &g.relations[r as usize];
        cur = if r.source == cur { r.target } else { r.source };
        nodes.push(cur);
    }
    nodes
}

/// One hop in its true direction: `A -[rel]-> B`.
pub(crate) fn render_hop(g: &Graph, r: u32) -> String {
    let r = &g.relations[r as usize];
    format!("{} -[{}]-> {}", g.entity_names[r.source as usize], r.rel_type, g.entity_names[r.target as usize])
}

/// A path as its hops in walk order, each in the relation's true direction:
/// `A -[rel]-> B ; B -[rel2]-> C` (or `A -[rel]-> B ; C -[rel2]-> B` when the second
/// relation points back).
pub(crate) fn render_path(g: &Graph, path: &[u32]) -> String {
    path.iter().map(|&r| render_hop(g, r)).collect::<Vec<_>>().join(" ; ")
}

/// Relations of the ego graph of radius `depth` around `anchors`, at most `limit`:
/// breadth first from the anchors (all anchors' own relations, in anchor order, before
/// those of their neighbours), each relation once.
pub(crate) fn ego_relations(g: &Graph, anchors: &[u32], depth: usize, limit: usize) -> Vec<u32> {
    let n = g.entity_ids.len();
    let mut out = Vec::new();
    let mut taken = HashSet::new();
    let mut visited = vec![false; n];
    let mut frontier: Vec<u32> = Vec::new();
    for &a in anchors {
        if (a as usize) < n && !visited[a as usize] {
            visited[a as usize] = true;
            frontier.push(a);
        }
    }
    for _ in 0..depth {
        let mut next = Vec::new();
        for &u in &frontier {
            for nb in &g.neighbors[u as usize] {
                if out.len() >= limit {
                    return out;
                }
                if taken.insert(nb.relation) {
                    out.push(nb.relation);
                }
                if !visited[nb.entity as usize] {
                    visited[nb.entity as usize] = true;
                    next.push(nb.entity);
                }
            }
        }
        frontier = next;
    }
    out
}

/// The chunk that best supports relation `r`: of the chunks mentioning both of its ends,
/// the one where the rarer end occurs most, then the lowest chunk number. None when no
/// chunk mentions both (an edge-list import has no chunks).
pub(crate) fn relation_chunk(g: &Graph, r: u32) -> Option<u32> {
    let rel = g.relations.get(r as usize)?;
    let a = &g.entity_chunks[rel.source as usize];
    let b = &g.entity_chunks[rel.target as usize];
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    small
        .iter()
        .filter_map(|&(c, n)| large.iter().find(|x| x.0 == c).map(|&(_, m)| (c, n.min(m))))
        .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
        .map(|(c, _)| c)
}

/// Document source and title of `chunks` (graph chunk numbers), in one store call.
pub(crate) fn chunk_sources(
    store: &dyn StoreRead,
    g: &Graph,
    chunks: &[u32],
) -> Result<HashMap<u32, (String, String)>> {
    let mut ids: Vec<String> = chunks.iter().map(|&c| g.chunk_ids[c as usize].clone()).collect();
    ids.sort();
    ids.dedup();
    let mut out = HashMap::new();
    for c in store.chunks(&ids)? {
        if let Some(n) = g.chunk(&c.chunk.id) {
            out.insert(n, (c.doc_source, c.doc_title));
        }
    }
    Ok(out)
}

/// Source and title for each of `rels`: the document of its supporting chunk, or the
/// relation id (and no title) when no chunk supports it.
pub(crate) fn relation_sources(store: &dyn StoreRead, g: &Graph, rels: &[u32]) -> Result<Vec<(String, String)>> {
    let chunks: Vec<Option<u32>> = rels.iter().map(|&r| relation_chunk(g, r)).collect();
    let known: Vec<u32> = chunks.iter().flatten().copied().collect();
    let docs = chunk_sources(store, g, &known)?;
    Ok(rels
        .iter()
        .zip(chunks)
        .map(|(&r, c)| {
            c.and_then(|c| docs.get(&c).cloned()).unwrap_or_else(|| (g.relations[r as usize].id.clone(), String::new()))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::graph::{EntityRow, RelationRow};
    use rhizome_core::GraphData;

    /// Entities `a`..; relations (source, type, target) given by entity letter.
    fn graph(n: usize, rels: &[(char, &str, char)]) -> Graph {
        let name = |c: char| c.to_string();
        let entities = (0..n)
            .map(|i| {
                let c = (b'a' + i as u8) as char;
                EntityRow { id: format!("e_{c}"), name: name(c).to_uppercase(), entity_type: "E".into() }
            })
            .collect();
        let relations = rels
            .iter()
            .enumerate()
            .map(|(i, (s, t, o))| RelationRow {
                id: format!("r_{i:02}"),
                source_id: format!("e_{s}"),
                target_id: format!("e_{o}"),
                rel_type: t.to_string(),
                weight: 1.0,
            })
            .collect();
        Graph::build(GraphData { entities, relations, ..Default::default() })
    }

    fn e(g: &Graph, c: char) -> u32 {
        g.entity(&format!("e_{c}")).unwrap()
    }

    #[test]
    fn paths_are_shortest_first_and_rendered_in_true_direction() {
        // a -> b -> c, c <- d, a -> d; anchors a and c.
        let g = graph(4, &[('a', "x", 'b'), ('b', "y", 'c'), ('d', "z", 'c'), ('a', "w", 'd'), ('a', "v", 'c')]);
        let anchors = [e(&g, 'a'), e(&g, 'c')];
        let p = simple_paths(&g, &anchors, 3, 10);
        let r: Vec<String> = p.iter().map(|p| render_path(&g, p)).collect();
        assert_eq!(r, ["A -[v]-> C", "A -[x]-> B ; B -[y]-> C", "A -[w]-> D ; D -[z]-> C"]);
        assert_eq!(path_nodes(&g, &p[2]), vec![e(&g, 'a'), e(&g, 'd'), e(&g, 'c')]);
        assert_eq!(simple_paths(&g, &anchors, 1, 10).len(), 1);
        assert_eq!(simple_paths(&g, &anchors, 3, 2).len(), 2);
        // Reversed anchor order: same relations, walked from c.
        let back = simple_paths(&g, &[e(&g, 'c'), e(&g, 'a')], 3, 10);
        assert_eq!(render_path(&g, &back[1]), "B -[y]-> C ; A -[x]-> B");
        assert_eq!(path_nodes(&g, &back[1]), vec![e(&g, 'c'), e(&g, 'b'), e(&g, 'a')]);
    }

    #[test]
    fn no_paths_through_anchors_nor_for_one_anchor() {
        // a - b - c with all three anchors: only the two direct links.
        let g = graph(3, &[('a', "x", 'b'), ('b', "y", 'c')]);
        let all = [e(&g, 'a'), e(&g, 'b'), e(&g, 'c'), e(&g, 'a'), 99];
        let p = simple_paths(&g, &all, 3, 10);
        assert_eq!(p, vec![vec![0], vec![1]]);
        assert!(simple_paths(&g, &[e(&g, 'a')], 3, 10).is_empty());
        assert!(simple_paths(&g, &all, 0, 10).is_empty());
    }

    #[test]
    fn ego_relations_breadth_first() {
        let g = graph(4, &[('a', "x", 'b'), ('b', "y", 'c'), ('c', "z", 'd')]);
        assert_eq!(ego_relations(&g, &[e(&g, 'a')], 1, 10), vec![0]);
        assert_eq!(ego_relations(&g, &[e(&g, 'a')], 2, 10), vec![0, 1]);
        assert_eq!(ego_relations(&g, &[e(&g, 'b'), e(&g, 'd')], 1, 10), vec![0, 1, 2]);
        assert_eq!(ego_relations(&g, &[e(&g, 'b'), e(&g, 'd')], 1, 2), vec![0, 1]);
    }
}
