//! Leiden and hierarchical Leiden on generated graphs with known structure.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rhizome_community::hierarchy::{hierarchical_leiden, Cluster};
use rhizome_community::leiden::{leiden, modularity, LeidenOptions, WeightedGraph};

/// splitmix64, for generating test graphs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

type Edges = Vec<(u32, u32, f64)>;

/// Edges where nodes u < v are joined with probability `p(u, v)`.
fn random_edges(n: usize, seed: u64, p: impl Fn(usize, usize) -> f64) -> Edges {
    let mut rng = Rng(seed);
    let mut edges = Vec::new();
    for u in 0..n {
        for v in u + 1..n {
            if rng.unit() < p(u, v) {
                edges.push((u as u32, v as u32, 1.0));
            }
        }
    }
    edges
}

/// Stochastic block model: `blocks` blocks of `size` nodes.
fn sbm(blocks: usize, size: usize, p_in: f64, p_out: f64, seed: u64) -> (Edges, Vec<u32>) {
    let truth: Vec<u32> = (0..blocks * size).map(|v| (v / size) as u32).collect();
    let edges = random_edges(blocks * size, seed, |u, v| if truth[u] == truth[v] { p_in } else { p_out });
    (edges, truth)
}

fn entropy(counts: impl Iterator<Item = usize>, n: f64) -> f64 {
    counts.map(|c| c as f64 / n).filter(|&p| p > 0.0).map(|p| -p * p.ln()).sum()
}

/// Normalized mutual information, 2 I(a; b) / (H(a) + H(b)); 1 when both are trivial.
fn nmi(a: &[u32], b: &[u32]) -> f64 {
    let n = a.len() as f64;
    let mut joint: HashMap<(u32, u32), usize> = HashMap::new();
    let (mut ca, mut cb): (HashMap<u32, usize>, HashMap<u32, usize>) = (HashMap::new(), HashMap::new());
    for (&x, &y) in a.iter().zip(b) {
        *joint.entry((x, y)).or_default() += 1;
        *ca.entry(x).or_default() += 1;
        *cb.entry(y).or_default() += 1;
    }
    let (ha, hb) = (entropy(ca.values().copied(), n), entropy(cb.values().copied(), n));
    if ha + hb == 0.0 {
        return 1.0;
    }
    let mi: f64 = joint
        .iter()
        .map(|(&(x, y), &c)| {
            let pxy = c as f64 / n;
            pxy * (pxy / (ca[&x] as f64 / n * cb[&y] as f64 / n)).ln()
        })
        .sum();
    2.0 * mi / (ha + hb)
}

/// Whether every community induces a connected subgraph.
fn communities_connected(n: usize, edges: &Edges, part: &[u32]) -> bool {
    let mut adj = vec![Vec::new(); n];
    for &(u, v, _) in edges {
        adj[u as usize].push(v as usize);
        adj[v as usize].push(u as usize);
    }
    let mut seen_label = BTreeSet::new();
    let mut reached = vec![false; n];
    for s in 0..n {
        if reached[s] {
            continue;
        }
        if !seen_label.insert(part[s]) {
            return false; // a second piece of a community already visited
        }
        reached[s] = true;
        let mut stack = vec![s];
        while let Some(v) = stack.pop() {
            for &t in &adj[v] {
                if !reached[t] && part[t] == part[s] {
                    reached[t] = true;
                    stack.push(t);
                }
            }
        }
    }
    true
}

fn is_dense_in_first_node_order(part: &[u32]) -> bool {
    let mut next = 0;
    part.iter().all(|&c| {
        if c == next {
            next += 1;
        }
        c < next
    })
}

#[test]
fn planted_blocks_are_recovered() {
    for seed in [1u64, 2, 3] {
        let (edges, truth) = sbm(8, 25, 0.3, 0.01, seed);
        let g = WeightedGraph::new(200, &edges);
        let found = leiden(&g, &LeidenOptions::default());
        assert!(is_dense_in_first_node_order(&found));
        let score = nmi(&found, &truth);
        assert!(score >= 0.95, "seed {seed}: NMI {score}");
        let (q_found, q_truth) = (modularity(&g, &found, 1.0), modularity(&g, &truth, 1.0));
        assert!(q_found >= q_truth - 1e-9, "seed {seed}: Q {q_found} < planted {q_truth}");
        // Louvain finds the blocks too on such an easy graph; it is the benchmark baseline.
        let louvain = leiden(&g, &LeidenOptions { refine: false, ..Default::default() });
        assert!(nmi(&louvain, &truth) >= 0.9);
    }
}

