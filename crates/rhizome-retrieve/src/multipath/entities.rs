//! Entity discovery by five paths and 2-hop relationship expansion.

use std::collections::{BTreeMap, HashMap, HashSet};

use rhizome_core::text::bm25_terms;
use rhizome_core::{Result, StoreRead, VectorKind};

use super::names::{top, NameIndex};
use crate::{Graph, MultipathConfig};

/// The discovery paths, in the order of [`Found::paths`].
pub(super) const ENTITY_PATHS: [&str; 5] = ["vector", "substring", "fulltext", "question_vector", "synonym"];

/// A discovered entity: its score per path (0 = not found there) and their sum.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub entity: u32,
    pub score: f32,
    pub paths: [f32; 5],
}

/// A keyword with its embedding and weight.
pub(super) struct Keyword<'a> {
    pub text: &'a str,
    pub vector: &'a [f32],
    /// Names (capitalised phrases, multi-word or CJK keywords) weigh 1; single common
    /// words less, as they match many entities.
    pub weight: f32,
}

/// Weight of a plain lowercase single-word keyword.
const COMMON_WORD_WEIGHT: f32 = 0.5;

pub(super) fn keyword_weight(k: &str) -> f32 {
    let named = k.chars().any(char::is_uppercase)
        || k.chars().any(rhizome_core::text::is_cjk)
        || k.contains(' ')
        || k.chars().all(|c| c.is_ascii_digit());
    if named {
        1.0
    } else {
        COMMON_WORD_WEIGHT
    }
}

/// The entities as discovery sees them, numbered in the whole graph's order: the whole
/// graph, or ([`super::around`]) the name indexes and reads through the store.
pub(super) trait Entities {
    /// The name search over every entity.
    fn names(&self) -> &NameIndex;
    /// The number of the entity `id`, None when there is no such entity.
    fn number(&self, id: &str) -> Option<u32>;
    /// The SYNONYM edges (other end, cosine) of each of `entities`, in the graph's order.
    fn synonyms(&self, entities: &[u32]) -> Result<HashMap<u32, Vec<(u32, f32)>>>;
}

/// [`Entities`] over the whole graph.
pub(super) struct Whole<'a> {
    pub g: &'a Graph,
    pub names: std::sync::Arc<NameIndex>,
}

impl Entities for Whole<'_> {
    fn names(&self) -> &NameIndex {
        &self.names
    }
    fn number(&self, id: &str) -> Option<u32> {
        self.g.entity(id)
    }
    fn synonyms(&self, entities: &[u32]) -> Result<HashMap<u32, Vec<(u32, f32)>>> {
        Ok(entities.iter().map(|&e| (e, self.g.synonyms[e as usize].clone())).collect())
    }
}

/// Entities found for the question, best first, at most `cfg.max_entities`.
pub(super) fn discover(
    store: &dyn StoreRead,
    es: &dyn Entities,
    cfg: &MultipathConfig,
    question_vec: &[f32],
    kws: &[Keyword],
) -> Result<Vec<Found>> {
    let k = cfg.entity_top_k.max(1);
    let mut per: HashMap<u32, [f32; 5]> = HashMap::new();
    fn add(per: &mut HashMap<u32, [f32; 5]>, path: usize, e: u32, s: f32) {
        let slot = &mut per.entry(e).or_insert([0.0; 5])[path];
        *slot = slot.max(s);
    }
    let ix = es.names();
    // One batched search for every keyword vector and the question vector.
    let mut queries: Vec<Vec<f32>> = kws.iter().map(|kw| kw.vector.to_vec()).collect();
    queries.push(question_vec.to_vec());
    let mut hits = store.vector_search_many(VectorKind::Entity, &queries, k)?;
    let question_hits = hits.pop().unwrap_or_default();
    for (kw, kw_hits) in kws.iter().zip(hits) {
        for hit in kw_hits {
            if let Some(e) = es.number(&hit.id) {
                add(&mut per, 0, e, kw.weight * hit.score.max(0.0));
            }
        }
        for (e, s) in ix.substring(kw.text, k) {
            add(&mut per, 1, e, kw.weight * s);
        }
        for (e, s) in ix.search(kw.text, k) {
            add(&mut per, 2, e, kw.weight * s);
        }
    }
    for hit in question_hits {
        if let Some(e) = es.number(&hit.id) {
            add(&mut per, 3, e, hit.score.max(0.0));
        }
    }
    // Synonyms of what the other paths found: the parent's mean score over the four
    // direct paths x the SYNONYM cosine.
    let mut direct: Vec<u32> = per.keys().copied().collect();
    direct.sort_unstable();
    let synonyms = es.synonyms(&direct)?;
    let mut syn: Vec<(u32, f32)> = Vec::new();
    for (&e, p) in &per {
        let base: f32 = p.iter().sum();
        for &(s, cos) in synonyms.get(&e).map_or(&[][..], Vec::as_slice) {
            syn.push((s, base * cos / 4.0));
        }
    }
    let mut best: BTreeMap<u32, f32> = BTreeMap::new();
    for (s, v) in syn {
        let b = best.entry(s).or_insert(0.0);
        *b = b.max(v);
    }
    for (s, v) in top(best.into_iter().collect(), k) {
        add(&mut per, 4, s, v);
    }
    let mut found: Vec<Found> =
        per.into_iter().map(|(entity, paths)| Found { entity, score: paths.iter().sum(), paths }).collect();
    found.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.entity.cmp(&b.entity)));
    found.truncate(cfg.max_entities);
    Ok(found)
}

