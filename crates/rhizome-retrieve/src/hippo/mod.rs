//! `hippo`: HippoRAG-style retrieval. The question is linked to entities (by the names it
//! spells out, and through facts an LLM recognised); those entities and the passage scores
//! seed a Personalized PageRank over the entity-passage graph; passages are ranked by
//! their PageRank mass fused with their passage score, so the graph re-ranks and extends
//! dense retrieval instead of replacing it (HippoRAG 2 seeds passages for the same reason).
//!
//! Steps (settings in `[hippo]`; [`HippoConfig`] says why each default is what it is):
//! 1. Passage scores `s`: cosine of the question to every passage plus a BM25 share (the
//!    share `basic` uses, so that `s` ranks as `basic` does);
//!    relative scores `r = exp((s - s_max) / passage_temperature)` (min-max normalised
//!    scores when the temperature is 0, as in HippoRAG 2).
//! 2. Linking: every fact is scored by cosine, min-max normalised over all facts; the
//!    best `fact_candidates` are rescored as `(1 - w) x fact score + w x r(passage of the
//!    fact)` and the best `linking_top_k` kept. With an LLM and `recognition_filter`,
//!    the LLM keeps those that bear on the question (recognition memory); an unusable or
//!    empty reply keeps the unfiltered list, with a note. Question spans that name an
//!    entity exactly are linked too ([`names`]). Facts are linked only when
//!    they can seed: an LLM recognises them, or `unfiltered_fact_weight` is above 0.
//! 3. Seeds: each entity of a linked fact gets `fact score / number of passages it is
//!    mentioned in` (times `unfiltered_fact_weight` unless an LLM recognised the fact),
//!    summed over facts; each named entity `name_seed_weight / passages`; each passage
//!    `passage_node_weight x r`.
//! 4. PPR (`damping`) over the undirected weighted graph of entity and passage nodes:
//!    relation edges (weight = supporting triples), synonymy edges (cosine),
//!    passage-entity edges (1, or `title_edge_weight` to the entity a passage's document
//!    is titled after). Built once per graph and cached.
//! 5. Passages ranked by `(1 - ppr_weight) x r + ppr_weight x PPR / best PPR`. With
//!    nothing to seed (no passage score, no entity), by their passage score, with a note.

mod names;
mod settings;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use rhizome_core::config::Section;
use rhizome_core::ids::entity_id;
use rhizome_core::llm::PromptCall;
use rhizome_core::{Result, VectorKind};
use serde_json::{json, Value};

use self::names::name_matches;
pub use self::settings::HippoConfig;
use crate::graph::Graph;
use crate::ppr::{
    gauss_seidel_f64, personalized_pagerank, ranked_ppr, Csr, FusedRanking, DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE,
};
use crate::{embed_question, timed};
use crate::{ms, Context, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

/// The `hippo` retriever. [`Hippo::default`] is what `Method::Hippo` runs;
/// [`Hippo::previous`] is how it ran before its speed work (plain Gauss-Seidel PPR in
/// f64 at tolerance 1e-8, facts linked even when they cannot seed), and
/// [`Hippo::over_relaxed`] how it ran before forward push, for benchmarks that report
/// the speed-up measured in the same run. All three rank passages alike.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hippo {
    /// How PageRank is solved.
    pub solver: PprSolver,
    /// Link facts even when nothing can make them seed (no LLM, `unfiltered_fact_weight` 0).
    pub always_link_facts: bool,
}

/// The PageRank solvers hippo can run (all reach the same top passages).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PprSolver {
    /// Forward push, stopped once the best `retrieval.top_k` passages are certified
    /// ([`crate::ppr::ranked_ppr`]).
    #[default]
    Push,
    /// Over-relaxed Gauss-Seidel sweeps in f32 to [`DEFAULT_TOLERANCE`]
    /// ([`crate::ppr::personalized_pagerank`]).
    OverRelaxed,
    /// Plain Gauss-Seidel sweeps in f64 to 1e-8 ([`crate::ppr::gauss_seidel_f64`]).
    Reference,
}

impl Hippo {
    /// The previous approach (see the type's documentation).
    pub fn previous() -> Self {
        Hippo { solver: PprSolver::Reference, always_link_facts: true }
    }

