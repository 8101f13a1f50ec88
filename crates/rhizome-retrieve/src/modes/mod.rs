//! The Neo4j GraphRAG-style modes.
//!
//! - `chunk-only`: dense + BM25 chunk retrieval, fused as in `basic` (same results).
//! - `entity-only`: the question's nearest entities (entity vectors), the relationships
//!   between them and their neighbours, and the chunks that mention them (MENTIONED_IN),
//!   ranked by the summed weights of the entities they mention: `exp((cos - best cos) /
//!   ENTITY_TEMPERATURE)` times how specific the entity is (rare entities count more).
//! - `hybrid`: both: chunk-only's fused score plus [`W_ENTITY`] x the entity-side chunk
//!   score (normalised to 0..1); with `retrieval.fusion = "rrf"` the entity ranking joins
//!   as a third reciprocal-rank list with that weight.
//! - `graph-enhanced`: hybrid, then graph reasoning ([`expand`]): from the best
//!   `modes.seed_chunks` chunks through SIMILAR_TO and NEXT_CHUNK links up to
//!   `modes.max_depth` hops (at most `modes.max_chunks` chunks added), and multi-hop entity
//!   paths between the question's entities and the entities of those seed chunks.
//!
//! Contexts: chunks first (at most `retrieval.top_k`; graph-enhanced adds up to
//! `modes.max_chunks` expanded ones), then paths, entities and relationships.
//!
//! On an index above `retrieval.whole_graph_up_to` entities the whole graph is not loaded
//! ([`around`]); a mode reads what its question touches through the store, and its
//! contexts are the same: the neighbourhood of the question's nearest entities (their
//! relations, the chunks that mention them, the mentions there) and the index's chunk
//! count; for graph-enhanced also, level by level, the SIMILAR_TO edges and previous and
//! next chunks of the chunks the expansion goes through
//! ([`rhizome_core::StoreRead::chunk_links`]), the mentions of the seed chunks, and the
//! neighbourhood of the entities near enough to the path anchors to hold every path.

mod around;
mod expand;
mod settings;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use rhizome_core::config::Section;
use rhizome_core::{Result, VectorKind};
use serde_json::json;

pub use self::settings::ModesConfig;
use crate::basic::{rrf, score_fusion};
use crate::multipath::idf_share;
use crate::paths::relation_sources;
use crate::{embed_question, timed};
use crate::{ms, Context, ContextKind, Graph, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

/// Entities taken from the question's vector search.
pub(crate) const ENTITY_K: usize = 10;
/// Relationships of those entities kept.
pub(crate) const MAX_RELATIONSHIPS: usize = 20;
/// Weight of the entity-side chunk score in `hybrid` (the BM25 weight of `basic` is 0.1).
pub(crate) const W_ENTITY: f32 = 0.1;
/// How fast an entity's weight falls with its cosine below the best entity's: one
/// temperature below weighs e^-1 as much. Summing plain cosines lets many loosely related
/// entities outvote the one the question names (MuSiQue sample, entity-only R@2: 0.25
/// summed, 0.36 with this weighting).
pub(crate) const ENTITY_TEMPERATURE: f32 = 0.05;

/// One of the four modes (`chunk-only`, `entity-only`, `hybrid`, `graph-enhanced`).
pub struct Mode(pub Method);

/// The registry entries of this module: one per mode, all run by [`Mode`].
pub(crate) const METHODS: &[MethodEntry] = &[
    mode(Method::ChunkOnly, "Neo4j-style: chunks only", false),
    mode(Method::EntityOnly, "Neo4j-style: entities and their relations only", true),
    mode(Method::Hybrid, "Neo4j-style: chunks and entities", true),
    mode(Method::GraphEnhanced, "Neo4j-style: chunks, then the graph around their entities", true),
];

const fn mode(method: Method, description: &'static str, reads_graph: bool) -> MethodEntry {
    MethodEntry {
        method,
        description,
        reads_graph,
        settings: &[&ModesConfig::KIND],
        retriever: |m| Box::new(Mode(m)),
        prompts: &[],
    }
}

impl Retriever for Mode {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let mut out = Retrieval::default();
        let top_k = env.config.retrieval.top_k;
        let q = embed_question(env, question, &mut out.timings_ms)?;
        match self.0 {
            Method::ChunkOnly => {
                let fused = chunk_side(env, question, &q, &mut out)?;
                let t = Instant::now();
                push_chunks(&rank(fused), top_k, env, &mut out)?;
                out.timings_ms.insert("fetch".into(), ms(t));
            }
            Method::EntityOnly => {
                let (eg, side) = entity_side(env, &q, &mut out)?;
                let t = Instant::now();
                push_chunks(&side.chunks, top_k, env, &mut out)?;
                push_graph(env, &eg.g, &side, &mut out)?;
                out.timings_ms.insert("fetch".into(), ms(t));
            }
            Method::Hybrid | Method::GraphEnhanced => {
                let fused = chunk_side(env, question, &q, &mut out)?;
                let (eg, side) = entity_side(env, &q, &mut out)?;
                let known = eg.whole.then_some(&*eg.g);
                let ranked = timed(&mut out.timings_ms, "fuse", || hybrid(env, known, fused, &side));
                // Graph reasoning returns the top_k chunks and those it adds.
                let (ranked, paths) = if self.0 == Method::GraphEnhanced {
                    let r = expand::reason(env, &eg, ranked, &side, &mut out)?;
                    (r.chunks, r.paths)
                } else {
                    (ranked, Vec::new())
                };
                let limit = if self.0 == Method::GraphEnhanced { ranked.len() } else { top_k };
                let t = Instant::now();
                push_chunks(&ranked, limit, env, &mut out)?;
                out.contexts.extend(paths);
                push_graph(env, &eg.g, &side, &mut out)?;
                out.timings_ms.insert("fetch".into(), ms(t));
            }
            other => return Err(rhizome_core::Error::bad_input(format!("--method {other}"), "not a Neo4j-style mode")),
        }
        Ok(out)
    }
}

