//! Graph reasoning of `graph-enhanced`: chunk expansion through SIMILAR_TO and NEXT_CHUNK
//! links, and multi-hop entity paths.
//!
//! Expansion walks breadth first from each seed chunk (the best `modes.seed_chunks` of
//! the hybrid ranking) up to `modes.max_depth` hops. A chunk reached over a SIMILAR_TO
//! edge scores its parent's score times the edge's cosine; over a NEXT_CHUNK link (the
//! previous or next chunk of the same document) times `similar.threshold`, i.e. as the
//! weakest SIMILAR_TO edge would. Each chunk keeps its best way in. Of the chunks reached
//! that are not already among the `retrieval.top_k` hybrid chunks, the best
//! `modes.max_chunks` are added to them (so graph-enhanced returns up to top_k +
//! max_chunks chunks), ordered by score. `extra.expanded` records each added chunk's seed,
//! parent, edge type, depth and score.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use rhizome_core::Result;
use serde_json::json;

use super::EntitySide;
use crate::multipath::memo;
use crate::paths::{render_path, simple_paths};
use crate::{ms, Context, ContextKind, Graph, ModesConfig, MultihopConfig, QueryEnv, Retrieval};

/// Entities of each seed chunk used as path anchors (most mentioned first).
const ANCHORS_PER_CHUNK: usize = 3;
/// Question entities used as path anchors.
const QUESTION_ANCHORS: usize = 5;
/// Paths kept.
const MAX_PATHS: usize = 10;

/// Per document, its chunks in ordinal order; per chunk, its place there.
struct DocOrder {
    docs: Vec<Vec<u32>>,
    place: Vec<(u32, u32)>,
}

static DOC_ORDERS: Mutex<Vec<(Weak<Graph>, Arc<DocOrder>)>> = Mutex::new(Vec::new());

impl DocOrder {
    fn build(g: &Graph) -> DocOrder {
        let mut by_doc: HashMap<&str, Vec<u32>> = HashMap::new();
        for (c, d) in g.chunk_docs.iter().enumerate() {
            by_doc.entry(d.as_str()).or_default().push(c as u32);
        }
        let mut keys: Vec<&str> = by_doc.keys().copied().collect();
        keys.sort();
        let mut docs = Vec::with_capacity(keys.len());
        let mut place = vec![(0, 0); g.chunk_ids.len()];
        for k in keys {
            let mut cs = by_doc.remove(k).unwrap_or_default();
            cs.sort_by_key(|&c| (g.chunk_ordinals[c as usize], c));
            for (i, &c) in cs.iter().enumerate() {
                place[c as usize] = (docs.len() as u32, i as u32);
            }
            docs.push(cs);
        }
        DocOrder { docs, place }
    }

    /// The previous and next chunk of `c` in its document.
    fn next_chunks(&self, c: u32) -> Vec<u32> {
        let (d, i) = self.place[c as usize];
        let doc = &self.docs[d as usize];
        let mut out = Vec::new();
        if i > 0 {
            out.push(doc[i as usize - 1]);
        }
        if let Some(&n) = doc.get(i as usize + 1) {
            out.push(n);
        }
        out
    }
}

/// One way a chunk was reached.
#[derive(Debug, Clone)]
struct Reached {
    score: f32,
    seed: u32,
    parent: u32,
    via: &'static str,
    depth: usize,
}

/// What graph reasoning returns.
pub(super) struct Reasoned {
    /// The top_k hybrid chunks and the chunks added, best first.
    pub chunks: Vec<(u32, f32)>,
    /// The entity paths as contexts.
    pub paths: Vec<Context>,
}

