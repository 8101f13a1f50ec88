//! `multipath`: entity, relationship, chunk and fact discovery by several paths, in the
//! manner of the FalkorDB GraphRAG SDK.
//!
//! 1. Keywords of the question (LLM-free, [`keywords`]): at most `keyword_limit`.
//! 2. Entities by five paths ([`entities`]): keyword vectors, keyword substrings of entity
//!    names, BM25 over entity names (an in-memory index per graph, [`names`]), the
//!    question vector, and SYNONYM edges of what those found; `entity_top_k` per search,
//!    scores summed over paths, at most `max_entities`.
//! 3. Relationships within two hops of the best `expand_entities` entities, at most
//!    `max_relationships`.
//! 4. Chunks by five paths, ranked by cosine with the question plus path evidence
//!    ([`chunks`]), `chunk_top_k` kept; with an LLM and `llm_rerank`, reordered by it.
//! 5. Facts by vector search, `fact_top_k`.
//!
//! Contexts: chunks first (at most `retrieval.top_k`: the ranked passages), then
//! relationships (`A --rel--> B`), facts and entities, each capped by its own setting.

mod around;
mod chunks;
mod entities;
mod keywords;
mod names;
pub(crate) mod rerank;
mod settings;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use rhizome_core::config::Section;
use rhizome_core::{ChunkWithDoc, EmbedKind, Result, VectorKind};
use serde_json::json;

pub(crate) use chunks::idf_share;
pub(crate) use names::{memo, NameIndex as NameSearch};

pub use self::settings::MultipathConfig;
use crate::paths::relation_chunk;
use crate::{embed_question, timed};
use crate::{ms, Context, ContextKind, Graph, Method, MethodEntry, QueryEnv, Retrieval, Retriever};
use entities::{Keyword, ENTITY_PATHS};

/// The `multipath` retriever (see the module documentation for the steps).
pub struct Multipath;

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Multipath,
    description: "Entities, relations, chunks and facts found by several paths",
    reads_graph: true,
    settings: &[&MultipathConfig::KIND],
    retriever: |_| Box::new(Multipath),
    prompts: &[("rerank", include_str!("rerank.txt"))],
}];

/// What the graph side of the question gathered: the graph (the whole one, or the part
/// of it read around the question, numbered in the whole graph's order), the index's
/// chunk count, the discovered entities and the relationships around them, and the
/// first chunk of each fact found (by id).
struct Gathered {
    g: Arc<Graph>,
    chunks: usize,
    found: Vec<entities::Found>,
    rels: Vec<(u32, f32)>,
    fact_chunks: HashMap<String, String>,
}

impl Retriever for Multipath {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let cfg = env.config.section::<MultipathConfig>();
        let mut out = Retrieval::default();
        let whole = timed(&mut out.timings_ms, "graph", || env.whole_graph())?;

        let kws = timed(&mut out.timings_ms, "keywords", || keywords::keywords(question, cfg.keyword_limit));
        let q = embed_question(env, question, &mut out.timings_ms)?;
        let t = Instant::now();
        let kv = if kws.is_empty() { Vec::new() } else { env.embedder.embed(&kws, EmbedKind::Query)? };
        out.timings_ms.insert("embed_keywords".into(), ms(t));
        let keywords: Vec<Keyword> = kws
            .iter()
            .zip(&kv)
            .map(|(k, v)| Keyword { text: k, vector: v, weight: entities::keyword_weight(k) })
            .collect();

        let facts =
            timed(&mut out.timings_ms, "facts", || env.store.vector_search(VectorKind::Fact, &q, cfg.fact_top_k))?;
        let (gathered, searched) = match whole {
            Some(g) => gather_whole(env, g, &cfg, &q, &keywords, &facts, question, &mut out)?,
            None => around::gather(env, &cfg, &q, &keywords, &facts, question, &mut out)?,
        };
        let Gathered { g, chunks: n, found, rels, fact_chunks } = gathered;

        let (mut ranked, mut records) = chunks::rank(env, &g, n, &searched, &keywords, &found, &mut out)?;
        if cfg.llm_rerank {
            llm_rerank(env, question, &mut ranked, &records, &mut out);
        }

