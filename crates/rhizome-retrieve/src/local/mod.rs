//! `local`: Microsoft GraphRAG's local search.
//!
//! 1. Map the question to entities by embedding: the question (and each question entity,
//!    [`crate::query_entities`], embedded as an entity name) against the entity vectors,
//!    `top_k_mapped_entities x oversample` candidates each; candidates are merged by best
//!    cosine, entities with neither relations nor chunks dropped, the best
//!    `top_k_mapped_entities` kept.
//! 2. A mixed context under `max_context_tokens` (tokens of
//!    [`rhizome_core::text::count_tokens`], measured on exactly the texts emitted):
//!    community reports up to `community_prop` ([`community`]: reports of the communities
//!    holding mapped entities; what they leave, or all of it in an index without reports,
//!    goes to the two others in proportion), entities + relationships + claims the rest
//!    after text units, text units (chunks) `text_unit_prop` plus whatever the others left.
//!    - Entities are added one at a time, each with the relationships of the entities
//!      selected so far, while both fit their share: relationships with both ends selected
//!      first, then those leaving the selection, by how many selected entities the other
//!      end links to, `top_k_relationships` per selected entity.
//!    - Text units: the chunks of the mapped entities (all of them, as in GraphRAG, even
//!      those whose line did not fit), by entity order, then by how many of their
//!      prioritised relationships they mention (both ends in the chunk); the first that
//!      does not fit is cut to the tokens left.
//!
//!    - Claims (covariates, e.g. from a Microsoft GraphRAG import) of the entities shown,
//!      in the tokens the entities and relationships left of their share.
//!
//! Contexts come in the order of the built context: `report`, `entity`, `relationship`,
//! `claim`, `chunk`.

mod settings;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use rhizome_core::config::Section;
use rhizome_core::text::{count_tokens, token_spans};
use rhizome_core::{EmbedKind, Result, VectorKind};
use serde_json::json;

pub use self::settings::LocalConfig;
use crate::embed_question;
use crate::graph::Graph;
use crate::paths::{chunk_sources, relation_sources};
use crate::query_entities::{embed_text, whole_graph_and_entities};
use crate::{ms, Context, ContextKind, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

mod community;

/// A chunk is cut to fit only when at least this many tokens are left for it.
const MIN_CUT_TOKENS: usize = 12;
/// Chunks fetched from the store at a time while filling the text-unit share.
const CHUNK_BATCH: usize = 16;

pub struct Local;

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Local,
    description: "GraphRAG local search: entities, relations, reports and chunks under a token budget",
    reads_graph: true,
    settings: &[&LocalConfig::KIND],
    retriever: |_| Box::new(Local),
    prompts: &[],
}];

impl Retriever for Local {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let cfg = env.config.section::<LocalConfig>();
        let mut out = Retrieval::default();
        let (whole, qe) = whole_graph_and_entities(env, question, "query.local", &mut out)?;

        let (g, mapped) = map_entities(env, whole, question, &qe.names, &mut out)?;
        out.extra.insert(
            "mapped_entities".into(),
            json!({
                "question_entities": qe.names,
                "found_by": qe.by,
                "entities": mapped.iter().map(|&(e, s)| json!({"name": g.entity_names[e as usize], "score": s}))
                    .collect::<Vec<_>>(),
            }),
        );
        if mapped.is_empty() {
            out.notes.push("no entity in the index: nothing to build a local context from".into());
            return Ok(out);
        }

        // Budget shares: community reports first; what they leave goes to text units and
        // entities/relationships in proportion.
        let max = cfg.max_context_tokens;
        let text_p = cfg.text_unit_prop.clamp(0.0, 1.0);
        let comm_p = cfg.community_prop.clamp(0.0, 1.0 - text_p);
        let local_p = (1.0 - text_p - comm_p).max(0.0);
        let local_share = if text_p + local_p > 0.0 { local_p / (text_p + local_p) } else { 0.5 };
        let t = Instant::now();
        let comm_budget = (max as f32 * comm_p).floor() as usize;
        let (comms, comm_tokens, n_reports) = community::report_contexts(env, &g, &mapped, comm_budget)?;
        out.timings_ms.insert("communities".into(), ms(t));
        if comm_p > 0.0 && n_reports == 0 {
            out.notes.push(format!(
                "no community reports in the index (build them with `rhizome communities`): their {:.0}% \
                 of the token budget went to text units and entities/relationships in proportion",
                comm_p * 100.0
            ));
        }
        let rest = max.saturating_sub(comm_tokens);
        let local_budget = (rest as f32 * local_share).floor() as usize;