/// Expand from the seeds of `ranked` and merge; also the entity paths.
pub(super) fn reason(
    env: &QueryEnv,
    g: &Arc<Graph>,
    ranked: Vec<(u32, f32)>,
    side: &EntitySide,
    out: &mut Retrieval,
) -> Result<Reasoned> {
    let cfg = env.config.section::<ModesConfig>();
    let t = Instant::now();
    let order = memo(&DOC_ORDERS, g, DocOrder::build);
    let seeds: Vec<(u32, f32)> = ranked.iter().take(cfg.seed_chunks).copied().collect();
    let reached = walk(g, &order, &seeds, cfg.max_depth, env.config.similar.threshold);
    let top_k = env.config.retrieval.top_k;
    let mut merged: Vec<(u32, f32)> = ranked.iter().take(top_k).copied().collect();
    let kept: HashSet<u32> = merged.iter().map(|x| x.0).collect();
    let reached_count = reached.len();
    let mut added: Vec<(u32, Reached)> = reached.into_iter().filter(|(c, _)| !kept.contains(c)).collect();
    added.sort_by(|a, b| {
        b.1.score.total_cmp(&a.1.score).then_with(|| g.chunk_ids[a.0 as usize].cmp(&g.chunk_ids[b.0 as usize]))
    });
    added.truncate(cfg.max_chunks);
    merged.extend(added.iter().map(|(c, r)| (*c, r.score)));
    merged.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| g.chunk_ids[a.0 as usize].cmp(&g.chunk_ids[b.0 as usize])));
    let id = |c: u32| g.chunk_ids[c as usize].clone();
    let provenance: Vec<serde_json::Value> = added
        .iter()
        .map(|(c, r)| {
            json!({"chunk": id(*c), "seed": id(r.seed), "parent": id(r.parent), "via": r.via,
                "depth": r.depth, "score": r.score})
        })
        .collect();
    out.extra.insert("reached_chunks".into(), json!(reached_count));
    out.extra.insert("seed_chunks".into(), json!(seeds.iter().map(|s| id(s.0)).collect::<Vec<_>>()));
    out.extra.insert("expanded".into(), json!(provenance));
    out.timings_ms.insert("expand".into(), ms(t));

    let t = Instant::now();
    let paths = entity_paths(env, g, &seeds, side, out)?;
    out.timings_ms.insert("paths".into(), ms(t));
    Ok(Reasoned { chunks: merged, paths })
}

/// Breadth-first expansion; each non-seed chunk with its best way in.
fn walk(
    g: &Graph,
    order: &DocOrder,
    seeds: &[(u32, f32)],
    max_depth: usize,
    next_factor: f32,
) -> HashMap<u32, Reached> {
    let is_seed: HashSet<u32> = seeds.iter().map(|s| s.0).collect();
    let mut best: HashMap<u32, Reached> = HashMap::new();
    for &(seed, score) in seeds {
        let mut frontier = vec![(seed, score)];
        let mut visited: HashSet<u32> = HashSet::from([seed]);
        for depth in 1..=max_depth {
            let mut next = Vec::new();
            for &(u, su) in &frontier {
                let mut edges: Vec<(u32, f32, &'static str)> =
                    g.similar[u as usize].iter().map(|&(v, cos)| (v, cos, "SIMILAR_TO")).collect();
                edges.extend(order.next_chunks(u).into_iter().map(|v| (v, next_factor, "NEXT_CHUNK")));
                for (v, factor, via) in edges {
                    let s = su * factor;
                    if !is_seed.contains(&v) && best.get(&v).is_none_or(|r| s > r.score) {
                        best.insert(v, Reached { score: s, seed, parent: u, via, depth });
                    }
                    if visited.insert(v) {
                        next.push((v, s));
                    }
                }
            }
            frontier = next;
        }
    }
    best
}

/// Paths between the question's entities and the entities of the seed chunks: rendered
/// into `out.paths`, and returned as contexts.
fn entity_paths(
    env: &QueryEnv,
    g: &Graph,
    seeds: &[(u32, f32)],
    side: &EntitySide,
    out: &mut Retrieval,
) -> Result<Vec<Context>> {
    let mut contexts = Vec::new();
    let mut anchors: Vec<u32> = side.entities.iter().take(QUESTION_ANCHORS).map(|x| x.0).collect();
    for &(c, _) in seeds {
        let mut es = g.chunk_entities[c as usize].clone();
        es.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        anchors.extend(es.iter().take(ANCHORS_PER_CHUNK).map(|x| x.0));
    }
    let mut seen = HashSet::new();
    anchors.retain(|a| seen.insert(*a));
    let hops = env.config.section::<MultihopConfig>().max_hops;
    let paths = simple_paths(g, &anchors, hops, MAX_PATHS);
    let rels: Vec<u32> = paths.iter().filter_map(|p| p.first().copied()).collect();
    let sources = crate::paths::relation_sources(env.store, g, &rels)?;
    for (p, (source, title)) in paths.iter().zip(sources) {
        let text = render_path(g, p);
        out.paths.push(text.clone());
        let id: Vec<&str> = p.iter().map(|&r| g.relations[r as usize].id.as_str()).collect();
        contexts.push(Context {
            kind: ContextKind::Path,
            id: id.join(","),
            text,
            score: 1.0 / p.len() as f32,
            source,
            title,
            pages: None,
        });
    }
    let names: Vec<&str> = anchors.iter().map(|&a| g.entity_names[a as usize].as_str()).collect();
    out.extra.insert("path_anchors".into(), json!(names));
    Ok(contexts)
}