        let t = Instant::now();
        build_contexts(env, &g, &ranked, &mut records, &rels, &facts, &fact_chunks, &found, &mut out)?;
        out.timings_ms.insert("fetch".into(), ms(t));

        let mut counts = serde_json::Map::new();
        for (i, name) in ENTITY_PATHS.iter().enumerate() {
            counts.insert(name.to_string(), found.iter().filter(|f| f.paths[i] > 0.0).count().into());
        }
        out.extra.insert("keywords".into(), json!(kws));
        out.extra.insert("entity_paths".into(), counts.into());
        let ents: Vec<serde_json::Value> = found
            .iter()
            .map(|f| {
                let paths: Vec<&str> =
                    ENTITY_PATHS.iter().zip(f.paths).filter(|(_, s)| *s > 0.0).map(|(n, _)| *n).collect();
                json!({"name": g.entity_names[f.entity as usize], "score": f.score, "paths": paths})
            })
            .collect();
        out.extra.insert("entities".into(), ents.into());
        Ok(out)
    }
}

/// [`Gathered`] from the whole graph, and the chunk searches.
#[allow(clippy::too_many_arguments)]
fn gather_whole(
    env: &QueryEnv,
    g: Arc<Graph>,
    cfg: &MultipathConfig,
    q: &[f32],
    keywords: &[Keyword],
    facts: &[rhizome_core::Scored],
    question: &str,
    out: &mut Retrieval,
) -> Result<(Gathered, chunks::Searched)> {
    let es = entities::Whole { g: &g, names: names::NameIndex::of(&g) };
    let found = timed(&mut out.timings_ms, "entities", || entities::discover(env.store, &es, cfg, q, keywords))?;
    let rels = timed(&mut out.timings_ms, "relationships", || {
        entities::expand(&g, &found, cfg.expand_entities, cfg.max_relationships, question)
    });
    let fact_chunks = facts
        .iter()
        .filter_map(|f| {
            let c = g.fact(&f.id).and_then(|i| g.facts[i as usize].chunks.iter().min().copied())?;
            Some((f.id.clone(), g.chunk_ids[c as usize].clone()))
        })
        .collect();
    let searched = chunks::search(env, question, q, g.chunk_ids.len(), out)?;
    Ok((Gathered { chunks: g.chunk_ids.len(), g, found, rels, fact_chunks }, searched))
}

/// Reorder `ranked` by the LLM when one is configured; notes say what happened otherwise.
fn llm_rerank(
    env: &QueryEnv,
    question: &str,
    ranked: &mut Vec<chunks::Ranked>,
    records: &HashMap<u32, ChunkWithDoc>,
    out: &mut Retrieval,
) {
    let Some(llm) = env.llm else {
        out.notes.push("no LLM configured: chunks ranked by cosine and path evidence, LLM rerank skipped".into());
        return;
    };
    let t = Instant::now();
    let passages: Vec<(String, String)> = ranked
        .iter()
        .map(|r| records.get(&r.chunk).map(|c| (c.doc_title.clone(), c.chunk.text.clone())).unwrap_or_default())
        .collect();
    match rerank::rerank(llm, question, &passages) {
        Ok(order) => {
            let old = std::mem::take(ranked);
            *ranked = order.into_iter().filter_map(|i| old.get(i).cloned()).collect();
            out.extra.insert("llm_rerank".into(), json!(true));
        }
        Err(why) => out.notes.push(format!("LLM rerank skipped ({why}): chunks keep their cosine ranking")),
    }
    out.timings_ms.insert("llm_rerank".into(), ms(t));
}

