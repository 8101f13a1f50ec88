//! Steps 2 and 3 of hippo: the facts linked to the question, and the reset weights their
//! entities get as seeds.

use std::collections::{BTreeMap, HashMap};

use rhizome_core::{Result, VectorKind};

use super::passages::min_max;
use super::settings::HippoConfig;
use crate::graph::Graph;
use crate::QueryEnv;

/// A fact linked to the question.
#[derive(Debug, Clone)]
pub(super) struct Linked {
    /// Index into [`Graph::facts`].
    pub(super) fact: u32,
    pub(super) id: String,
    pub(super) text: String,
    /// Subject, predicate and object, for viewers that draw the fact as an edge.
    pub(super) triple: [String; 3],
    /// Linking score in [0, 1].
    pub(super) score: f32,
}

/// The facts closest to the question, rescored with the relative scores of their
/// passages (see [`HippoConfig::fact_context_weight`]); the best `linking_top_k`, with
/// their texts.
pub(super) fn link_facts(
    env: &QueryEnv,
    graph: &Graph,
    q: &[f32],
    cfg: &HippoConfig,
    passages: &[f32],
) -> Result<Vec<Linked>> {
    let top_k = cfg.linking_top_k;
    if top_k == 0 || graph.facts.is_empty() {
        return Ok(Vec::new());
    }
    let pool = cfg.fact_candidates.max(top_k);
    let hits = env.store.vector_search(VectorKind::Fact, q, pool)?;
    // The lowest cosine of all facts is the highest cosine to -q: one more scan instead of
    // sorting every fact.
    let neg: Vec<f32> = q.iter().map(|x| -x).collect();
    let lowest = env.store.vector_search(VectorKind::Fact, &neg, 1)?;
    let (Some(hi), Some(lo)) = (hits.first().map(|s| s.score), lowest.first().map(|s| -s.score)) else {
        return Ok(Vec::new());
    };
    let w = cfg.fact_context_weight.clamp(0.0, 1.0);
    let mut best: Vec<(u32, String, f32)> = hits
        .into_iter()
        .filter_map(|s| {
            let f = graph.fact(&s.id)?;
            let context = graph.facts[f as usize]
                .chunks
                .iter()
                .filter_map(|&c| passages.get(c as usize).copied())
                .fold(0.0f32, f32::max);
            Some((f, s.id, (1.0 - w) * min_max(s.score, lo, hi) + w * context))
        })
        .collect();
    best.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.1.cmp(&b.1)));
    best.truncate(top_k);
    let ids: Vec<String> = best.iter().map(|b| b.1.clone()).collect();
    let stored: HashMap<String, rhizome_core::Fact> =
        env.store.facts(&ids)?.into_iter().map(|f| (f.id.clone(), f)).collect();
    Ok(best
        .into_iter()
        .map(|(fact, id, score)| {
            let (text, triple) = match stored.get(&id) {
                Some(f) => (f.text(), [f.subject.clone(), f.predicate.clone(), f.object.clone()]),
                None => Default::default(),
            };
            Linked { fact, id, text, triple, score }
        })
        .collect())
}

/// Reset weights of entity nodes: for each linked fact and each of its two entities,
/// `weight` x the fact's score divided by the number of passages the entity is mentioned in (a
/// phrase found everywhere says little about where to look), summed over facts.
pub(super) fn entity_seeds(graph: &Graph, linked: &[Linked], weight: f64) -> BTreeMap<u32, f64> {
    let mut seeds: BTreeMap<u32, f64> = BTreeMap::new();
    for f in linked {
        let Some(node) = graph.facts.get(f.fact as usize) else { continue };
        let ends = if node.subject == node.object { vec![node.subject] } else { vec![node.subject, node.object] };
        for e in ends {
            let chunks = graph.entity_chunks.get(e as usize).map_or(0, Vec::len).max(1);
            let w = weight * f.score as f64 / chunks as f64;
            if w > 0.0 {
                *seeds.entry(e).or_default() += w;
            }
        }
    }
    seeds
}