        let t = Instant::now();
        let (ents, rels) = local_context(env, &g, &mapped, local_budget)?;
        let ent_tokens: usize = ents.iter().map(|c| count_tokens(&c.text)).sum();
        let rel_tokens: usize = rels.iter().map(|c| count_tokens(&c.text)).sum();
        let shown: Vec<String> = ents.iter().map(|c| c.id.clone()).collect();
        let claims = community::claim_contexts(env, &g, &shown, local_budget.saturating_sub(ent_tokens + rel_tokens))?;
        let claim_tokens: usize = claims.iter().map(|c| count_tokens(&c.text)).sum();
        out.timings_ms.insert("entities_relationships".into(), ms(t));

        let t = Instant::now();
        // Text units come from every mapped entity, whether or not its line fitted.
        let selected: Vec<u32> = mapped.iter().map(|m| m.0).collect();
        let sel_rels = select_relationships(&g, &selected, cfg.top_k_relationships);
        let text_budget = max.saturating_sub(comm_tokens + ent_tokens + rel_tokens + claim_tokens);
        let chunks = text_units(env, &g, &selected, &sel_rels, text_budget)?;
        let chunk_tokens: usize = chunks.iter().map(|c| count_tokens(&c.text)).sum();
        out.timings_ms.insert("text_units".into(), ms(t));

        out.extra.insert(
            "budget".into(),
            json!({
                "max_tokens": max,
                "used": comm_tokens + ent_tokens + rel_tokens + claim_tokens + chunk_tokens,
                "communities": comm_tokens,
                "entities": ent_tokens,
                "relationships": rel_tokens,
                "claims": claim_tokens,
                "text_units": chunk_tokens,
                "allotted": {
                    "communities": comm_budget,
                    "entities_relationships": local_budget,
                    "text_units": text_budget,
                },
            }),
        );
        out.contexts = comms.into_iter().chain(ents).chain(rels).chain(claims).chain(chunks).collect();
        Ok(out)
    }
}

/// Question -> entities by embedding: (entity, cosine), best first, with the graph they
/// are numbered in: `whole`, or when it is None the neighbourhood of the candidates read
/// from the store (it holds everything the rest of the method reads about them).
fn map_entities(
    env: &QueryEnv,
    whole: Option<Arc<Graph>>,
    question: &str,
    names: &[String],
    out: &mut Retrieval,
) -> Result<(Arc<Graph>, Vec<(u32, f32)>)> {
    let cfg = env.config.section::<LocalConfig>();
    let q = embed_question(env, question, &mut out.timings_ms)?;
    let t = Instant::now();
    let texts: Vec<String> = names.iter().map(|n| embed_text(n)).collect();
    let vecs = if texts.is_empty() { Vec::new() } else { env.embedder.embed(&texts, EmbedKind::Passage)? };
    out.timings_ms.insert("embed_entities".into(), ms(t));

    let t = Instant::now();
    let fetch = cfg.top_k_mapped_entities * cfg.oversample.max(1);
    let mut best: HashMap<String, f32> = HashMap::new();
    for v in std::iter::once(&q).chain(&vecs) {
        for hit in env.store.vector_search(VectorKind::Entity, v, fetch)? {
            let s = best.entry(hit.id).or_insert(f32::NEG_INFINITY);
            *s = s.max(hit.score);
        }
    }
    out.timings_ms.insert("map_entities".into(), ms(t));
    let g = match whole {
        Some(g) => g,
        None => {
            let t = Instant::now();
            let mut ids: Vec<String> = best.keys().cloned().collect();
            ids.sort();
            let g = Arc::new(Graph::from_neighbourhood(env.store.neighbourhood(&ids)?));
            out.timings_ms.insert("neighbourhood".into(), ms(t));
            out.notes.push(format!(
                "read the neighbourhood of {} candidate entities from the store ({} relations, {} chunks) \
                 instead of the whole graph (retrieval.whole_graph_up_to)",
                ids.len(),
                g.relations.len(),
                g.chunk_ids.len()
            ));
            g
        }
    };
    let t = Instant::now();
    let mut ranked: Vec<(u32, f32)> = best
        .into_iter()
        .filter_map(|(id, s)| g.entity(&id).map(|e| (e, s)))
        .filter(|&(e, _)| !g.neighbors[e as usize].is_empty() || !g.entity_chunks[e as usize].is_empty())
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(g.entity_ids[a.0 as usize].cmp(&g.entity_ids[b.0 as usize])));
    ranked.truncate(cfg.top_k_mapped_entities);
    *out.timings_ms.entry("map_entities".into()).or_default() += ms(t);
    Ok((g, ranked))
}