/// The graph the entity side reads, numbered in the whole graph's order: the whole graph,
/// or on a large index the neighbourhood of the question's entities ([`around`]).
pub(crate) struct EntityGraph {
    pub g: Arc<Graph>,
    /// True when `g` is the whole graph.
    pub whole: bool,
    /// How many chunks the index holds.
    pub chunks: usize,
}

/// Dense + BM25 over chunks, fused as `basic` fuses them: chunk id -> score.
fn chunk_side(env: &QueryEnv, question: &str, q: &[f32], out: &mut Retrieval) -> Result<HashMap<String, f32>> {
    let cfg = &env.config.retrieval;
    let dense = timed(&mut out.timings_ms, "dense", || env.store.vector_search(VectorKind::Chunk, q, cfg.candidates))?;
    let sparse = timed(&mut out.timings_ms, "bm25", || env.store.bm25(question, cfg.candidates))?;
    Ok(match cfg.fusion.as_str() {
        "rrf" => rrf(&dense, &sparse, cfg.dense_weight, cfg.bm25_weight, cfg.rrf_k),
        _ => score_fusion(&dense, &sparse, cfg.dense_weight, cfg.bm25_weight),
    })
}

/// Best first, ties by id.
fn rank(scores: HashMap<String, f32>) -> Vec<(String, f32)> {
    let mut v: Vec<(String, f32)> = scores.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// What the entity side found: entities and relationships with scores, and the chunks
/// that mention the entities, best first.
pub(crate) struct EntitySide {
    pub entities: Vec<(u32, f32)>,
    pub relations: Vec<(u32, f32)>,
    pub chunks: Vec<(String, f32)>,
}

/// The question's nearest entities, the graph they are numbered in, and what the entity
/// side derives from them.
fn entity_side(env: &QueryEnv, q: &[f32], out: &mut Retrieval) -> Result<(EntityGraph, EntitySide)> {
    let t = Instant::now();
    let hits = env.store.vector_search(VectorKind::Entity, q, ENTITY_K)?;
    out.timings_ms.insert("entities".into(), ms(t));
    let eg = around::entity_graph(env, &hits, out)?;
    let g = &*eg.g;
    let entities: Vec<(u32, f32)> =
        hits.into_iter().filter_map(|s| g.entity(&s.id).map(|e| (e, s.score.max(0.0)))).collect();

    let t = Instant::now();
    let score: HashMap<u32, f32> = entities.iter().copied().collect();
    let mut rel: HashMap<u32, f32> = HashMap::new();
    for &(e, _) in &entities {
        for nb in &g.neighbors[e as usize] {
            let r = &g.relations[nb.relation as usize];
            let s = score.get(&r.source).copied().unwrap_or(0.0) + score.get(&r.target).copied().unwrap_or(0.0);
            rel.insert(nb.relation, s);
        }
    }
    let mut relations: Vec<(u32, f32)> = rel.into_iter().collect();
    relations.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(g.relations[b.0 as usize].weight.total_cmp(&g.relations[a.0 as usize].weight))
            .then(a.0.cmp(&b.0))
    });
    relations.truncate(MAX_RELATIONSHIPS);
    out.timings_ms.insert("relationships".into(), ms(t));

    let t = Instant::now();
    let n = eg.chunks;
    let mut chunk: HashMap<u32, f32> = HashMap::new();
    let best = entities.first().map(|x| x.1).unwrap_or(0.0);
    // The temperature is on MiniLM's cosine scale (see `Embedder::cosine_scale`).
    let scale = env.embedder.cosine_scale();
    for &(e, s) in &entities {
        let mentions = &g.entity_chunks[e as usize];
        let w = ((s - best) / (ENTITY_TEMPERATURE * scale)).exp() * idf_share(mentions.len(), n);
        for &(c, _) in mentions {
            *chunk.entry(c).or_default() += w;
        }
    }
    let chunks = rank(chunk.into_iter().map(|(c, s)| (g.chunk_ids[c as usize].clone(), s)).collect());
    out.timings_ms.insert("entity_chunks".into(), ms(t));
    Ok((eg, EntitySide { entities, relations, chunks }))
}

