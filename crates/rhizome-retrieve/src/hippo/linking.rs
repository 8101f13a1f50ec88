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
    pub(super) id: String,
    pub(super) text: String,
    /// Subject, predicate and object, for viewers that draw the fact as an edge.
    pub(super) triple: [String; 3],
    /// The entity ids of its subject and object.
    pub(super) ends: [String; 2],
    /// Linking score in [0, 1].
    pub(super) score: f32,
}

/// A fact as the graph holds it: the entity ids of its ends and the best relative score
/// of the passages that support it (its context).
pub(super) struct InGraph {
    pub(super) ends: [String; 2],
    pub(super) context: f32,
}

/// The facts closest to the question, rescored with the relative scores of their
/// passages (see [`HippoConfig::fact_context_weight`]); the best `linking_top_k`, with
/// their texts. `in_graph` says, for the facts found by vector, which the graph holds.
pub(super) fn link_facts(
    env: &QueryEnv,
    q: &[f32],
    cfg: &HippoConfig,
    in_graph: impl FnOnce(&[String]) -> Result<HashMap<String, InGraph>>,
) -> Result<Vec<Linked>> {
    let top_k = cfg.linking_top_k;
    if top_k == 0 {
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
    let ids: Vec<String> = hits.iter().map(|s| s.id.clone()).collect();
    let mut known = in_graph(&ids)?;
    let w = cfg.fact_context_weight.clamp(0.0, 1.0);
    let mut best: Vec<(InGraph, String, f32)> = hits
        .into_iter()
        .filter_map(|s| {
            let f = known.remove(&s.id)?;
            let score = (1.0 - w) * min_max(s.score, lo, hi) + w * f.context;
            Some((f, s.id, score))
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
            Linked { id, text, triple, ends: fact.ends, score }
        })
        .collect())
}

/// [`link_facts`]'s `in_graph` over the whole graph: `passages` holds each chunk's
/// relative score.
pub(super) fn in_whole_graph(graph: &Graph, passages: &[f32], ids: &[String]) -> HashMap<String, InGraph> {
    ids.iter()
        .filter_map(|id| {
            let f = &graph.facts[graph.fact(id)? as usize];
            let context = f.chunks.iter().filter_map(|&c| passages.get(c as usize).copied()).fold(0.0f32, f32::max);
            let ends = [graph.entity_ids[f.subject as usize].clone(), graph.entity_ids[f.object as usize].clone()];
            Some((id.clone(), InGraph { ends, context }))
        })
        .collect()
}

/// Reset weights of entity nodes, by entity id: for each linked fact and each of its two
/// entities, `weight` x the fact's score divided by the number of passages the entity is
/// mentioned in (`passages_of`; a phrase found everywhere says little about where to
/// look), summed over facts.
pub(super) fn entity_seeds(
    linked: &[Linked],
    weight: f64,
    passages_of: impl Fn(&str) -> usize,
) -> BTreeMap<String, f64> {
    let mut seeds: BTreeMap<String, f64> = BTreeMap::new();
    for f in linked {
        let [subject, object] = &f.ends;
        let ends = if subject == object { vec![subject] } else { vec![subject, object] };
        for e in ends {
            let w = weight * f.score as f64 / passages_of(e).max(1) as f64;
            if w > 0.0 {
                *seeds.entry(e.clone()).or_default() += w;
            }
        }
    }
    seeds
}