    /// Today's hippo with the solver it ran before forward push.
    pub fn over_relaxed() -> Self {
        Hippo { solver: PprSolver::OverRelaxed, always_link_facts: false }
    }
}

/// A fact linked to the question.
#[derive(Debug, Clone)]
struct Linked {
    /// Index into [`Graph::facts`].
    fact: u32,
    id: String,
    text: String,
    /// Subject, predicate and object, for viewers that draw the fact as an edge.
    triple: [String; 3],
    /// Linking score in [0, 1].
    score: f32,
}

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Hippo,
    description: "HippoRAG: facts linked to the question seed Personalized PageRank",
    settings: &[&HippoConfig::KIND],
    retriever: |_| Box::new(Hippo::default()),
    prompts: &[("hippo_filter", include_str!("hippo_filter.txt"))],
}];

impl Retriever for Hippo {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let started = Instant::now();
        let cfg = env.config.section::<HippoConfig>();
        let mut out = Retrieval::default();
        let q = embed_question(env, question, &mut out.timings_ms)?;
        let graph = timed(&mut out.timings_ms, "graph", || env.graph())?;

        let passages =
            timed(&mut out.timings_ms, "dense", || passage_scores(env, &graph, &q, question, cfg.passage_bm25_weight))?;

        let t = Instant::now();
        let relative = relative_passage_scores(&passages, cfg.passage_temperature);
        // Facts only seed when an LLM recognises them or `unfiltered_fact_weight` lets
        // unrecognised ones count; otherwise linking them (two scans of every fact
        // vector, about half of a query's retrieval time) would change nothing.
        let can_recognize = cfg.recognition_filter && env.llm.is_some();
        let linkable = !graph.facts.is_empty() && cfg.linking_top_k > 0;
        let mut linked = if can_recognize || cfg.unfiltered_fact_weight > 0.0 || self.always_link_facts {
            let linked = link_facts(env, &graph, &q, &cfg, &relative)?;
            if linked.is_empty() && linkable {
                out.notes.push(
                    "no fact has a vector (the LLM-free extractor's facts get none by default): \
                    set embed.fact_vectors=always and re-index to link facts"
                        .into(),
                );
            }
            linked
        } else {
            if linkable {
                out.notes.push(
                    "facts not linked: without an LLM to recognise them they would seed nothing \
                    (hippo.unfiltered_fact_weight 0)"
                        .into(),
                );
            }
            Vec::new()
        };
        let mut recognized = false;
        if cfg.recognition_filter && !linked.is_empty() {
            (linked, recognized) = recognition_filter(env, question, linked, &mut out.notes);
        }
        out.timings_ms.insert("linking".into(), ms(t));