/// Relationships of `selected` in priority order: in-network (both ends selected) by
/// weight, then degree; then out-network by links of the outside end to the selection,
/// weight, degree; out-network cut to `per_entity x |selected|`. Ties by relation number.
pub(crate) fn select_relationships(g: &Graph, selected: &[u32], per_entity: usize) -> Vec<u32> {
    let sel: HashSet<u32> = selected.iter().copied().collect();
    let degree = |e: u32| g.degree(e);
    let mut inside: Vec<u32> = Vec::new();
    let mut outside: Vec<u32> = Vec::new();
    let mut seen = HashSet::new();
    for &e in selected {
        for nb in &g.neighbors[e as usize] {
            if !seen.insert(nb.relation) {
                continue;
            }
            if sel.contains(&nb.entity) {
                inside.push(nb.relation)
            } else {
                outside.push(nb.relation)
            }
        }
    }
    // Distinct selected entities each outside entity is linked to.
    let mut links: HashMap<u32, HashSet<u32>> = HashMap::new();
    for &r in &outside {
        let rel = &g.relations[r as usize];
        let (o, s) = if sel.contains(&rel.source) { (rel.target, rel.source) } else { (rel.source, rel.target) };
        links.entry(o).or_default().insert(s);
    }
    let rank = |r: u32| {
        let rel = &g.relations[r as usize];
        (rel.weight, degree(rel.source) + degree(rel.target))
    };
    inside.sort_by(|&a, &b| {
        let (wa, da) = rank(a);
        let (wb, db) = rank(b);
        wb.total_cmp(&wa).then(db.cmp(&da)).then(a.cmp(&b))
    });
    let outer = |r: u32| {
        let rel = &g.relations[r as usize];
        let o = if sel.contains(&rel.source) { rel.target } else { rel.source };
        links.get(&o).map_or(0, HashSet::len)
    };
    outside.sort_by(|&a, &b| {
        let (wa, da) = rank(a);
        let (wb, db) = rank(b);
        outer(b).cmp(&outer(a)).then(wb.total_cmp(&wa)).then(db.cmp(&da)).then(a.cmp(&b))
    });
    outside.truncate(per_entity * selected.len());
    inside.into_iter().chain(outside).collect()
}

/// Entity and relationship contexts within `budget` tokens.
fn local_context(
    env: &QueryEnv,
    g: &Graph,
    mapped: &[(u32, f32)],
    budget: usize,
) -> Result<(Vec<Context>, Vec<Context>)> {
    let per_entity = env.config.section::<LocalConfig>().top_k_relationships;
    let ids: Vec<String> = mapped.iter().map(|&(e, _)| g.entity_ids[e as usize].clone()).collect();
    let described: HashMap<String, String> =
        env.store.entities(&ids)?.into_iter().map(|e| (e.id, e.description)).collect();
    let rel_desc: HashMap<String, String> =
        env.store.relations_of(&ids)?.into_iter().map(|r| (r.id, r.description)).collect();
    let ent_text: Vec<String> = mapped
        .iter()
        .map(|&(e, _)| {
            let (name, ty) = (&g.entity_names[e as usize], &g.entity_types[e as usize]);
            match described.get(&g.entity_ids[e as usize]).filter(|d| !d.trim().is_empty()) {
                Some(d) => format!("{name} ({ty}): {d}"),
                None => format!("{name} ({ty})"),
            }
        })
        .collect();
    let rel_text = |r: u32| {
        let shown = g.render_relation(r);
        let rel = &g.relations[r as usize];
        let plain =
            format!("{} {} {}", g.entity_names[rel.source as usize], rel.rel_type, g.entity_names[rel.target as usize]);
        match rel_desc.get(&rel.id).filter(|d| !d.trim().is_empty() && **d != plain) {
            Some(d) => format!("{shown}: {d}"),
            None => shown,
        }
    };

    // Grow the selection one entity at a time while entities + relationships fit.
    let mut chosen: (usize, Vec<u32>) = (0, Vec::new());
    let mut ent_tokens = 0;
    for i in 1..=mapped.len() {
        ent_tokens += count_tokens(&ent_text[i - 1]);
        let sel: Vec<u32> = mapped[..i].iter().map(|m| m.0).collect();
        let rels = select_relationships(g, &sel, per_entity);
        let total = ent_tokens + rels.iter().map(|&r| count_tokens(&rel_text(r))).sum::<usize>();
        if total > budget {
            break;
        }
        chosen = (i, rels);
    }
    // Not even one entity with its relationships fits: fill line by line, in order.
    if chosen.0 == 0 {
        let mut used = count_tokens(&ent_text[0]);
        if used <= budget {
            let mut rels = Vec::new();
            for r in select_relationships(g, &[mapped[0].0], per_entity) {
                let n = count_tokens(&rel_text(r));
                if used + n > budget {
                    break;
                }
                used += n;
                rels.push(r);
            }
            chosen = (1, rels);
        }
    }

    let (n, rels) = chosen;
    let first_chunk: Vec<u32> =
        mapped[..n].iter().filter_map(|&(e, _)| g.entity_chunks[e as usize].iter().map(|x| x.0).min()).collect();
    let docs = chunk_sources(env.store, g, &first_chunk)?;
    let entities = mapped[..n]
        .iter()
        .zip(&ent_text)
        .map(|(&(e, score), text)| {
            let src = g.entity_chunks[e as usize].iter().map(|x| x.0).min().and_then(|c| docs.get(&c));
            let (source, title) = src.cloned().unwrap_or_else(|| (g.entity_ids[e as usize].clone(), String::new()));
            Context {
                kind: ContextKind::Entity,
                id: g.entity_ids[e as usize].clone(),
                text: text.clone(),
                score,
                source,
                title,
                pages: None,
            }
        })
        .collect();
    let sources = relation_sources(env.store, g, &rels)?;
    let relationships = rels
        .iter()
        .zip(sources)
        .map(|(&r, (source, title))| {
            let rel = &g.relations[r as usize];
            Context {
                kind: ContextKind::Relationship,
                id: rel.id.clone(),
                text: rel_text(r),
                score: rel.weight,
                source,
                title,
                pages: None,
            }
        })
        .collect();
    Ok((entities, relationships))
}

