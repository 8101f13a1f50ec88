//! `rhizome bench communities`: Leiden against the Louvain baseline on the index's entity
//! graph, and hierarchical Leiden, timed on the same graph in the same run.
//!
//! The entity graph is the one `rhizome index` clusters
//! ([`rhizome_community::build::entity_edges`]): one node per entity (in id order), the
//! RELATED weights between two entities summed over both directions, self-relations left
//! out (a self-loop says nothing about which entities belong together).

use std::time::Instant;

use rhizome_community::hierarchy::hierarchical_leiden;
use rhizome_community::leiden::{leiden, modularity, LeidenOptions, WeightedGraph};
use serde_json::json;

use crate::common::{print_json, Bench, Result};

use rhizome_community::build::entity_edges;

/// Communities whose nodes do not induce a connected subgraph (Louvain can make them,
/// Leiden guarantees none).
fn disconnected(n: usize, edges: &[(u32, u32, f64)], partition: &[u32]) -> usize {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for &(a, b, _) in edges.iter().filter(|e| partition[e.0 as usize] == partition[e.1 as usize]) {
        let (ra, rb) = (root(&mut parent, a as usize), root(&mut parent, b as usize));
        parent[ra.max(rb)] = ra.min(rb);
    }
    let mut pieces = vec![0usize; count(partition)];
    (0..n).filter(|&v| root(&mut parent, v) == v).for_each(|v| pieces[partition[v] as usize] += 1);
    pieces.iter().filter(|&&p| p > 1).count()
}

/// Median of `repeat` timed runs of `f` (ms), and the last result.
fn timed<T>(repeat: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut ms = Vec::with_capacity(repeat);
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        last = Some(f());
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    let mid = ms.len() / 2;
    let median = if ms.len() % 2 == 1 { ms[mid] } else { (ms[mid - 1] + ms[mid]) / 2.0 };
    (median, last.expect("at least one run"))
}

fn count(partition: &[u32]) -> usize {
    partition.iter().max().map_or(0, |&m| m as usize + 1)
}