        let fact_weight = if recognized { 1.0 } else { cfg.unfiltered_fact_weight as f64 };
        if !recognized && fact_weight <= 0.0 && !linked.is_empty() {
            out.notes
                .push("linked facts not recognised by an LLM: they seed nothing (unfiltered_fact_weight 0)".into());
        }
        let mut seeds = entity_seeds(&graph, &linked, fact_weight);
        if cfg.name_seed_weight > 0.0 {
            let names = name_matches(&graph, question);
            for &e in &names {
                let chunks = graph.entity_chunks.get(e as usize).map_or(0, Vec::len).max(1);
                *seeds.entry(e).or_default() += cfg.name_seed_weight as f64 / chunks as f64;
            }
            let names: Vec<&str> = names.iter().map(|&e| graph.entity_names[e as usize].as_str()).collect();
            out.extra.insert("named_entities".into(), json!(names));
        }
        let passage_seeds = cfg.passage_node_weight > 0.0 && relative.iter().any(|&r| r > 0.0);
        if seeds.is_empty() && passage_seeds {
            out.notes.push(
                "no entity seeded (no recognised fact, no name in the question): PageRank \
                from the passage seeds alone"
                    .into(),
            );
        }
        let ranked: Vec<(u32, f64)> = if seeds.is_empty() && !passage_seeds {
            out.notes.push("nothing seeds the graph: passages ranked by dense retrieval (cosine + BM25 share)".into());
            rank(passages.raw.iter().enumerate().map(|(c, &s)| (c as u32, s as f64)))
        } else {
            let t = Instant::now();
            let (csr, built) = adjacency(env, &graph, &cfg)?;
            if built {
                out.timings_ms.insert("graph_build".into(), ms(t));
            }
            let t = Instant::now();
            let ne = graph.entity_ids.len();
            let mut reset = vec![0.0f64; csr.nodes()];
            for (&e, &w) in &seeds {
                reset[e as usize] += w;
            }
            let weight = cfg.passage_node_weight.max(0.0) as f64;
            for (c, &w) in relative.iter().enumerate() {
                reset[ne + c] += weight * w as f64;
            }
            let share = cfg.ppr_weight.clamp(0.0, 1.0) as f64;
            let damping = cfg.damping as f64;
            let (sweeps, solved);
            let mass: &[f64] = match self.solver {
                PprSolver::Push => {
                    let ranking =
                        FusedRanking { first: ne, relative: &relative, share, top_k: env.config.retrieval.top_k };
                    let push = ranked_ppr(&csr, &reset, damping, &ranking);
                    out.extra.insert("ppr_pushes".into(), json!(push.pushes));
                    out.extra.insert("ppr_certified".into(), json!(push.certified));
                    if push.exhausted {
                        // Ranking gaps too fine for the push budget: sweep the whole graph.
                        sweeps =
                            personalized_pagerank(&csr, &reset, damping, DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS);
                        out.extra.insert("ppr_iterations".into(), json!(sweeps.iterations));
                        &sweeps.scores[ne..]
                    } else {
                        solved = push.passages;
                        &solved
                    }
                }
                PprSolver::OverRelaxed | PprSolver::Reference => {
                    sweeps = if self.solver == PprSolver::Reference {
                        gauss_seidel_f64(&csr, &reset, damping, 1e-8, DEFAULT_MAX_ITERATIONS)
                    } else {
                        personalized_pagerank(&csr, &reset, damping, DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS)
                    };
                    out.extra.insert("ppr_iterations".into(), json!(sweeps.iterations));
                    &sweeps.scores[ne..]
                }
            };
            out.timings_ms.insert("ppr".into(), ms(t));
            let best = mass.iter().copied().fold(0.0f64, f64::max);
            rank(relative.iter().zip(mass).enumerate().map(|(c, (&r, &p))| {
                let p = if best > 0.0 { p / best } else { 0.0 };
                (c as u32, (1.0 - share) * r as f64 + share * p)
            }))
        };

        let top: Vec<(u32, f64)> = ranked.into_iter().take(env.config.retrieval.top_k).collect();
        let ids: Vec<String> = top.iter().map(|(c, _)| graph.chunk_ids[*c as usize].clone()).collect();
        let scores: HashMap<&str, f64> = top.iter().map(|(c, s)| (graph.chunk_ids[*c as usize].as_str(), *s)).collect();
        for c in env.store.chunks(&ids)? {
            let score = scores.get(c.chunk.id.as_str()).copied().unwrap_or(0.0) as f32;
            out.contexts.push(Context::of_chunk(c, score));
        }
        let facts: Vec<Value> = linked
            .iter()
            .map(|f| {
                json!({"id": f.id, "text": f.text, "score": f.score,
            "subject": f.triple[0], "predicate": f.triple[1], "object": f.triple[2]})
            })
            .collect();
        out.extra.insert("facts".into(), Value::Array(facts));
        // Shown with the evidence; the answer takes its contexts from `answer_top_k`.
        out.extra.insert("qa_top_k".into(), json!(cfg.qa_top_k));
        out.answer_top_k = Some(cfg.qa_top_k);
        out.timings_ms.insert("total".into(), ms(started));
        Ok(out)
    }
}

