//! The graph viewer's reads on an index above `retrieval.whole_graph_up_to` entities:
//! the name search, the explorer's subgraph and a document's entities, read by id through
//! the store instead of from the whole graph, with the same results (see each caller in
//! `browse.rs` and `documents.rs` for where they differ).

use std::collections::{BTreeMap, HashMap, HashSet};

use rhizome_core::{Result, StoreRead};
use rhizome_retrieve::graph::name_key;

use crate::browse::{leaf_communities, no_entity, rank, related_edge, synonym_edge, GraphNode, Subgraph};
use crate::Engine;

/// Most hits of a name search whose degrees are read to rank them: a prefix that more
/// names share is ranked among the first of them in id order.
pub const SEARCH_RANKED: usize = 20_000;

/// The degrees of `ids` that exist, by id.
fn degrees(store: &dyn StoreRead, ids: &[String]) -> Result<HashMap<String, u32>> {
    Ok(store.entity_degrees(ids)?.into_iter().collect())
}

/// The nodes of `ids` (those that exist), in that order, read by id.
pub(crate) fn nodes_by_id(store: &dyn StoreRead, ids: &[String]) -> Result<Vec<GraphNode>> {
    let degree = degrees(store, ids)?;
    let leaf = leaf_communities(store, ids)?;
    let mut rows: HashMap<String, (String, String)> =
        store.entities(ids)?.into_iter().map(|e| (e.id, (e.name, e.entity_type))).collect();
    Ok(ids
        .iter()
        .filter_map(|id| {
            let (name, entity_type) = rows.remove(id)?;
            Some(GraphNode {
                id: id.clone(),
                name,
                entity_type,
                degree: degree.get(id).copied().unwrap_or(0) as usize,
                community: leaf.get(id).cloned(),
            })
        })
        .collect())
}

impl Engine {
    /// [`Engine::search_entities`] for the key `p` without the whole graph.
    pub(crate) fn search_entities_around(
        &self,
        store: &dyn StoreRead,
        p: &str,
        limit: usize,
    ) -> Result<Vec<GraphNode>> {
        let names = self.graph().name_prefixes(store)?;
        let mut hits: Vec<(u8, u32)> =
            names.starting(p).into_iter().filter_map(|e| rank(names.key(e), p).map(|r| (r, e))).collect();
        hits.sort_unstable();
        // Every hit of the ranks that fill `limit` (the last of them is ordered by degree).
        let Some(&(last, _)) = hits.get(limit.min(hits.len()).wrapping_sub(1)) else { return Ok(Vec::new()) };
        hits.retain(|h| h.0 <= last);
        hits.truncate(SEARCH_RANKED.max(limit));
        let ids: Vec<String> = hits.iter().map(|&(_, e)| names.id(e).to_string()).collect();
        let degree = degrees(store, &ids)?;
        let mut ranked: Vec<(u8, u32, u32, &String)> = hits
            .iter()
            .zip(&ids)
            .map(|(&(r, e), id)| (r, u32::MAX - degree.get(id).copied().unwrap_or(0), e, id))
            .collect();
        ranked.sort_unstable();
        let top: Vec<String> = ranked.into_iter().take(limit).map(|(_, _, _, id)| id.clone()).collect();
        nodes_by_id(store, &top)
    }

    /// [`Engine::neighbourhood`] without the whole graph: the hops read a level at a time.
    pub(crate) fn neighbourhood_around(
        &self,
        store: &dyn StoreRead,
        entity: &str,
        depth: usize,
        max_nodes: usize,
    ) -> Result<Subgraph> {
        let start = if store.entities(&[entity.to_string()])?.is_empty() {
            self.entity_of_name(store, entity)?.ok_or_else(|| no_entity(entity))?
        } else {
            entity.to_string()
        };
        let max_nodes = max_nodes.max(1);
        let mut seen: HashSet<String> = HashSet::from([start.clone()]);
        let mut order = vec![start.clone()];
        let mut level = vec![start.clone()];
        let mut truncated = false;
        for _ in 0..depth {
            if level.is_empty() || truncated {
                break;
            }
            // The relations at this level (not the chunks around it, as a neighbourhood
            // read would give), each entity's listed as the whole graph lists them: by
            // relation id. Their ends are stored entities (a relation goes with them).
            let edges = store.walk_edges(&level, &[], false)?;
            let mut next_of: HashMap<&str, Vec<(f32, &str)>> = HashMap::new();
            for r in &edges.relations {
                next_of.entry(&r.source_id).or_default().push((r.weight, &r.target_id));
                if r.source_id != r.target_id {
                    next_of.entry(&r.target_id).or_default().push((r.weight, &r.source_id));
                }
            }
            let mut next_level = Vec::new();
            for n in &level {
                let mut next: Vec<(f32, &str)> = next_of
                    .get(n.as_str())
                    .into_iter()
                    .flatten()
                    .filter(|(_, e)| !seen.contains(*e))
                    .copied()
                    .collect();
                next.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
                for (_, e) in next {
                    if !seen.insert(e.to_string()) {
                        continue;
                    }
                    if order.len() >= max_nodes {
                        truncated = true;
                        break;
                    }
                    order.push(e.to_string());
                    next_level.push(e.to_string());
                }
                if truncated {
                    // Nothing more is drawn, as over the whole graph.
                    break;
                }
            }
            level = next_level;
        }
        let nodes = nodes_by_id(store, &order)?;
        let among = store.walk_edges(&order, &[], true)?;
        let mut edges: Vec<_> = among
            .relations
            .iter()
            .map(|r| related_edge(&r.id, &r.source_id, &r.target_id, &r.rel_type, r.weight))
            .collect();
        let mut synonyms: BTreeMap<&str, Vec<(&str, f32)>> = BTreeMap::new();
        for (a, b, s) in &among.synonyms {
            synonyms.entry(a.as_str()).or_default().push((b.as_str(), *s));
        }
        for a in &order {
            for &(b, s) in synonyms.get(a.as_str()).into_iter().flatten() {
                edges.push(synonym_edge(a, b, s));
            }
        }
        Ok(Subgraph { center: start, nodes, edges, truncated })
    }

    /// The entity named `name` (by key): of several, the one of most relations, then the
    /// last by id (as over the whole graph).
    fn entity_of_name(&self, store: &dyn StoreRead, name: &str) -> Result<Option<String>> {
        let k = name_key(name);
        if k.is_empty() {
            return Ok(None);
        }
        let names = self.graph().name_prefixes(store)?;
        let ids: Vec<String> =
            names.starting(&k).into_iter().filter(|&e| names.key(e) == k).map(|e| names.id(e).to_string()).collect();
        let degree = degrees(store, &ids)?;
        Ok(ids.into_iter().max_by_key(|id| degree.get(id).copied().unwrap_or(0)))
    }
}