pub fn communities(bench: Bench, repeat: usize, max_cluster_size: usize) -> Result<()> {
    let engine = bench.reading_engine()?;
    let t = Instant::now();
    let data = engine.reader()?.graph_data()?;
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let edges = entity_edges(&data);
    let g = WeightedGraph::new(data.entities.len(), &edges);
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let n = g.node_count();
    let mut degree = vec![0u32; n];
    for &(a, b, _) in &edges {
        degree[a as usize] += 1;
        degree[b as usize] += 1;
    }
    let isolated = degree.iter().filter(|&&d| d == 0).count();

    let leiden_opts = LeidenOptions::default();
    let louvain_opts = LeidenOptions { refine: false, ..LeidenOptions::default() };
    let (leiden_ms, p_leiden) = timed(repeat, || leiden(&g, &leiden_opts));
    let (louvain_ms, p_louvain) = timed(repeat, || leiden(&g, &louvain_opts));
    let (hier_ms, clusters) = timed(repeat, || hierarchical_leiden(&g, max_cluster_size, &leiden_opts));
    let q_leiden = modularity(&g, &p_leiden, leiden_opts.resolution);
    let q_louvain = modularity(&g, &p_louvain, louvain_opts.resolution);
    // Leiden repeats whole iterations while modularity improves, Louvain usually stops
    // after two: one iteration of each compares the passes themselves.
    let once = |o: &LeidenOptions| LeidenOptions { max_iterations: 1, ..o.clone() };
    let (leiden1_ms, p_leiden1) = timed(repeat, || leiden(&g, &once(&leiden_opts)));
    let (louvain1_ms, p_louvain1) = timed(repeat, || leiden(&g, &once(&louvain_opts)));
    let (q_leiden1, q_louvain1) = (modularity(&g, &p_leiden1, 1.0), modularity(&g, &p_louvain1, 1.0));
    // Communities of more than one node (singletons are mostly isolated entities).
    let non_singleton = |p: &[u32]| {
        let mut sizes = vec![0usize; count(p)];
        p.iter().for_each(|&c| sizes[c as usize] += 1);
        sizes.iter().filter(|&&s| s > 1).count()
    };

    let levels = clusters.iter().map(|c| c.level as usize + 1).max().unwrap_or(0);
    let mut per_level = vec![0usize; levels];
    clusters.iter().for_each(|c| per_level[c.level as usize] += 1);
    let leaves: Vec<_> = clusters.iter().filter(|c| c.children.is_empty()).collect();
    let largest_leaf = leaves.iter().map(|c| c.nodes.len()).max().unwrap_or(0);
    let oversized = leaves.iter().filter(|c| c.nodes.len() > max_cluster_size).count();

    let out = json!({
        "index": bench.store,
        "graph": {"nodes": n, "edges": edges.len(), "isolated_nodes": isolated,
                  "total_weight": g.total_weight(), "load_ms": load_ms, "build_ms": build_ms},
        "repeat": repeat.max(1),
        "leiden": {"median_ms": leiden_ms, "modularity": q_leiden, "communities": count(&p_leiden),
                   "communities_over_one_node": non_singleton(&p_leiden),
                   "disconnected_communities": disconnected(n, &edges, &p_leiden)},
        "louvain": {"median_ms": louvain_ms, "modularity": q_louvain, "communities": count(&p_louvain),
                    "communities_over_one_node": non_singleton(&p_louvain),
                    "disconnected_communities": disconnected(n, &edges, &p_louvain)},
        "leiden_vs_louvain": {"time_ratio": leiden_ms / louvain_ms.max(1e-9),
                              "modularity_ratio": q_leiden / q_louvain},
        "one_iteration": {"leiden_ms": leiden1_ms, "leiden_modularity": q_leiden1,
                          "louvain_ms": louvain1_ms, "louvain_modularity": q_louvain1,
                          "time_ratio": leiden1_ms / louvain1_ms.max(1e-9),
                          "modularity_ratio": q_leiden1 / q_louvain1},
        "hierarchical": {"median_ms": hier_ms, "max_cluster_size": max_cluster_size,
                         "levels": levels, "clusters_per_level": per_level, "clusters": clusters.len(),
                         "leaves": leaves.len(), "largest_leaf": largest_leaf,
                         "leaves_over_max_unsplittable": oversized},
    });
    if bench.json {
        return print_json(&out);
    }
    println!(
        "entity graph: {n} nodes ({isolated} isolated), {} edges; loaded in {load_ms:.0} ms, \
         built in {build_ms:.0} ms",
        edges.len()
    );
    println!("median of {} runs each", repeat.max(1));
    println!(
        "leiden:  {leiden_ms:9.1} ms  modularity {q_leiden:.4}  {} communities ({} of 2+ nodes, \
         {} disconnected)",
        count(&p_leiden),
        non_singleton(&p_leiden),
        disconnected(n, &edges, &p_leiden)
    );
    println!(
        "louvain: {louvain_ms:9.1} ms  modularity {q_louvain:.4}  {} communities ({} of 2+ nodes, \
         {} disconnected)",
        count(&p_louvain),
        non_singleton(&p_louvain),
        disconnected(n, &edges, &p_louvain)
    );
    println!(
        "leiden / louvain: time {:.2}x, modularity {:.4}x",
        leiden_ms / louvain_ms.max(1e-9),
        q_leiden / q_louvain
    );
    println!(
        "one iteration each: leiden {leiden1_ms:.1} ms (modularity {q_leiden1:.4}), louvain \
         {louvain1_ms:.1} ms ({q_louvain1:.4}): time {:.2}x, modularity {:.4}x",
        leiden1_ms / louvain1_ms.max(1e-9),
        q_leiden1 / q_louvain1
    );
    println!(
        "hierarchical (max cluster size {max_cluster_size}): {hier_ms:.1} ms, {levels} levels, \
         clusters per level {per_level:?}, {} leaves, largest leaf {largest_leaf} \
         ({oversized} leaves over the limit that Leiden would not split)",
        leaves.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::{EntityRow, GraphData, RelationRow};

    fn entity(id: &str) -> EntityRow {
        EntityRow { id: id.into(), name: id.into(), entity_type: "T".into() }
    }

    fn rel(s: &str, t: &str, weight: f32) -> RelationRow {
        let id = format!("{s}{t}{weight}");
        RelationRow { id, source_id: s.into(), target_id: t.into(), rel_type: "R".into(), weight }
    }

    #[test]
    fn edges_sum_both_directions_and_skip_self_loops() {
        let data = GraphData {
            entities: vec![entity("a"), entity("b"), entity("c")],
            relations: vec![
                rel("a", "b", 2.0),
                rel("b", "a", 0.5),
                rel("b", "c", 0.0),  // counts as 1
                rel("c", "b", -3.0), // counts as 1
                rel("c", "c", 4.0),  // self-loop: left out
                rel("a", "zz", 1.0), // unknown entity: left out
            ],
            ..GraphData::default()
        };
        assert_eq!(entity_edges(&data), vec![(0, 1, 2.5), (1, 2, 2.0)]);
        let g = WeightedGraph::new(3, &entity_edges(&data));
        assert_eq!(g.total_weight(), 4.5);
    }

    #[test]
    fn disconnected_communities_are_counted() {
        let edges = [(0, 1, 1.0), (2, 3, 1.0), (1, 2, 1.0)];
        assert_eq!(disconnected(5, &edges, &[0, 0, 1, 1, 2]), 0);
        assert_eq!(disconnected(5, &edges, &[0, 1, 1, 0, 2]), 1, "0 and 3 are not joined inside 0");
        assert_eq!(disconnected(4, &edges, &[0, 0, 0, 0]), 0);
        assert_eq!(disconnected(5, &edges, &[0, 0, 0, 0, 0]), 1, "4 has no edge");
        assert_eq!(disconnected(5, &edges, &[0, 1, 1, 1, 0]), 1, "4 is isolated from 0");
    }
}
