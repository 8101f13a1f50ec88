//! `tog`: Think-on-Graph (Sun et al. 2023): a beam search over relation paths from the
//! question's entities, the LLM pruning the relations to follow and judging when the
//! paths suffice.
//!
//! 1. Start entities: the question (a query embedding) and its entities
//!    ([`crate::query_entities`], each embedded as an entity name) against the entity
//!    vectors, merged by best cosine; the best `width` distinct entities that have at
//!    least one relation.
//! 2. Beam exploration, at most `depth` rounds. A path is a start entity and hops along
//!    relations (either direction), never visiting an entity twice. Each round, the
//!    relations the beam's tail entities may follow next are scored
//!    ([`prune`]: `llm`, `semantic` or `bm25`; `auto` is `llm` when an LLM is configured,
//!    else `semantic`), at most `max_candidates` per entity; each path is extended by the
//!    best `num_retain_entity` of its tail's candidates, and the best `width` paths
//!    overall are kept. **Path score: the mean of its hops' scores**, ties by start
//!    entity id then relation ids. A path whose tail offers nothing new stays in the
//!    pool as it is.
//! 3. Early termination (with an LLM and `early_stop`): after every round but the last,
//!    `tog_check` asks whether the beam's paths suffice; exploration stops when they do.
//!    Offline every round is explored.
//! 4. Answer (with an LLM): `tog_answer` over the numbered final paths and their
//!    supporting passages, citing `[P1]`; set as [`Retrieval::answer`]. It is written
//!    even after a sufficient check (the check's short answer has no citations nor
//!    passages); the check's answer stands in only when the answer call fails. Offline no
//!    answer is written: the caller builds its own from the contexts.
//!
//! Contexts: one `path` context per final path (at most `width`, always all of them:
//! they are the method's evidence), then the chunks supporting the paths' relations,
//! filling what `retrieval.top_k` leaves (at least one), within `chunk_tokens` tokens;
//! the answer call sees exactly these.

mod around;
mod beam;
mod evidence;
pub(crate) mod judge;
pub(crate) mod prune;
mod settings;

use std::collections::HashMap;
use std::time::Instant;

use rhizome_core::config::Section;
use rhizome_core::{EmbedKind, Result, VectorKind};
use serde_json::json;

use self::beam::{extend, frontiers, Frontier, Path};
use self::judge::{answer_call, check_call, numbered, parse_verdict, passages, Verdict};
use self::prune::{cap_candidates, relation_text, score_depth, Strategy};
pub use self::settings::{TogConfig, TogPruning};
use crate::embed_question;
use crate::graph::Graph;
use crate::query_entities::{embed_text, whole_graph_and_entities};
use crate::{ms, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

/// Entity vectors fetched per query when looking for start entities, per unit of width
/// (room for entities without relations).
const START_OVERSAMPLE: usize = 10;

pub struct Tog;

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Tog,
    description: "Think-on-Graph: beam search over relation paths",
    reads_graph: true,
    settings: &[&TogConfig::KIND],
    retriever: |_| Box::new(Tog),
    prompts: &[
        ("tog_prune", include_str!("tog_prune.txt")),
        ("tog_check", include_str!("tog_check.txt")),
        ("tog_answer", include_str!("tog_answer.txt")),
    ],
}];

impl Retriever for Tog {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let cfg = env.config.section::<TogConfig>();
        let (width, retain) = (cfg.width.max(1), cfg.num_retain_entity.max(1));
        let mut out = Retrieval::default();
        let mut llm_calls = 0usize;
        let (whole, qe) = whole_graph_and_entities(env, question, "query.tog", &mut out)?;
        if env.llm.is_some() {
            llm_calls += 1;
        }
        let q = embed_question(env, question, &mut out.timings_ms)?;
        let hits = start_hits(env, &q, &qe.names, width, &mut out)?;
        let (g, mut grown, starts) = match whole {
            Some(g) => {
                let starts = start_entities(&g, hits, width);
                (g, None, starts)
            }
            None => {
                // The candidates' degrees choose the starts; only theirs are read whole.
                let t = Instant::now();
                let ids: Vec<String> = hits.keys().cloned().collect();
                let degrees: HashMap<String, u32> = env.store.entity_degrees(&ids)?.into_iter().collect();
                let chosen = ranked_starts(hits, |id| degrees.get(id).is_some_and(|&d| d > 0), width);
                let (grown, g) = around::Grown::start(env, chosen.iter().map(|c| c.0.clone()).collect())?;
                out.timings_ms.insert("neighbourhood".into(), ms(t));
                let starts = chosen.into_iter().filter_map(|(id, s)| Some((g.entity(&id)?, s))).collect();
                (g, Some(grown), starts)
            }
        };
        let mut g = g;