/// Best first, ties broken by chunk number (node numbers follow chunk id order).
fn rank(scores: impl Iterator<Item = (u32, f64)>) -> Vec<(u32, f64)> {
    let mut v: Vec<(u32, f64)> = scores.collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// Min-max normalise `x` against `[lo, hi]`; a flat list maps to 1.
fn min_max(x: f32, lo: f32, hi: f32) -> f32 {
    if hi - lo > f32::EPSILON {
        ((x - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// Per graph chunk: the passage score (cosine + BM25 share) and its min-max normalisation.
struct PassageScores {
    raw: Vec<f32>,
    normalized: Vec<f32>,
}

fn passage_scores(env: &QueryEnv, graph: &Graph, q: &[f32], question: &str, bm25_weight: f32) -> Result<PassageScores> {
    let n = graph.chunk_ids.len();
    let hits = if n == 0 { Vec::new() } else { env.store.vector_search(VectorKind::Chunk, q, n)? };
    // A chunk without a vector scores as the least similar one.
    let floor = hits.last().map_or(0.0, |s| s.score);
    let mut raw = vec![floor; n];
    for s in &hits {
        if let Some(c) = graph.chunk(&s.id) {
            raw[c as usize] = s.score;
        }
    }
    if bm25_weight > 0.0 && n > 0 {
        let sparse = env.store.bm25(question, env.config.retrieval.candidates.max(1))?;
        let best = sparse.iter().map(|s| s.score).fold(0.0f32, f32::max);
        if best > 0.0 {
            for s in &sparse {
                if let Some(c) = graph.chunk(&s.id) {
                    raw[c as usize] += bm25_weight * s.score / best;
                }
            }
        }
    }
    let hi = raw.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let lo = raw.iter().copied().fold(f32::INFINITY, f32::min);
    let normalized = raw.iter().map(|&x| min_max(x, lo, hi)).collect();
    Ok(PassageScores { raw, normalized })
}

/// Per passage, in [0, 1]: `exp((s - s_max) / T)` with `T = passage_temperature` (1 for
/// the best passage, falling fast below it), or the min-max normalised score when the
/// temperature is 0. Scales the passage seeds and is the context score of the facts.
fn relative_passage_scores(p: &PassageScores, temperature: f32) -> Vec<f32> {
    let t = temperature as f64;
    if t > 0.0 && t.is_finite() {
        let hi = p.raw.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        p.raw.iter().map(|&s| ((s as f64 - hi) / t).exp() as f32).collect()
    } else {
        p.normalized.clone()
    }
}

/// The facts closest to the question, rescored with the relative scores of their
/// passages (see [`HippoConfig::fact_context_weight`]); the best `linking_top_k`, with
/// their texts.
fn link_facts(env: &QueryEnv, graph: &Graph, q: &[f32], cfg: &HippoConfig, passages: &[f32]) -> Result<Vec<Linked>> {
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
fn entity_seeds(graph: &Graph, linked: &[Linked], weight: f64) -> BTreeMap<u32, f64> {
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

struct Cached {
    graph: Weak<Graph>,
    title_weight: f32,
    csr: Arc<Csr>,
}

/// The adjacency of the last graph seen. Holding a `Weak` keeps the graph's allocation
/// from being reused, so pointer equality identifies the same graph.
static ADJACENCY: Mutex<Option<Cached>> = Mutex::new(None);

/// The PPR adjacency of `graph` (entity nodes `0..E`, then chunk nodes `E..E+C`), built
/// once per graph and title edge weight; true when this call built it.
fn adjacency(env: &QueryEnv, graph: &Arc<Graph>, cfg: &HippoConfig) -> Result<(Arc<Csr>, bool)> {
    let title_weight = cfg.title_edge_weight;
    let mut slot = ADJACENCY.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = slot.as_ref() {
        if c.title_weight == title_weight && Weak::ptr_eq(&c.graph, &Arc::downgrade(graph)) {
            return Ok((c.csr.clone(), false));
        }
    }
    let titles = if title_weight != 1.0 { title_entities(env, graph)? } else { vec![None; graph.chunk_ids.len()] };
    let csr = Arc::new(build_csr(graph, &titles, title_weight));
    *slot = Some(Cached { graph: Arc::downgrade(graph), title_weight, csr: csr.clone() });
    Ok((csr, true))
}

/// Per chunk: the entity its document's title names (the title itself, or the title
/// without a trailing parenthesised qualifier such as `Mercury (planet)`).
fn title_entities(env: &QueryEnv, graph: &Graph) -> Result<Vec<Option<u32>>> {
    let mut out = vec![None; graph.chunk_ids.len()];
    for c in env.store.chunks(&graph.chunk_ids)? {
        let Some(i) = graph.chunk(&c.chunk.id) else { continue };
        let title = c.doc_title.trim();
        let base = match title.rfind(" (") {
            Some(p) if title.ends_with(')') => &title[..p],
            _ => title,
        };
        out[i as usize] = [title, base].iter().filter(|t| !t.is_empty()).find_map(|t| graph.entity(&entity_id(t)));
    }
    Ok(out)
}

fn build_csr(g: &Graph, titles: &[Option<u32>], title_weight: f32) -> Csr {
    let ne = g.entity_ids.len() as u32;
    let n = g.entity_ids.len() + g.chunk_ids.len();
    let relations = g.relations.iter().map(|r| (r.source, r.target, r.weight.max(0.0)));
    let synonyms =
        g.synonyms.iter().enumerate().flat_map(|(a, list)| {
            list.iter().filter(move |(b, _)| (a as u32) < *b).map(move |&(b, s)| (a as u32, b, s))
        });
    let mentions = g.entity_chunks.iter().enumerate().flat_map(|(e, list)| {
        list.iter().map(move |&(c, _)| {
            let is_title = titles.get(c as usize).copied().flatten() == Some(e as u32);
            (e as u32, ne + c, if is_title { title_weight } else { 1.0 })
        })
    });
    Csr::from_edges(n, relations.chain(synonyms).chain(mentions))
}

/// Recognition memory: the LLM keeps the linked facts that bear on the question (true:
/// the list was filtered). Without an LLM, or when its reply is unusable or keeps
/// nothing, the unfiltered list stays (false, with a note saying so).
fn recognition_filter(
    env: &QueryEnv,
    question: &str,
    linked: Vec<Linked>,
    notes: &mut Vec<String>,
) -> (Vec<Linked>, bool) {
    let Some(llm) = env.llm else {
        notes.push("no LLM configured: linked facts not filtered (recognition memory skipped)".into());
        return (linked, false);
    };
    let listing: Vec<String> = linked.iter().enumerate().map(|(i, f)| format!("{}. {}", i + 1, f.text)).collect();
    let listing = listing.join("\n");
    let call = PromptCall::new("hippo_filter", "query.hippo", &[("question", question), ("facts", &listing)])
        .json()
        .max_tokens(200);
    let reply = match llm.run_one(call) {
        Ok(r) => r,
        Err(e) => {
            notes.push(format!("fact filter failed ({e}): the unfiltered facts were used"));
            return (linked, false);
        }
    };
    match parse_kept(&reply, linked.len()) {
        None => {
            notes.push("fact filter reply was unusable: the unfiltered facts were used".into());
            (linked, false)
        }
        Some(kept) if kept.is_empty() => {
            notes.push("fact filter kept no fact: the unfiltered facts were used".into());
            (linked, false)
        }
        Some(kept) => {
            notes.push(format!("fact filter kept {} of {} linked facts", kept.len(), linked.len()));
            let mut keep = vec![false; linked.len()];
            kept.iter().for_each(|&i| keep[i] = true);
            (linked.into_iter().zip(keep).filter(|(_, k)| *k).map(|(f, _)| f).collect(), true)
        }
    }
}

/// The fact numbers (1-based in the prompt, 0-based here) an LLM reply keeps: a JSON
/// object `{"relevant": [..]}` (possibly wrapped in prose or a code fence) or a bare
/// JSON list. Numbers may be given as strings; out-of-range and duplicate numbers are
/// dropped. None when the reply holds no such list, or when none of the items of a
/// non-empty list is a usable number.
pub(crate) fn parse_kept(reply: &str, n: usize) -> Option<Vec<usize>> {
    let value = crate::analyze::json_value(reply)?;
    let list = match &value {
        Value::Array(a) => a,
        Value::Object(o) => o
            .get("relevant")
            .or_else(|| o.get("facts"))
            .or_else(|| o.values().find(|v| v.is_array()))
            .and_then(Value::as_array)?,
        _ => return None,
    };
    let mut kept: Vec<usize> = Vec::new();
    for item in list {
        let number = match item {
            Value::Number(x) => x.as_u64(),
            Value::String(s) => s.trim().trim_end_matches('.').parse::<u64>().ok(),
            _ => None,
        };
        if let Some(i) = number.filter(|&i| i >= 1 && (i as usize) <= n).map(|i| i as usize - 1) {
            if !kept.contains(&i) {
                kept.push(i);
            }
        }
    }
    if kept.is_empty() && !list.is_empty() {
        return None;
    }
    kept.sort_unstable();
    Some(kept)
}