/// Chunks (at most `retrieval.top_k`), relationships, facts, entities.
#[allow(clippy::too_many_arguments)]
fn build_contexts(
    env: &QueryEnv,
    g: &Graph,
    ranked: &[chunks::Ranked],
    records: &mut HashMap<u32, ChunkWithDoc>,
    rels: &[(u32, f32)],
    facts: &[rhizome_core::Scored],
    fact_chunks: &HashMap<String, String>,
    found: &[entities::Found],
    out: &mut Retrieval,
) -> Result<()> {
    let fact_rows = env.store.facts(&facts.iter().map(|f| f.id.clone()).collect::<Vec<_>>())?;
    let fact_chunk = |id: &str| fact_chunks.get(id).and_then(|c| g.chunk(c));
    // The chunk mentioning both ends, else one mentioning the source.
    let rel_chunk = |r: u32| {
        relation_chunk(g, r).or_else(|| {
            let rel = &g.relations[r as usize];
            g.entity_chunks[rel.source as usize].iter().chain(&g.entity_chunks[rel.target as usize]).map(|x| x.0).min()
        })
    };
    let ent_chunk =
        |e: u32| g.entity_chunks[e as usize].iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0))).map(|x| x.0);
    // Read the records of every chunk a context points at, in one go.
    let mut want: Vec<u32> = Vec::new();
    want.extend(rels.iter().filter_map(|&(r, _)| rel_chunk(r)));
    want.extend(fact_rows.iter().filter_map(|f| fact_chunk(&f.id)));
    want.extend(found.iter().filter_map(|f| ent_chunk(f.entity)));
    want.retain(|c| !records.contains_key(c));
    want.sort();
    want.dedup();
    let ids: Vec<String> = want.iter().map(|&c| g.chunk_ids[c as usize].clone()).collect();
    for rec in env.store.chunks(&ids)? {
        if let Some(c) = g.chunk(&rec.chunk.id) {
            records.insert(c, rec);
        }
    }
    let origin = |c: Option<u32>| {
        c.and_then(|c| records.get(&c)).map(|r| (r.doc_source.clone(), r.doc_title.clone())).unwrap_or_default()
    };

    for r in ranked.iter().take(env.config.retrieval.top_k) {
        let Some(rec) = records.get(&r.chunk) else { continue };
        out.contexts.push(Context {
            kind: ContextKind::Chunk,
            id: rec.chunk.id.clone(),
            text: rec.chunk.text.clone(),
            score: r.score,
            source: rec.doc_source.clone(),
            title: rec.doc_title.clone(),
            pages: rec.page_ref(),
        });
    }
    let chunk_scores: BTreeMap<String, serde_json::Value> = ranked
        .iter()
        .map(|r| {
            (
                g.chunk_ids[r.chunk as usize].clone(),
                json!({"cosine": r.cosine, "bm25": r.features[0],
            "mentioned_in": r.features[1], "neighbour": r.features[2], "substring": r.features[3]}),
            )
        })
        .collect();
    out.extra.insert("chunk_scores".into(), json!(chunk_scores));
    for &(r, score) in rels {
        let (source, title) = origin(rel_chunk(r));
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
    let fact_scores: HashMap<&str, f32> = facts.iter().map(|f| (f.id.as_str(), f.score)).collect();
    for f in &fact_rows {
        let (source, title) = origin(fact_chunk(&f.id));
        out.contexts.push(Context {
            kind: ContextKind::Fact,
            id: f.id.clone(),
            text: format!("{} {} {}", f.subject, f.predicate, f.object),
            score: fact_scores.get(f.id.as_str()).copied().unwrap_or(0.0),
            source,
            title,
            pages: None,
        });
    }
    let ids: Vec<String> = found.iter().map(|f| g.entity_ids[f.entity as usize].clone()).collect();
    let rows: HashMap<String, rhizome_core::Entity> =
        env.store.entities(&ids)?.into_iter().map(|e| (e.id.clone(), e)).collect();
    for f in found {
        let id = &g.entity_ids[f.entity as usize];
        let Some(e) = rows.get(id) else { continue };
        let (source, title) = origin(ent_chunk(f.entity));
        let text = if e.description.is_empty() {
            format!("{} ({})", e.name, e.entity_type)
        } else {
            format!("{} ({}): {}", e.name, e.entity_type, e.description)
        };
        out.contexts.push(Context {
            kind: ContextKind::Entity,
            id: id.clone(),
            text,
            score: f.score,
            source,
            title,
            pages: None,
        });
    }
    Ok(())
}