/// Chunk contexts within `budget` tokens: chunks of the mapped entities by entity order,
/// then by how many of the prioritised relationships `rels` they mention (both ends in the
/// chunk); the first that does not fit is cut.
fn text_units(env: &QueryEnv, g: &Graph, selected: &[u32], rels: &[u32], budget: usize) -> Result<Vec<Context>> {
    let mut order: Vec<(usize, usize, u32)> = Vec::new();
    let mut seen = HashSet::new();
    for (rank, &e) in selected.iter().enumerate() {
        for &(c, _) in &g.entity_chunks[e as usize] {
            if !seen.insert(c) {
                continue;
            }
            let here: HashSet<u32> = g.chunk_entities[c as usize].iter().map(|x| x.0).collect();
            let mentioned = rels
                .iter()
                .filter(|&&r| {
                    let rel = &g.relations[r as usize];
                    here.contains(&rel.source) && here.contains(&rel.target)
                })
                .count();
            order.push((rank, mentioned, c));
        }
    }
    order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));

    let mut out = Vec::new();
    let mut used = 0;
    for batch in order.chunks(CHUNK_BATCH) {
        let ids: Vec<String> = batch.iter().map(|x| g.chunk_ids[x.2 as usize].clone()).collect();
        let fetched: HashMap<String, _> =
            env.store.chunks(&ids)?.into_iter().map(|c| (c.chunk.id.clone(), c)).collect();
        for &(_, mentioned, c) in batch {
            let Some(cw) = fetched.get(&g.chunk_ids[c as usize]) else { continue };
            let n = count_tokens(&cw.chunk.text);
            let left = budget - used;
            let text = if n <= left {
                cw.chunk.text.clone()
            } else if left >= MIN_CUT_TOKENS {
                cut_to_tokens(&cw.chunk.text, left)
            } else {
                String::new()
            };
            if text.is_empty() {
                return Ok(out);
            }
            used += count_tokens(&text);
            out.push(Context {
                kind: ContextKind::Chunk,
                id: cw.chunk.id.clone(),
                text,
                score: mentioned as f32,
                source: cw.doc_source.clone(),
                title: cw.doc_title.clone(),
                pages: cw.page_ref(),
            });
            if n > left {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// The longest prefix of `text` with at most `max` tokens.
pub(crate) fn cut_to_tokens(text: &str, max: usize) -> String {
    let spans = token_spans(text);
    let mut keep = max.min(spans.len());
    while keep > 0 {
        let prefix = &text[..spans[keep - 1].1];
        if count_tokens(prefix) <= max {
            return prefix.to_string();
        }
        keep -= 1;
    }
    String::new()
}
