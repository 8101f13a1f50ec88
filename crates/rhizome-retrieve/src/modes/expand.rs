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
//! parent, edge type, depth and score. The links of the chunks the walk goes through are
//! gathered first, level by level: from the whole graph, or on a large index from the
//! store ([`around::chunk_links`]).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use rhizome_core::Result;
use serde_json::json;

use super::around::{self, Links};
use super::{EntityGraph, EntitySide};
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
    seed: String,
    parent: String,
    via: &'static str,
    depth: usize,
}

/// What graph reasoning returns.
pub(super) struct Reasoned {
    /// The top_k hybrid chunks and the chunks added, best first.
    pub chunks: Vec<(String, f32)>,
    /// The entity paths as contexts.
    pub paths: Vec<Context>,
}

/// Best first, ties by chunk id.
fn by_score<T>(v: &mut [(String, T)], score: impl Fn(&T) -> f32) {
    v.sort_by(|a, b| score(&b.1).total_cmp(&score(&a.1)).then_with(|| a.0.cmp(&b.0)));
}

/// Expand from the seeds of `ranked` and merge; also the entity paths.
pub(super) fn reason(
    env: &QueryEnv,
    eg: &EntityGraph,
    ranked: Vec<(String, f32)>,
    side: &EntitySide,
    out: &mut Retrieval,
) -> Result<Reasoned> {
    let cfg = env.config.section::<ModesConfig>();
    let t = Instant::now();
    let seeds: Vec<(String, f32)> = ranked.iter().take(cfg.seed_chunks).cloned().collect();
    let next_factor = env.config.similar.threshold;
    let links = gather(env, eg, &seeds, cfg.max_depth, next_factor)?;
    let reached = walk(&links, &seeds, cfg.max_depth);
    let top_k = env.config.retrieval.top_k;
    let mut merged: Vec<(String, f32)> = ranked.into_iter().take(top_k).collect();
    let kept: HashSet<&str> = merged.iter().map(|x| x.0.as_str()).collect();
    let reached_count = reached.len();
    let mut added: Vec<(String, Reached)> = reached.into_iter().filter(|(c, _)| !kept.contains(c.as_str())).collect();
    by_score(&mut added, |r| r.score);
    added.truncate(cfg.max_chunks);
    merged.extend(added.iter().map(|(c, r)| (c.clone(), r.score)));
    by_score(&mut merged, |s| *s);
    let provenance: Vec<serde_json::Value> = added
        .iter()
        .map(|(c, r)| {
            json!({"chunk": c, "seed": r.seed, "parent": r.parent, "via": r.via, "depth": r.depth, "score": r.score})
        })
        .collect();
    out.extra.insert("reached_chunks".into(), json!(reached_count));
    out.extra.insert("seed_chunks".into(), json!(seeds.iter().map(|s| &s.0).collect::<Vec<_>>()));
    out.extra.insert("expanded".into(), json!(provenance));
    out.timings_ms.insert("expand".into(), ms(t));

    let t = Instant::now();
    let paths = entity_paths(env, eg, &seeds, side, out)?;
    out.timings_ms.insert("paths".into(), ms(t));
    Ok(Reasoned { chunks: merged, paths })
}

/// The links of every chunk within `max_depth - 1` hops of a seed: those the walk goes
/// through, read a level at a time.
fn gather(env: &QueryEnv, eg: &EntityGraph, seeds: &[(String, f32)], max_depth: usize, next: f32) -> Result<Links> {
    let mut links = Links::new();
    let mut level: Vec<String> = seeds.iter().map(|s| s.0.clone()).collect();
    for _ in 0..max_depth {
        let mut new: Vec<String> = level.into_iter().filter(|c| !links.contains_key(c)).collect();
        new.sort();
        new.dedup();
        if new.is_empty() {
            break;
        }
        let found = if eg.whole { whole_links(&eg.g, &new, next) } else { around::chunk_links(env, &new, next)? };
        level = found.values().flatten().map(|l| l.0.clone()).collect();
        links.extend(found);
    }
    Ok(links)
}

