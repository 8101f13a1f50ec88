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

use rhizome_core::{Result, VectorKind};

use super::{find_anchors, Anchor, MultihopConfig};
use crate::graph::Graph;
use crate::query_entities::embed_text;
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
    let t = Instant::now();
    let texts: Vec<String> = names.iter().map(|n| embed_text(n)).collect();
    let vecs =
        if texts.is_empty() { Vec::new() } else { env.embedder.embed(&texts, rhizome_core::EmbedKind::Passage)? };
    let mut candidates: BTreeSet<String> = BTreeSet::new();
    for v in vecs.iter().map(Vec::as_slice).chain(std::iter::once(q)) {
        candidates
            .extend(env.store.vector_search(VectorKind::Entity, v, cfg.anchor_per_entity)?.into_iter().map(|h| h.id));
    }
    let candidates: Vec<String> = candidates.into_iter().collect();
    let near = Graph::from_neighbourhood(env.store.neighbourhood(&candidates)?);
    out.timings_ms.insert("candidates".into(), ms(t));
    let (anchors, rejected) = find_anchors(env, &near, names, question, q, out)?;

    let t = Instant::now();
    let levels = ((cfg.max_hops.max(1) - 1) / 2).max(cfg.depth.max(1) - 1);
    let mut complete: BTreeSet<String> = anchors.iter().map(|a| near.entity_ids[a.node as usize].clone()).collect();
    let mut frontier: Vec<String> = complete.iter().cloned().collect();
    let mut reads = 1;
    for _ in 0..levels {
        if frontier.is_empty() {
            break;
        }
        let n = env.store.neighbourhood(&frontier)?;
        reads += 1;
        frontier = n
            .graph
            .relations
            .iter()
            .flat_map(|r| [&r.source_id, &r.target_id])
            .filter(|id| !complete.contains(*id))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
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
