//! From the graph to communities: the entity graph ([`entity_edges`]: RELATED edges,
//! weights summed over both directions) clustered by hierarchical Leiden into [`Community`] records.
//!
//! Entities without any relation are left out: a community of one entity has nothing to
//! report (Microsoft GraphRAG likewise clusters only connected entities).

use std::collections::{BTreeMap, HashMap};

use rhizome_core::community::{community_fingerprint, community_id};
use rhizome_core::config_sensemaking::CommunitiesConfig;
use rhizome_core::{Community, GraphData};

use crate::hierarchy::hierarchical_leiden;
use crate::leiden::{LeidenOptions, WeightedGraph};

/// The entity graph of an index, numbered for clustering.
pub struct EntityGraph {
    /// Entity id per node.
    pub ids: Vec<String>,
    pub names: Vec<String>,
    /// RELATED edges per node (both directions, self-loops once).
    pub degree: Vec<u32>,
    /// (source node, target node, relation id) of every relation.
    pub relations: Vec<(u32, u32, String)>,
    pub graph: WeightedGraph,
}

impl EntityGraph {
    /// Nodes are all entities; edges are [`entity_edges`].
    pub fn from_data(data: &GraphData) -> EntityGraph {
        let index: HashMap<&str, u32> =
            data.entities.iter().enumerate().map(|(i, e)| (e.id.as_str(), i as u32)).collect();
        let mut degree = vec![0u32; data.entities.len()];
        let mut relations = Vec::new();
        for r in &data.relations {
            let (Some(&s), Some(&t)) = (index.get(r.source_id.as_str()), index.get(r.target_id.as_str())) else {
                continue;
            };
            degree[s as usize] += 1;
            if s != t {
                degree[t as usize] += 1;
            }
            relations.push((s, t, r.id.clone()));
        }
        EntityGraph {
            ids: data.entities.iter().map(|e| e.id.clone()).collect(),
            names: data.entities.iter().map(|e| e.name.clone()).collect(),
            degree,
            relations,
            graph: WeightedGraph::new(data.entities.len(), &entity_edges(data)),
        }
    }
}

/// The edges that are clustered: (entity index, entity index, summed weight), a < b,
/// sorted; both directions of a pair add up, a weight <= 0 or not finite counts as 1,
/// self-relations and relations to unknown entities are left out. `rhizome bench
/// communities` times Leiden on exactly these.
pub fn entity_edges(data: &GraphData) -> Vec<(u32, u32, f64)> {
    let index: HashMap<&str, u32> = data.entities.iter().enumerate().map(|(i, e)| (e.id.as_str(), i as u32)).collect();
    let mut sums: BTreeMap<(u32, u32), f64> = BTreeMap::new();
    for r in &data.relations {
        let (Some(&a), Some(&b)) = (index.get(r.source_id.as_str()), index.get(r.target_id.as_str())) else {
            continue;
        };
        if a == b {
            continue;
        }
        let w = if r.weight.is_finite() && r.weight > 0.0 { f64::from(r.weight) } else { 1.0 };
        *sums.entry((a.min(b), a.max(b))).or_default() += w;
    }
    sums.into_iter().map(|((a, b), w)| (a, b, w)).collect()
}

/// Hierarchical communities of the graph: level 0 the coarsest, children split a
/// community larger than `max_cluster_size`. Deterministic for a seed.
pub fn compute(data: &GraphData, cfg: &CommunitiesConfig) -> Vec<Community> {
    let eg = EntityGraph::from_data(data);
    let opts = LeidenOptions { resolution: cfg.resolution, seed: cfg.seed, ..LeidenOptions::default() };
    let clusters = hierarchical_leiden(&eg.graph, cfg.max_cluster_size.max(1), &opts);
    let connected: Vec<bool> = eg.degree.iter().map(|&d| d > 0).collect();
    // Keep clusters of at least two related entities; a kept cluster's parent is kept too
    // (a parent has at least as many entities as its child).
    let keep: Vec<bool> =
        clusters.iter().map(|c| c.nodes.iter().filter(|&&n| connected[n as usize]).count() >= 2).collect();
    let member_ids = |nodes: &[u32]| -> Vec<String> {
        let mut v: Vec<String> =
            nodes.iter().filter(|&&n| connected[n as usize]).map(|&n| eg.ids[n as usize].clone()).collect();
        v.sort();
        v
    };
    let ids: Vec<String> = clusters.iter().map(|c| community_id(c.level, &member_ids(&c.nodes))).collect();
    // Relations inside each cluster: by the cluster of each end at each level.
    let mut rel_ids: Vec<Vec<String>> = vec![Vec::new(); clusters.len()];
    let mut leaf_of: HashMap<u32, usize> = HashMap::new();
    for (i, c) in clusters.iter().enumerate() {
        if c.children.is_empty() {
            for &n in &c.nodes {
                leaf_of.insert(n, i);
            }
        }
    }
    for (s, t, rid) in &eg.relations {
        let (Some(&ls), Some(&lt)) = (leaf_of.get(s), leaf_of.get(t)) else { continue };
        // Walk both ends up to their common ancestors; every common ancestor holds the edge.
        let chain = |mut i: usize| {
            let mut v = vec![i];
            while let Some(p) = clusters[i].parent {
                v.push(p);
                i = p;
            }
            v
        };
        let (cs, ct) = (chain(ls), chain(lt));
        for c in cs.iter().filter(|c| ct.contains(c)) {
            rel_ids[*c].push(rid.clone());
        }
    }
    let mut out = Vec::new();
    for (i, c) in clusters.iter().enumerate() {
        if !keep[i] {
            continue;
        }
        let entity_ids = member_ids(&c.nodes);
        let mut top: Vec<u32> = c.nodes.iter().copied().filter(|&n| connected[n as usize]).collect();
        top.sort_by(|&a, &b| eg.degree[b as usize].cmp(&eg.degree[a as usize]).then(a.cmp(&b)));
        let title = title(&top.iter().map(|&n| eg.names[n as usize].as_str()).collect::<Vec<_>>());
        out.push(Community {
            id: ids[i].clone(),
            level: c.level,
            parent: c.parent.filter(|&p| keep[p]).map(|p| ids[p].clone()),
            children: c.children.iter().filter(|&&ch| keep[ch]).map(|&ch| ids[ch].clone()).collect(),
            title,
            fingerprint: community_fingerprint(&entity_ids, &rel_ids[i]),
            entity_ids,
        });
    }
    out.sort_by(|a, b| (a.level, &a.id).cmp(&(b.level, &b.id)));
    out
}

/// A community's title: its three most connected members' names (`names`, best first),
/// and how many more there are.
pub(crate) fn title(names: &[&str]) -> String {
    let more = names.len().saturating_sub(3);
    let top = names[..names.len().min(3)].join(", ");
    if more > 0 {
        format!("{top} and {more} more")
    } else {
        top
    }
}