/// The links of `chunks` in the whole graph.
fn whole_links(g: &Arc<Graph>, chunks: &[String], next_factor: f32) -> Links {
    let order = memo(&DOC_ORDERS, g, DocOrder::build);
    let id = |c: u32| g.chunk_ids[c as usize].clone();
    chunks
        .iter()
        .map(|c| {
            let mut l: Vec<(String, f32, &'static str)> = Vec::new();
            if let Some(u) = g.chunk(c) {
                l.extend(g.similar[u as usize].iter().map(|&(v, cos)| (id(v), cos, "SIMILAR_TO")));
                l.extend(order.next_chunks(u).into_iter().map(|v| (id(v), next_factor, "NEXT_CHUNK")));
            }
            (c.clone(), l)
        })
        .collect()
}

/// Breadth-first expansion; each non-seed chunk with its best way in.
fn walk(links: &Links, seeds: &[(String, f32)], max_depth: usize) -> HashMap<String, Reached> {
    let is_seed: HashSet<&str> = seeds.iter().map(|s| s.0.as_str()).collect();
    let mut best: HashMap<String, Reached> = HashMap::new();
    for (seed, score) in seeds {
        let mut frontier: Vec<(&str, f32)> = vec![(seed.as_str(), *score)];
        let mut visited: HashSet<&str> = HashSet::from([seed.as_str()]);
        for depth in 1..=max_depth {
            let mut next = Vec::new();
            for &(u, su) in &frontier {
                for (v, factor, via) in links.get(u).map_or(&[][..], Vec::as_slice) {
                    let s = su * factor;
                    if !is_seed.contains(v.as_str()) && best.get(v).is_none_or(|r| s > r.score) {
                        let parent = u.to_string();
                        best.insert(v.clone(), Reached { score: s, seed: seed.clone(), parent, via, depth });
                    }
                    if visited.insert(v.as_str()) {
                        next.push((v.as_str(), s));
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
    eg: &EntityGraph,
    seeds: &[(String, f32)],
    side: &EntitySide,
    out: &mut Retrieval,
) -> Result<Vec<Context>> {
    let mut contexts = Vec::new();
    let eid = |e: u32| eg.g.entity_ids[e as usize].clone();
    let mut anchors: Vec<String> = side.entities.iter().take(QUESTION_ANCHORS).map(|x| eid(x.0)).collect();
    let seed_ids: Vec<String> = seeds.iter().map(|s| s.0.clone()).collect();
    let mentions: HashMap<String, Vec<(String, u32)>> = if eg.whole {
        let g = &eg.g;
        let of = |c: u32| g.chunk_entities[c as usize].iter().map(|&(e, n)| (eid(e), n)).collect();
        seed_ids.iter().filter_map(|c| g.chunk(c).map(|n| (c.clone(), of(n)))).collect()
    } else {
        around::chunk_mentions(env, &seed_ids)?
    };
    for c in &seed_ids {
        let mut es = mentions.get(c).cloned().unwrap_or_default();
        es.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        anchors.extend(es.into_iter().take(ANCHORS_PER_CHUNK).map(|x| x.0));
    }
    let mut seen = HashSet::new();
    anchors.retain(|a| seen.insert(a.clone()));
    let hops = env.config.section::<MultihopConfig>().max_hops;
    let g = if eg.whole { eg.g.clone() } else { Arc::new(around::path_graph(env, &anchors, hops, out)?) };
    let nodes: Vec<u32> = anchors.iter().filter_map(|a| g.entity(a)).collect();
    let paths = simple_paths(&g, &nodes, hops, MAX_PATHS);
    let rels: Vec<u32> = paths.iter().filter_map(|p| p.first().copied()).collect();
    let sources = crate::paths::relation_sources(env.store, &g, &rels)?;
    for (p, (source, title)) in paths.iter().zip(sources) {
        let text = render_path(&g, p);
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
    let names: Vec<&str> = nodes.iter().map(|&a| g.entity_names[a as usize].as_str()).collect();
    out.extra.insert("path_anchors".into(), json!(names));
    Ok(contexts)
}
