//! `multihop`: anchors, ego graph and paths.
//!
//! 1. The question's entities ([`crate::query_entities`]: the `query_entities` prompt with
//!    an LLM, rules without), each embedded like an entity name.
//! 2. Anchors: for each question entity, those of its `anchor_per_entity` nearest entity
//!    nodes with cosine >= `anchor_min_score` or whose name holds every word of the
//!    question entity ("Rainwater": `James Rainwater`), in found order, at most
//!    `max_anchors`. When no question entity gives an anchor, the whole question is the
//!    query (cosine only).
//! 3. Ego graph: the relations within `depth` hops of the anchors; the
//!    `neighbor_candidate_multiplier x neighbor_top_k` holding the most question terms (then
//!    anchor order) are rendered `A --rel--> B` and reranked; the best `neighbor_top_k` kept.
//! 4. Paths (two anchors or more): simple paths between anchors of at most `max_hops`
//!    relations (undirected), between anchors of different question entities when there
//!    are several; shortest first then most question terms, the
//!    `path_candidate_multiplier x top_k_paths` first rendered `A -[rel]-> B ; B -[rel2]-> C`
//!    and reranked; the best `top_k_paths` kept.
//!
//! The rerank score is the cosine between the question and the rendering, plus
//! [`LEXICAL_WEIGHT`] x the share of the question's terms, other than the anchors' names,
//! that the rendering holds (compared without diacritics). The lexical part matters where
//! the embedder is weak: with MiniLM, Vietnamese renderings get near-equal cosines, and
//! "giải thưởng" (awards) must still prefer `--đoạt giải-->` edges.
//!
//! No anchor, or anchors with nothing around them: no contexts and a note (the answer then
//! says the evidence is insufficient rather than inventing one).

mod around;
mod settings;
use std::collections::HashSet;
use std::time::Instant;

use rhizome_core::config::Section;
use rhizome_core::text::bm25_terms;
use rhizome_core::{dot, EmbedKind, Result, Scored, VectorKind};
use serde_json::json;

pub use self::settings::MultihopConfig;
use crate::embed_question;
use crate::graph::Graph;
use crate::paths::{ego_relations, path_nodes, relation_sources, render_path, simple_paths};
use crate::query_entities::{embed_text, fold, whole_graph_and_entities};
use crate::{ms, Context, ContextKind, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

/// Relations of the ego graph looked at before the candidates are picked (bounds the
/// work around hub entities).
const EGO_POOL: usize = 5000;
/// Paths enumerated before the candidates are picked, at least.
const PATH_POOL: usize = 200;
/// Weight of the lexical part of the rerank score: cosine + this x the share of the
/// question's terms (other than the anchors' names) that the rendering holds.
const LEXICAL_WEIGHT: f32 = 0.5;

pub struct Multihop;

/// An anchor node and the query that found it.
pub(crate) struct Anchor {
    node: u32,
    score: f32,
    query: String,
}

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Multihop,
    description: "Anchors, ego-graph edges and paths between anchors",
    reads_graph: true,
    settings: &[&MultihopConfig::KIND],
    retriever: |_| Box::new(Multihop),
    prompts: &[],
}];

impl Retriever for Multihop {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let cfg = env.config.section::<MultihopConfig>();
        let mut out = Retrieval::default();
        let (whole, qe) = whole_graph_and_entities(env, question, "query.multihop", &mut out)?;
        let q = embed_question(env, question, &mut out.timings_ms)?;

        let (g, anchors, rejected) = match whole {
            Some(g) => {
                let hits = entity_hits(env, &qe.names, &q, false, &mut out)?;
                let (anchors, rejected) = find_anchors(env, &g, &qe.names, hits, question, &q, &mut out)?;
                (g, anchors, rejected)
            }
            None => around::anchors_around(env, &qe.names, question, &q, &mut out)?,
        };
        out.extra.insert("anchors".into(), anchors_json(&g, &qe.names, qe.by, &anchors, rejected));
        if anchors.is_empty() {
            out.notes.push(format!(
                "no entity of the graph is close enough to the question (anchor_min_score {}): \
                 not enough evidence",
                cfg.anchor_min_score
            ));
            return Ok(out);
        }
        let nodes: Vec<u32> = anchors.iter().map(|a| a.node).collect();
        let terms = QuestionTerms::new(&g, question, &nodes);