#[test]
fn modularity_matches_hand_computation() {
    // Two triangles joined by one edge: m = 7; each side has 3 inner edges and strength 7.
    let edges = [(0, 1, 1.0), (1, 2, 1.0), (0, 2, 1.0), (3, 4, 1.0), (4, 5, 1.0), (3, 5, 1.0), (2, 3, 1.0)];
    let g = WeightedGraph::new(6, &edges);
    let q = modularity(&g, &[0, 0, 0, 1, 1, 1], 1.0);
    assert!((q - (6.0 / 7.0 - 2.0 * 0.25)).abs() < 1e-12);
    assert_eq!(leiden(&g, &LeidenOptions::default()), vec![0, 0, 0, 1, 1, 1]);
    let q2 = modularity(&g, &[7, 7, 7, 7, 7, 7], 0.5);
    assert!((q2 - (1.0 - 0.5)).abs() < 1e-12);
    assert!(modularity(&g, &[0, 0], 1.0).is_nan());
}

#[test]
fn leiden_communities_are_connected() {
    let graphs: Vec<(usize, Edges)> = vec![
        (300, random_edges(300, 7, |_, _| 0.012)),
        (400, sbm(10, 40, 0.08, 0.01, 8).0),
        (250, random_edges(250, 9, |u, v| if (u % 5) == (v % 5) { 0.05 } else { 0.004 })),
        // Two components, weighted edges.
        (60, {
            let mut e = random_edges(60, 10, |u, v| if (u < 30) == (v < 30) { 0.15 } else { 0.0 });
            e.iter_mut().enumerate().for_each(|(i, x)| x.2 = 1.0 + (i % 4) as f64);
            e
        }),
    ];
    for (i, (n, edges)) in graphs.iter().enumerate() {
        let g = WeightedGraph::new(*n, edges);
        for seed in [1u64, 42, 99] {
            let opts = LeidenOptions { seed, ..Default::default() };
            let part = leiden(&g, &opts);
            assert_eq!(part.len(), *n);
            assert!(communities_connected(*n, edges, &part), "graph {i} seed {seed}");
            assert!(modularity(&g, &part, 1.0) > 0.2, "graph {i}");
        }
    }
}

#[test]
fn same_seed_same_result() {
    let (edges, _) = sbm(6, 30, 0.1, 0.02, 11);
    let g = WeightedGraph::new(180, &edges);
    for refine in [true, false] {
        let opts = LeidenOptions { seed: 5, refine, ..Default::default() };
        assert_eq!(leiden(&g, &opts), leiden(&g, &opts));
        assert_eq!(hierarchical_leiden(&g, 10, &opts), hierarchical_leiden(&g, 10, &opts));
    }
}

