//! `multihop` without the whole graph: the anchors' neighbourhood read from the store.
//!
//! Paths of at most `max_hops` relations between anchors, and the ego graph of radius
//! `depth`, are found exactly as over the whole graph when every entity within
//! `levels = max(⌊(max_hops - 1) / 2⌋, depth - 1)` hops of an anchor has all its relations:
//! each relation of such a path has an end that close to one of its two anchors, and each
//! relation of such an ego graph an end closer than `depth`. Those entities are found
//! level by level, then their neighbourhood ([`rhizome_core::StoreRead::neighbourhood`])
//! is read once; it also holds the chunks and mentions that place each of those
//! relations in a chunk ([`crate::paths::relation_chunk`]).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use rhizome_core::Result;

use super::{entity_hits, find_anchors, Anchor, MultihopConfig};
use crate::graph::Graph;
use crate::{ms, QueryEnv, Retrieval};

/// The anchors and the graph around them that the rest of the method reads, and the
/// candidates under `anchor_min_score`.
pub(super) fn anchors_around(
    env: &QueryEnv,
    names: &[String],
    question: &str,
    q: &[f32],
    out: &mut Retrieval,
) -> Result<(Arc<Graph>, Vec<Anchor>, Vec<serde_json::Value>)> {
    let cfg = env.config.section::<MultihopConfig>();
    // Every entity an anchor may be chosen from: the hits of each query.
    let hits = entity_hits(env, names, q, true, out)?;
    let t = Instant::now();
    let mut candidates: BTreeSet<String> = BTreeSet::new();
    candidates.extend(hits.names.iter().flatten().chain(hits.question.iter().flatten()).map(|h| h.id.clone()));
    let candidates: Vec<String> = candidates.into_iter().collect();
    let near = Graph::from_neighbourhood(env.store.neighbourhood(&candidates)?);
    out.timings_ms.insert("candidates".into(), ms(t));
    let (anchors, rejected) = find_anchors(env, &near, names, hits, question, q, out)?;

    let t = Instant::now();
    let levels = ((cfg.max_hops.max(1) - 1) / 2).max(cfg.depth.max(1) - 1);
    let mut complete: BTreeSet<String> = anchors.iter().map(|a| near.entity_ids[a.node as usize].clone()).collect();
    let mut frontier: Vec<String> = complete.iter().cloned().collect();
    let mut reads = 1;
    for level in 0..levels {
        if frontier.is_empty() {
            break;
        }
        // The anchors' relations came with the candidates' neighbourhood; farther levels
        // are read.
        let ends: BTreeSet<String> = if level == 0 {
            let nodes = anchors.iter().flat_map(|a| &near.neighbors[a.node as usize]);
            nodes.map(|nb| near.entity_ids[nb.entity as usize].clone()).collect()
        } else {
            reads += 1;
            let n = env.store.neighbourhood(&frontier)?;
            n.graph.relations.into_iter().flat_map(|r| [r.source_id, r.target_id]).collect()
        };
        frontier = ends.into_iter().filter(|id| !complete.contains(id)).collect();
        complete.extend(frontier.iter().cloned());
    }
    let ids: Vec<String> = complete.into_iter().collect();
    let g = Graph::from_neighbourhood(env.store.neighbourhood(&ids)?);
    out.timings_ms.insert("neighbourhood".into(), ms(t));
    out.notes.push(format!(
        "read the neighbourhood of {} entities within {levels} hops of the anchors from the store in {reads} \
         reads ({} relations) instead of the whole graph (retrieval.whole_graph_up_to)",
        ids.len(),
        g.relations.len()
    ));
    let anchors = anchors
        .into_iter()
        .filter_map(|a| {
            let node = g.entity(&near.entity_ids[a.node as usize])?;
            Some(Anchor { node, ..a })
        })
        .collect();
    Ok((Arc::new(g), anchors, rejected))
}