/// Neighbours walked per entity: bounds the work around hub entities.
pub(super) const MAX_NEIGHBOURS: usize = 50;

/// Up to `limit` RELATED edges within two hops of the best `seeds` entities. An edge at
/// one hop from a seed scores the seed's discovery score plus the other end's (0 when not
/// discovered); at two hops, half the sum over the seed, the neighbour and the far end
/// (the bridge edge of a multi-hop question often has no discovered end). Plus the share
/// of question terms its type contains. Ties by heavier edge, then relation number.
pub(super) fn expand(g: &Graph, found: &[Found], seeds: usize, limit: usize, question: &str) -> Vec<(u32, f32)> {
    let score: HashMap<u32, f32> = found.iter().map(|f| (f.entity, f.score)).collect();
    let s = |e: u32| score.get(&e).copied().unwrap_or(0.0);
    let q_terms: HashSet<String> = bm25_terms(question).into_iter().collect();
    let type_bonus = |r: u32| {
        let terms = bm25_terms(&g.relations[r as usize].rel_type);
        if terms.is_empty() || q_terms.is_empty() {
            return 0.0;
        }
        terms.iter().filter(|t| q_terms.contains(*t)).count() as f32 / terms.len() as f32
    };
    let mut best: HashMap<u32, f32> = HashMap::new();
    let mut offer = |r: u32, v: f32| {
        let b = best.entry(r).or_insert(f32::NEG_INFINITY);
        *b = b.max(v + type_bonus(r));
    };
    for f in found.iter().take(seeds) {
        for n in walk(g, f.entity, &score) {
            offer(n.relation, f.score + if n.entity == f.entity { 0.0 } else { s(n.entity) });
            if n.entity == f.entity {
                continue;
            }
            for m in walk(g, n.entity, &score) {
                if m.relation != n.relation && m.entity != f.entity {
                    offer(m.relation, 0.5 * (f.score + s(n.entity) + s(m.entity)));
                }
            }
        }
    }
    let mut v: Vec<(u32, f32)> = best.into_iter().collect();
    v.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(g.relations[b.0 as usize].weight.total_cmp(&g.relations[a.0 as usize].weight))
            .then(a.0.cmp(&b.0))
    });
    v.truncate(limit);
    v
}

/// The neighbours of `e` walked: discovered ends first, then heavier edges, at most
/// [`MAX_NEIGHBOURS`].
pub(super) fn walk(g: &Graph, e: u32, score: &HashMap<u32, f32>) -> Vec<crate::graph::Neighbor> {
    let mut ns = g.neighbors[e as usize].clone();
    if ns.len() > MAX_NEIGHBOURS {
        let key = |n: &crate::graph::Neighbor| score.get(&n.entity).copied().unwrap_or(0.0);
        ns.sort_by(|a, b| {
            key(b)
                .total_cmp(&key(a))
                .then(g.relations[b.relation as usize].weight.total_cmp(&g.relations[a.relation as usize].weight))
                .then(a.relation.cmp(&b.relation))
        });
        ns.truncate(MAX_NEIGHBOURS);
    }
    ns
}