/// Checks the structure of a hierarchy over `n` nodes; returns the leaf partition.
fn check_hierarchy(n: usize, clusters: &[Cluster], max: usize) -> Vec<u32> {
    let mut leaf_of = vec![u32::MAX; n];
    let mut per_level: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let mut prev = (0u32, 0u32);
    for (i, c) in clusters.iter().enumerate() {
        assert!(!c.nodes.is_empty() && c.nodes.windows(2).all(|w| w[0] < w[1]), "cluster {i} nodes sorted");
        assert!((c.level, c.nodes[0]) > prev || i == 0, "order by level then smallest node");
        prev = (c.level, c.nodes[0]);
        per_level.entry(c.level).or_default().extend(&c.nodes);
        match c.parent {
            None => assert_eq!(c.level, 0),
            Some(p) => {
                assert!(p < i && clusters[p].level + 1 == c.level && clusters[p].children.contains(&i));
            }
        }
        if c.children.is_empty() {
            for &v in &c.nodes {
                assert_eq!(leaf_of[v as usize], u32::MAX, "node {v} in two leaves");
                leaf_of[v as usize] = i as u32;
            }
        } else {
            assert!(c.nodes.len() > max, "only large clusters are split");
            let mut union: Vec<u32> = c.children.iter().flat_map(|&k| clusters[k].nodes.clone()).collect();
            union.sort_unstable();
            assert_eq!(union, c.nodes, "children partition their parent");
            assert!(c.children.iter().all(|&k| clusters[k].parent == Some(i)));
        }
    }
    assert!(leaf_of.iter().all(|&l| l != u32::MAX), "every node has a leaf");
    // Every node is in exactly one cluster per level, down to its leaf.
    for v in 0..n as u32 {
        let mut depth = clusters[leaf_of[v as usize] as usize].level;
        let mut at = Some(leaf_of[v as usize] as usize);
        while let Some(c) = at {
            assert_eq!(clusters[c].level, depth);
            assert!(clusters[c].nodes.binary_search(&v).is_ok());
            at = clusters[c].parent;
            depth = depth.wrapping_sub(1);
        }
    }
    for (level, nodes) in &per_level {
        let mut count = vec![0usize; n];
        nodes.iter().for_each(|&v| count[v as usize] += 1);
        for v in 0..n {
            let expected = usize::from(*level <= clusters[leaf_of[v] as usize].level);
            assert_eq!(count[v], expected, "node {v} at level {level}");
        }
    }
    leaf_of
}

#[test]
fn hierarchy_on_planted_hierarchy() {
    // 4 groups of 3 blocks of 10: dense blocks, medium inside a group, sparse across.
    let n = 120;
    let block = |v: usize| v / 10;
    let group = |v: usize| v / 30;
    let edges = random_edges(n, 21, |u, v| {
        if block(u) == block(v) {
            0.9
        } else if group(u) == group(v) {
            0.12
        } else {
            0.003
        }
    });
    let g = WeightedGraph::new(n, &edges);
    let clusters = hierarchical_leiden(&g, 10, &LeidenOptions::default());
    let leaves = check_hierarchy(n, &clusters, 10);
    for c in clusters.iter().filter(|c| c.children.is_empty()) {
        assert!(c.nodes.len() <= 10, "leaf of {} nodes", c.nodes.len());
    }
    let truth: Vec<u32> = (0..n).map(|v| block(v) as u32).collect();
    assert!(nmi(&leaves, &truth) >= 0.95, "leaves recover the blocks");
    // Level 0 holds the groups (or pieces of them), and the blocks come one level down.
    let top: Vec<u32> = {
        let mut t = vec![0u32; n];
        for (i, c) in clusters.iter().enumerate().filter(|(_, c)| c.level == 0) {
            c.nodes.iter().for_each(|&v| t[v as usize] = i as u32);
        }
        t
    };
    let groups: Vec<u32> = (0..n).map(|v| group(v) as u32).collect();
    assert!(nmi(&top, &groups) >= 0.9, "{clusters:?}");
    assert!(clusters.iter().any(|c| c.level == 1));
}

#[test]
fn unsplittable_cluster_stays_a_leaf() {
    // A 20-clique: Leiden keeps it whole at every level, so it is a leaf of 20 nodes.
    let edges: Edges = (0..20u32).flat_map(|u| (u + 1..20).map(move |v| (u, v, 1.0))).collect();
    let g = WeightedGraph::new(20, &edges);
    let clusters = hierarchical_leiden(&g, 10, &LeidenOptions::default());
    assert_eq!(clusters, vec![Cluster { level: 0, parent: None, children: vec![], nodes: (0..20).collect() }]);
}