        let strategy = strategy(cfg.pruning, env.llm.is_some(), &mut out.notes);
        out.extra.insert("question_entities".into(), json!({"names": qe.names, "found_by": qe.by}));
        out.extra.insert(
            "start_entities".into(),
            json!(starts
                .iter()
                .map(|&(e, s)| json!({
                    "name": g.entity_names[e as usize], "id": g.entity_ids[e as usize], "score": s,
                }))
                .collect::<Vec<_>>()),
        );
        out.extra.insert("pruning".into(), json!(strategy.as_str()));

        let judge = env.llm.filter(|_| cfg.early_stop);
        if cfg.early_stop && env.llm.is_none() {
            out.notes.push("no LLM configured: no early-termination check, every depth explored".into());
        }
        let mut beam: Vec<Path> = starts.iter().map(|&(e, _)| Path::new(e)).collect();
        let mut texts: HashMap<u32, String> = HashMap::new();
        let mut depths = Vec::new();
        let mut verdict: Option<Verdict> = None;
        let (mut prune_ms, mut check_ms) = (0.0, 0.0);
        let explore = Instant::now();
        for d in 1..=cfg.depth {
            if let Some(grown) = grown.as_mut() {
                let t = Instant::now();
                g = grown.grow(env, g, &mut beam, &mut texts)?;
                *out.timings_ms.entry("neighbourhood".into()).or_default() += ms(t);
            }
            let mut fronts = frontiers(&g, &beam);
            if fronts.is_empty() {
                if !beam.is_empty() {
                    out.notes.push(format!("no path could go further after depth {}", d - 1));
                }
                break;
            }
            let t = Instant::now();
            describe(env, &g, &fronts, &mut texts)?;
            let cut = cap_candidates(question, &mut fronts, &texts, cfg.max_candidates.max(1));
            if cut > 0 {
                out.notes.push(format!(
                    "depth {d}: {cut} entities had more than {} relations; those \
                    closest to the question by BM25 were scored",
                    cfg.max_candidates.max(1)
                ));
            }
            let candidates: usize = fronts.iter().map(|f| f.cands.len()).sum();
            let scored = score_depth(env, &g, question, &q, strategy, &beam, &fronts, &texts, &mut out.notes)?;
            llm_calls += scored.llm_calls;
            beam = extend(&g, &beam, &scored.by_tail, retain, width).0;
            prune_ms += ms(t);
            let mut entry = json!({
                "depth": d,
                "candidates": candidates,
                "prune_calls": scored.llm_calls,
                "kept": beam.iter().map(|p| p.render_scored(&g)).collect::<Vec<_>>(),
            });
            // The last depth needs no check: the answer comes next anyway.
            if let (Some(llm), true) = (judge, d < cfg.depth) {
                let t = Instant::now();
                llm_calls += 1;
                match llm.run_one(check_call(question, &numbered(&beam, &texts, &g))) {
                    Ok(reply) => match parse_verdict(&reply) {
                        Some(v) => {
                            entry["sufficient"] = json!(v.sufficient);
                            if v.sufficient {
                                entry["check_answer"] = json!(v.answer);
                                verdict = Some(v);
                            }
                        }
                        None => {
                            let shown: String = reply.chars().take(80).collect();
                            out.notes.push(format!(
                                "LLM tog_check reply after depth {d} unusable \
                                ({shown:?}): exploration goes on"
                            ));
                        }
                    },
                    Err(e) => out.notes.push(format!(
                        "LLM tog_check call after depth {d} failed ({e}): \
                        exploration goes on"
                    )),
                }
                check_ms += ms(t);
            }
            depths.push(entry);
            if verdict.is_some() {
                break;
            }
        }
        out.timings_ms.insert("explore".into(), ms(explore));
        if let Some(grown) = &grown {
            out.notes.push(format!(
                "read the neighbourhood of {} entities (start entities and path ends) from the store in {} \
                 reads instead of the whole graph (retrieval.whole_graph_up_to)",
                grown.entities(),
                grown.reads
            ));
        }
        out.timings_ms.insert("prune".into(), prune_ms);
        if judge.is_some() {
            out.timings_ms.insert("check".into(), check_ms);
        }
        out.extra.insert("depths".into(), json!(depths));
        out.extra.insert("stopped_early".into(), json!(verdict.is_some()));

        beam.retain(|p| !p.hops.is_empty());
        if beam.is_empty() {
            if starts.is_empty() {
                out.notes.push("no entity with relations in the index: no path to explore".into());
            } else if cfg.depth == 0 {
                out.notes.push("tog.depth is 0: no relation explored".into());
            }
            out.extra.insert("llm_calls".into(), json!(llm_calls));
            return Ok(out);
        }

        let t = Instant::now();
        out.paths = beam.iter().map(|p| p.render_scored(&g)).collect();
        let path_ctx = evidence::path_contexts(env, &g, &beam, &texts)?;
        let slots = env.config.retrieval.top_k.saturating_sub(path_ctx.len()).max(1);
        let chunks = evidence::supporting_chunks(env, &g, &beam, slots, cfg.chunk_tokens)?;
        out.timings_ms.insert("sources".into(), ms(t));