/// Chunk-side scores plus the entity side's (see the module doc), best first; with
/// `known` (the whole graph) only chunks of that graph.
fn hybrid(
    env: &QueryEnv,
    known: Option<&Graph>,
    mut fused: HashMap<String, f32>,
    side: &EntitySide,
) -> Vec<(String, f32)> {
    let cfg = &env.config.retrieval;
    if cfg.fusion == "rrf" {
        for (rank, (c, _)) in side.chunks.iter().take(cfg.candidates).enumerate() {
            *fused.entry(c.clone()).or_default() += W_ENTITY / (cfg.rrf_k + rank as f32 + 1.0);
        }
    } else {
        // A chunk only the entity side found ranked below every dense candidate.
        let floor = fused.values().copied().fold(f32::INFINITY, f32::min);
        let floor = if floor.is_finite() { floor } else { 0.0 };
        let max = side.chunks.first().map(|x| x.1).filter(|m| *m > 0.0).unwrap_or(1.0);
        for (c, s) in side.chunks.iter().take(cfg.candidates) {
            *fused.entry(c.clone()).or_insert(floor) += env.embedder.cosine_scale() * W_ENTITY * s / max;
        }
    }
    let mut ranked = rank(fused);
    if let Some(g) = known {
        ranked.retain(|(id, _)| g.chunk(id).is_some());
    }
    ranked
}

/// The first `limit` chunks as contexts.
fn push_chunks(ranked: &[(String, f32)], limit: usize, env: &QueryEnv, out: &mut Retrieval) -> Result<()> {
    let top = &ranked[..ranked.len().min(limit)];
    let ids: Vec<String> = top.iter().map(|x| x.0.clone()).collect();
    let scores: HashMap<&str, f32> = top.iter().map(|x| (x.0.as_str(), x.1)).collect();
    for c in env.store.chunks(&ids)? {
        let score = scores.get(c.chunk.id.as_str()).copied().unwrap_or(0.0);
        out.contexts.push(Context::of_chunk(c, score));
    }
    Ok(())
}

/// Entities (name, type, description) and relationships (`A --rel--> B`) as contexts.
fn push_graph(env: &QueryEnv, g: &Graph, side: &EntitySide, out: &mut Retrieval) -> Result<()> {
    let ids: Vec<String> = side.entities.iter().map(|&(e, _)| g.entity_ids[e as usize].clone()).collect();
    let rows: HashMap<String, rhizome_core::Entity> =
        env.store.entities(&ids)?.into_iter().map(|e| (e.id.clone(), e)).collect();
    let top_chunk: Vec<u32> = side
        .entities
        .iter()
        .filter_map(|&(e, _)| {
            g.entity_chunks[e as usize].iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0))).map(|x| x.0)
        })
        .collect();
    let docs = crate::paths::chunk_sources(env.store, g, &top_chunk)?;
    for &(e, score) in &side.entities {
        let Some(row) = rows.get(&g.entity_ids[e as usize]) else { continue };
        let origin = g.entity_chunks[e as usize]
            .iter()
            .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
            .and_then(|x| docs.get(&x.0).cloned())
            .unwrap_or_default();
        let text = if row.description.is_empty() {
            format!("{} ({})", row.name, row.entity_type)
        } else {
            format!("{} ({}): {}", row.name, row.entity_type, row.description)
        };
        out.contexts.push(Context {
            kind: ContextKind::Entity,
            id: row.id.clone(),
            text,
            score,
            source: origin.0,
            title: origin.1,
            pages: None,
        });
    }
    let rels: Vec<u32> = side.relations.iter().map(|x| x.0).collect();
    for (&(r, score), (source, title)) in side.relations.iter().zip(relation_sources(env.store, g, &rels)?) {
        out.contexts.push(Context {
            kind: ContextKind::Relationship,
            id: g.relations[r as usize].id.clone(),
            text: g.render_relation(r),
            score,
            source,
            title,
            pages: None,
        });
    }
    out.extra.insert(
        "entities".into(),
        json!(side
            .entities
            .iter()
            .map(|&(e, s)| json!({"name": g.entity_names[e as usize], "score": s}))
            .collect::<Vec<_>>()),
    );
    Ok(())
}