#[test]
fn edge_cases() {
    let opts = LeidenOptions::default();
    let empty = WeightedGraph::new(0, &[]);
    assert!(leiden(&empty, &opts).is_empty());
    assert!(hierarchical_leiden(&empty, 10, &opts).is_empty());
    assert_eq!(modularity(&empty, &[], 1.0), 0.0);

    // No edges (invalid ones are ignored): every node alone.
    let bad = [(0, 1, -1.0), (1, 2, f64::NAN), (2, 9, 1.0), (3, 4, 0.0), (0, 4, f64::INFINITY)];
    let none = WeightedGraph::new(5, &bad);
    assert_eq!(none.total_weight(), 0.0);
    assert_eq!(leiden(&none, &opts), vec![0, 1, 2, 3, 4]);
    let h = hierarchical_leiden(&none, 1, &opts);
    assert_eq!(h.len(), 5);
    assert!(h.iter().enumerate().all(|(i, c)| c.level == 0 && c.nodes == vec![i as u32] && c.children.is_empty()));

    let single = WeightedGraph::new(2, &[(0, 1, 2.5)]);
    assert_eq!(leiden(&single, &opts), vec![0, 0]);
    assert!(modularity(&single, &[0, 0], 1.0).abs() < 1e-12);
    assert!((modularity(&single, &[0, 1], 1.0) + 0.5).abs() < 1e-12);

    let looped = WeightedGraph::new(1, &[(0, 0, 2.0)]);
    assert_eq!(looped.total_weight(), 2.0);
    assert_eq!(leiden(&looped, &opts), vec![0]);
    assert_eq!(hierarchical_leiden(&looped, 0, &opts).len(), 1);
    assert!(modularity(&looped, &[0], 1.0).abs() < 1e-12);

    // A self-loop node next to an isolated one and an edge: isolated nodes stay alone.
    let mixed = WeightedGraph::new(4, &[(0, 0, 1.0), (2, 3, 1.0)]);
    assert_eq!(leiden(&mixed, &opts), vec![0, 1, 2, 2]);
}

#[test]
fn parallel_edges_add_and_subgraph_renumbers() {
    let g = WeightedGraph::new(4, &[(0, 1, 1.0), (1, 0, 2.0), (1, 2, 1.0), (2, 2, 0.5), (2, 3, 4.0)]);
    assert_eq!(g.node_count(), 4);
    assert!((g.total_weight() - 8.5).abs() < 1e-12);
    let sub = g.subgraph(&[2, 1, 7, 1]);
    assert_eq!(sub.node_count(), 4);
    assert!((sub.total_weight() - 1.5).abs() < 1e-12, "edge 1-2 and the loop on 2");
    // Same modularity for the same grouping seen through the renumbering.
    let direct = WeightedGraph::new(2, &[(0, 1, 1.0), (0, 0, 0.5)]);
    let q1 = modularity(&direct, &[0, 1], 1.0);
    let q2 = modularity(&sub, &[0, 1, 2, 3], 1.0);
    assert!((q1 - q2).abs() < 1e-12);
}

#[test]
fn large_graph_runs() {
    // 100k nodes: a ring of 20 000 five-cliques; Leiden groups neighbouring cliques.
    let (cliques, size) = (20_000u32, 5u32);
    let n = (cliques * size) as usize;
    let mut edges = Vec::new();
    for c in 0..cliques {
        let base = c * size;
        for a in 0..size {
            for b in a + 1..size {
                edges.push((base + a, base + b, 1.0));
            }
        }
        edges.push((base, ((c + 1) % cliques) * size + 1, 1.0));
    }
    let g = WeightedGraph::new(n, &edges);
    let t = std::time::Instant::now();
    let part = leiden(&g, &LeidenOptions::default());
    let ms = t.elapsed().as_millis();
    let k = *part.iter().max().unwrap() as usize + 1;
    eprintln!("100k nodes: {k} communities in {ms} ms, Q {:.4}", modularity(&g, &part, 1.0));
    assert!(modularity(&g, &part, 1.0) > 0.9);
    assert!(communities_connected(n, &edges, &part));
    // No clique is cut.
    assert!((0..n).all(|v| part[v] == part[v - v % size as usize]));
    let t = std::time::Instant::now();
    let h = hierarchical_leiden(&g, 10, &LeidenOptions::default());
    eprintln!("hierarchical: {} clusters in {} ms", h.len(), t.elapsed().as_millis());
    check_hierarchy(n, &h, 10);
}