        // Candidates: ego-graph edges, and paths when there are two anchors or more.
        let t = Instant::now();
        let pool = ego_relations(&g, &nodes, cfg.depth, EGO_POOL);
        let edge_cands = pick_by_terms(
            &pool,
            |&r| g.render_relation(r),
            &terms,
            |_| 0,
            cfg.neighbor_candidate_multiplier * cfg.neighbor_top_k,
        );
        out.timings_ms.insert("ego".into(), ms(t));
        let mut path_cands = Vec::new();
        if nodes.len() >= 2 {
            let t = Instant::now();
            let n = cfg.path_candidate_multiplier * cfg.top_k_paths;
            let mut pool = simple_paths(&g, &nodes, cfg.max_hops, n.max(PATH_POOL));
            // With several question entities, link anchors of different ones (a path
            // between two near-namesakes of one entity says little).
            let group = |node: u32| anchors.iter().find(|a| a.node == node).map(|a| a.query.as_str());
            let groups: HashSet<&str> = anchors.iter().map(|a| a.query.as_str()).collect();
            if groups.len() >= 2 {
                pool.retain(|p| {
                    let ends = path_nodes(&g, p);
                    group(ends[0]) != group(ends[ends.len() - 1])
                });
            }
            path_cands = pick_by_terms(&pool, |p| render_path(&g, p), &terms, |p| p.len(), n);
            out.timings_ms.insert("paths".into(), ms(t));
        } else {
            out.notes.push("one anchor only: no paths between anchors".into());
        }

        // Rerank both with one embedding call.
        let t = Instant::now();
        let texts: Vec<String> =
            edge_cands.iter().map(|c| c.1.clone()).chain(path_cands.iter().map(|c| c.1.clone())).collect();
        let vecs = if texts.is_empty() { Vec::new() } else { env.embedder.embed(&texts, EmbedKind::Passage)? };
        let lexical = LEXICAL_WEIGHT * env.embedder.cosine_scale();
        let score = |i: usize| dot(&q, &vecs[i]) + lexical * terms.share(&texts[i]);
        let n_edges = edge_cands.len();
        let edges = keep_best(edge_cands, score, cfg.neighbor_top_k);
        let paths = keep_best(path_cands, |i| score(n_edges + i), cfg.top_k_paths);
        out.timings_ms.insert("rerank".into(), ms(t));

        let t = Instant::now();
        let edge_rels: Vec<u32> = edges.iter().map(|e| e.0).collect();
        let path_rels: Vec<u32> = paths.iter().flat_map(|p| p.0.iter().copied()).collect();
        let all: Vec<u32> = edge_rels.iter().chain(&path_rels).copied().collect();
        let sources = relation_sources(env.store, &g, &all)?;
        let source_of = |r: u32| &sources[all.iter().position(|&x| x == r).unwrap_or(0)];
        for (r, text, score) in &edges {
            let (source, title) = source_of(*r).clone();
            let id = g.relations[*r as usize].id.clone();
            out.contexts.push(Context {
                kind: ContextKind::Edge,
                id,
                text: text.clone(),
                score: *score,
                source,
                title,
                pages: None,
            });
        }
        for (p, text, score) in &paths {
            let mut srcs: Vec<String> = Vec::new();
            for &r in p {
                let s = &source_of(r).0;
                if !srcs.contains(s) {
                    srcs.push(s.clone());
                }
            }
            let title = p.iter().map(|&r| source_of(r).1.clone()).find(|t| !t.is_empty()).unwrap_or_default();
            let id = p.iter().map(|&r| g.relations[r as usize].id.as_str()).collect::<Vec<_>>().join(",");
            out.contexts.push(Context {
                kind: ContextKind::Path,
                id,
                text: text.clone(),
                score: *score,
                source: srcs.join(" ; "),
                title,
                pages: None,
            });
            out.paths.push(text.clone());
        }
        out.timings_ms.insert("sources".into(), ms(t));
        if out.contexts.is_empty() {
            out.notes.push("the anchors have no relations and no paths link them: not enough evidence".into());
        }
        Ok(out)
    }
}

/// The entity hits anchors are chosen from: each question entity's (embedded as an entity
/// name), and the whole question's when it was searched already.
pub(super) struct EntityHits {
    pub(super) names: Vec<Vec<Scored>>,
    pub(super) question: Option<Vec<Scored>>,
}

/// Search the entity vectors for each of `names` (embedded as entity names) and, when
/// `with_question`, for the question `q`: `anchor_per_entity` hits each.
pub(super) fn entity_hits(
    env: &QueryEnv,
    names: &[String],
    q: &[f32],
    with_question: bool,
    out: &mut Retrieval,
) -> Result<EntityHits> {
    let k = env.config.section::<MultihopConfig>().anchor_per_entity;
    let texts: Vec<String> = names.iter().map(|n| embed_text(n)).collect();
    let t = Instant::now();
    let vecs = if texts.is_empty() { Vec::new() } else { env.embedder.embed(&texts, EmbedKind::Passage)? };
    out.timings_ms.insert("embed_entities".into(), ms(t));
    let t = Instant::now();
    let names = vecs.iter().map(|v| env.store.vector_search(VectorKind::Entity, v, k)).collect::<Result<Vec<_>>>()?;
    let question = if with_question { Some(env.store.vector_search(VectorKind::Entity, q, k)?) } else { None };
    *out.timings_ms.entry("anchors".into()).or_default() += ms(t);
    Ok(EntityHits { names, question })
}