        match env.llm {
            Some(llm) => {
                let t = Instant::now();
                llm_calls += 1;
                let call =
                    answer_call(question, &numbered(&beam, &texts, &g), &passages(&chunks), cfg.max_output_tokens);
                let fallback = verdict.map(|v| v.answer);
                match llm.run_one(call) {
                    Ok(a) if !a.trim().is_empty() => out.answer = Some(a.trim().to_string()),
                    reply => {
                        let why = match reply {
                            Err(e) => format!("failed ({e})"),
                            Ok(_) => "gave an empty reply".to_string(),
                        };
                        match fallback {
                            Some(a) => {
                                out.notes.push(format!(
                                    "LLM tog_answer call {why}: the early check's \
                                    answer is given instead"
                                ));
                                out.answer = Some(a);
                            }
                            None => out.notes.push(format!(
                                "LLM tog_answer call {why}: no answer \
                                written by tog"
                            )),
                        }
                    }
                }
                out.timings_ms.insert("write_answer".into(), ms(t));
            }
            None => out.notes.push(
                "no LLM configured: tog writes no answer; it is built from the \
                contexts"
                    .into(),
            ),
        }
        out.extra.insert("llm_calls".into(), json!(llm_calls));
        out.contexts = path_ctx.into_iter().chain(chunks).collect();
        Ok(out)
    }
}

/// The pruning strategy in effect for `pruning`, noting what stands in for the LLM.
fn strategy(pruning: TogPruning, has_llm: bool, notes: &mut Vec<String>) -> Strategy {
    match (pruning, has_llm) {
        (TogPruning::Auto | TogPruning::Llm, true) => Strategy::Llm,
        (TogPruning::Auto, false) => {
            notes.push("no LLM configured: relations pruned by semantic similarity to the question".into());
            Strategy::Semantic
        }
        (TogPruning::Llm, false) => {
            notes.push(
                "tog.pruning is llm but no LLM is configured: relations pruned by semantic \
                similarity to the question"
                    .into(),
            );
            Strategy::Semantic
        }
        (TogPruning::Semantic, _) => Strategy::Semantic,
        (TogPruning::Bm25, _) => Strategy::Bm25,
    }
}

/// Start candidates: entity id -> best cosine with the question or one of its entities
/// `names`.
fn start_hits(
    env: &QueryEnv,
    q: &[f32],
    names: &[String],
    width: usize,
    out: &mut Retrieval,
) -> Result<HashMap<String, f32>> {
    let t = Instant::now();
    let texts: Vec<String> = names.iter().map(|n| embed_text(n)).collect();
    let vecs = if texts.is_empty() { Vec::new() } else { env.embedder.embed(&texts, EmbedKind::Passage)? };
    out.timings_ms.insert("embed_entities".into(), ms(t));
    let t = Instant::now();
    let mut best: HashMap<String, f32> = HashMap::new();
    for v in std::iter::once(q).chain(vecs.iter().map(Vec::as_slice)) {
        for hit in env.store.vector_search(VectorKind::Entity, v, width * START_OVERSAMPLE)? {
            let s = best.entry(hit.id).or_insert(f32::NEG_INFINITY);
            *s = s.max(hit.score);
        }
    }
    out.timings_ms.insert("start_entities".into(), ms(t));
    Ok(best)
}

/// Start entities: (entity, best cosine), best first, ties by id; only entities of `g`
/// with at least one relation; at most `width`.
fn start_entities(g: &Graph, hits: HashMap<String, f32>, width: usize) -> Vec<(u32, f32)> {
    let related = |id: &str| g.entity(id).is_some_and(|e| !g.neighbors[e as usize].is_empty());
    ranked_starts(hits, related, width).into_iter().filter_map(|(id, s)| Some((g.entity(&id)?, s))).collect()
}

/// Of the candidates (id -> best cosine), those with at least one relation (`related`),
/// best first, ties by id, at most `width`.
fn ranked_starts(hits: HashMap<String, f32>, related: impl Fn(&str) -> bool, width: usize) -> Vec<(String, f32)> {
    let mut ranked: Vec<(String, f32)> = hits.into_iter().filter(|(id, _)| related(id)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(width);
    ranked
}

/// Add the text ([`relation_text`], with the stored description) of every candidate of
/// `fronts` not described yet.
fn describe(env: &QueryEnv, g: &Graph, fronts: &[Frontier], texts: &mut HashMap<u32, String>) -> Result<()> {
    let tails: Vec<String> = fronts
        .iter()
        .filter(|f| f.cands.iter().any(|c| !texts.contains_key(&c.0)))
        .map(|f| g.entity_ids[f.tail as usize].clone())
        .collect();
    if tails.is_empty() {
        return Ok(());
    }
    let desc: HashMap<String, String> =
        env.store.relations_of(&tails)?.into_iter().map(|r| (r.id, r.description)).collect();
    for f in fronts {
        for &(r, _) in &f.cands {
            texts
                .entry(r)
                .or_insert_with(|| relation_text(g, r, desc.get(&g.relations[r as usize].id).map(String::as_str)));
        }
    }
    Ok(())
}