/// Anchors for the question entities `names` from their `hits`, or for the whole question
/// when they give none; also the candidates under `anchor_min_score`.
fn find_anchors(
    env: &QueryEnv,
    g: &Graph,
    names: &[String],
    hits: EntityHits,
    question: &str,
    q: &[f32],
    out: &mut Retrieval,
) -> Result<(Vec<Anchor>, Vec<serde_json::Value>)> {
    let cfg = env.config.section::<MultihopConfig>();
    let t = Instant::now();
    let mut anchors: Vec<Anchor> = Vec::new();
    let mut rejected = Vec::new();
    let mut take = |query: &str, hits: Vec<Scored>, anchors: &mut Vec<Anchor>| {
        for hit in hits {
            let Some(node) = g.entity(&hit.id) else { continue };
            let named = names_words_of(&g.entity_names[node as usize], query);
            if hit.score < cfg.anchor_min_score && !named {
                rejected.push(json!({"name": g.entity_names[node as usize], "score": hit.score, "query": query}));
            } else if anchors.len() < cfg.max_anchors && !anchors.iter().any(|a| a.node == node) {
                anchors.push(Anchor { node, score: hit.score, query: query.to_string() });
            }
        }
    };
    for (name, h) in names.iter().zip(hits.names) {
        take(name, h, &mut anchors);
    }
    if anchors.is_empty() {
        if !names.is_empty() {
            out.notes.push(
                "no question entity matched an entity node: the whole question was \
                used to find anchors"
                    .into(),
            );
        }
        let h = match hits.question {
            Some(h) => h,
            None => env.store.vector_search(VectorKind::Entity, q, cfg.anchor_per_entity)?,
        };
        take(question, h, &mut anchors);
    }
    *out.timings_ms.entry("anchors".into()).or_default() += ms(t);
    Ok((anchors, rejected))
}

/// True when `name` holds every word of `query` (folded; for CJK, the characters in a
/// row): "Rainwater" names `James Rainwater`, "Ørsted" `Huy chương H. C. Ørsted`.
fn names_words_of(name: &str, query: &str) -> bool {
    let (name, query) = (fold(name), fold(query));
    if query.is_empty() {
        return false;
    }
    if query.chars().any(rhizome_core::text::is_cjk) {
        return name.contains(&query);
    }
    let words: HashSet<&str> = name.split(' ').collect();
    query.split(' ').all(|w| words.contains(w))
}

fn anchors_json(
    g: &Graph,
    names: &[String],
    by: &str,
    anchors: &[Anchor],
    rejected: Vec<serde_json::Value>,
) -> serde_json::Value {
    let nodes: Vec<_> = anchors
        .iter()
        .map(|a| {
            json!({
                "name": g.entity_names[a.node as usize],
                "id": g.entity_ids[a.node as usize],
                "score": a.score,
                "query": a.query,
            })
        })
        .collect();
    json!({
        "question_entities": names,
        "found_by": by,
        "nodes": nodes,
        "below_min_score": rejected,
    })
}

/// The question's terms (BM25 terms, folded: typed without diacritics they still match),
/// less those of the anchors' names, which every edge around an anchor holds.
struct QuestionTerms(HashSet<String>);

impl QuestionTerms {
    fn new(g: &Graph, question: &str, anchors: &[u32]) -> Self {
        let mut t = folded_terms(question);
        for &a in anchors {
            for x in folded_terms(&g.entity_names[a as usize]) {
                t.remove(&x);
            }
        }
        QuestionTerms(t)
    }
    /// How many of the terms `text` holds.
    fn count(&self, text: &str) -> usize {
        folded_terms(text).intersection(&self.0).count()
    }
    /// The share of the terms `text` holds (0 when there are none).
    fn share(&self, text: &str) -> f32 {
        if self.0.is_empty() {
            0.0
        } else {
            self.count(text) as f32 / self.0.len() as f32
        }
    }
}

fn folded_terms(text: &str) -> HashSet<String> {
    bm25_terms(text).iter().map(|t| fold(t)).filter(|t| !t.is_empty()).collect()
}

/// The `n` items of `pool` to rerank: by `group` (ascending: e.g. path length), then by how
/// many question terms their rendering holds (descending), then pool order.
/// Returns (item, rendering).
fn pick_by_terms<T: Clone>(
    pool: &[T],
    render: impl Fn(&T) -> String,
    terms: &QuestionTerms,
    group: impl Fn(&T) -> usize,
    n: usize,
) -> Vec<(T, String)> {
    let mut scored: Vec<(usize, usize, usize, T, String)> = pool
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let text = render(item);
            (group(item), terms.count(&text), i, item.clone(), text)
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    scored.into_iter().take(n).map(|(_, _, _, item, text)| (item, text)).collect()
}

/// The best `k` candidates by `score(index)`, ties by candidate order.
/// Returns (item, rendering, score).
fn keep_best<T>(cands: Vec<(T, String)>, score: impl Fn(usize) -> f32, k: usize) -> Vec<(T, String, f32)> {
    let mut scored: Vec<(usize, f32)> = (0..cands.len()).map(|i| (i, score(i))).collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(k);
    let mut cands: Vec<Option<(T, String)>> = cands.into_iter().map(Some).collect();
    scored.iter().filter_map(|&(i, s)| cands[i].take().map(|(item, text)| (item, text, s))).collect()
}
