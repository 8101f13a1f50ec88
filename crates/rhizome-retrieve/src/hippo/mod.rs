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
//!    is titled after). Built once per graph and cached. With `ppr_nodes` set, past that
//!    many nodes the walk runs on the subgraph around the seeds ([`subgraph`]), so a
//!    question's cost stops growing with the graph. On an index above
//!    `retrieval.whole_graph_up_to` entities no graph is loaded: that subgraph is read
//!    through the store, with the same result ([`around`]).
//! 5. Passages ranked by `(1 - ppr_weight) x r + ppr_weight x PPR / best PPR`. With
//!    nothing to seed (no passage score, no entity), by their passage score, with a note.
//!
//! Layout: `passages` (step 1), `linking` (steps 2 and 3), `recognition` (the LLM's filter
//! of step 2), `names` (question spans naming entities), `adjacency` (step 4's graph),
//! `subgraph` (step 4 on a large graph), `around` (its subgraph read through the store),
//! `settings` ([`HippoConfig`]); this file runs the steps.

mod adjacency;
mod around;
mod linking;
mod names;
mod passages;
mod recognition;
mod settings;
mod subgraph;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use rhizome_core::config::Section;
use rhizome_core::Result;
use serde_json::{json, Value};

use self::adjacency::adjacency;
use self::linking::{entity_seeds, in_whole_graph, link_facts, InGraph, Linked};
use self::names::name_matches;
use self::passages::{passage_scores, relative_passage_scores};
pub(crate) use self::recognition::parse_kept;
use self::recognition::recognition_filter;
pub use self::settings::HippoConfig;
use self::subgraph::{bounded_ranking, Seeds, Walk, PASSAGE_SEEDS};
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
    /// PageRank over the whole graph whatever its size (`hippo.ppr_nodes` ignored).
    pub whole_graph: bool,
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
        Hippo { solver: PprSolver::Reference, always_link_facts: true, whole_graph: true }
    }

    /// Today's hippo with the solver it ran before forward push.
    pub fn over_relaxed() -> Self {
        Hippo { solver: PprSolver::OverRelaxed, always_link_facts: false, whole_graph: true }
    }

    /// Today's hippo with PageRank over the whole graph however large it is (before
    /// `hippo.ppr_nodes` bounded it).
    pub fn whole_graph() -> Self {
        Hippo { whole_graph: true, ..Hippo::default() }
    }
}

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Hippo,
    description: "HippoRAG: facts linked to the question seed Personalized PageRank",
    reads_graph: true,
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
        let graph = timed(&mut out.timings_ms, "graph", || match self.whole_graph {
            true => env.graph().map(Some),
            false => env.whole_graph(),
        })?;
        let (top, linked) = match graph {
            Some(graph) => self.over_graph(env, &cfg, &graph, &q, question, &mut out)?,
            None => self.around(env, &cfg, &q, question, &mut out)?,
        };
        let scores: HashMap<&str, f64> = top.iter().map(|(c, s)| (c.as_str(), *s)).collect();
        let ids: Vec<String> = top.iter().map(|(c, _)| c.clone()).collect();
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

/// The best `retrieval.top_k` passages (chunk id, score), and the facts linked.
type Ranked = (Vec<(String, f64)>, Vec<Linked>);

impl Hippo {
    /// Steps 2 and 3 up to the seeds' entities: the facts linked (`in_graph` says which of
    /// those found by vector the graph holds), with notes, and the weight of their seeds.
    fn link(
        &self,
        env: &QueryEnv,
        cfg: &HippoConfig,
        q: &[f32],
        question: &str,
        out: &mut Retrieval,
        has_facts: bool,
        in_graph: impl FnOnce(&[String]) -> Result<HashMap<String, InGraph>>,
    ) -> Result<(Vec<Linked>, f64)> {
        let t = Instant::now();
        let linking = tracing::info_span!("stage", otel.name = "linking").entered();
        // Facts only seed when an LLM recognises them or `unfiltered_fact_weight` lets
        // unrecognised ones count; otherwise linking them (two scans of every fact
        // vector, about half of a query's retrieval time) would change nothing.
        let can_recognize = cfg.recognition_filter && env.llm.is_some();
        let linkable = has_facts && cfg.linking_top_k > 0;
        let mut linked = if can_recognize || cfg.unfiltered_fact_weight > 0.0 || self.always_link_facts {
            let linked = link_facts(env, q, cfg, in_graph)?;
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
        drop(linking);
        let fact_weight = if recognized { 1.0 } else { cfg.unfiltered_fact_weight as f64 };
        if !recognized && fact_weight <= 0.0 && !linked.is_empty() {
            out.notes
                .push("linked facts not recognised by an LLM: they seed nothing (unfiltered_fact_weight 0)".into());
        }
        Ok((linked, fact_weight))
    }

    /// Steps 1 to 5 over the whole graph held in memory.
    fn over_graph(
        &self,
        env: &QueryEnv,
        cfg: &HippoConfig,
        graph: &Arc<Graph>,
        q: &[f32],
        question: &str,
        out: &mut Retrieval,
    ) -> Result<Ranked> {
        // Past `ppr_nodes` nodes (when set), the walk runs on the subgraph around the seeds,
        // and only the passages that can seed it are scored.
        let nodes = graph.entity_ids.len() + graph.chunk_ids.len();
        let bounded = !self.whole_graph && cfg.ppr_nodes > 0 && nodes > cfg.ppr_nodes;
        let limit = bounded.then_some(PASSAGE_SEEDS.max(env.config.retrieval.top_k));
        let passages = timed(&mut out.timings_ms, "dense", || {
            passage_scores(env, graph, q, question, cfg.passage_bm25_weight, limit)
        })?;
        let relative = relative_passage_scores(&passages, cfg.passage_temperature);
        let (linked, fact_weight) = self.link(env, cfg, q, question, out, !graph.facts.is_empty(), |ids| {
            Ok(in_whole_graph(graph, &relative, ids))
        })?;
        let passages_of = |id: &str| graph.entity(id).map_or(0, |e| graph.entity_chunks[e as usize].len());
        let mut by_id = entity_seeds(&linked, fact_weight, passages_of);
        if cfg.name_seed_weight > 0.0 {
            let names = name_matches(graph, question);
            let names: Vec<(String, String)> = names
                .iter()
                .map(|&e| (graph.entity_ids[e as usize].clone(), graph.entity_names[e as usize].clone()))
                .collect();
            name_seeds(cfg, &names, &mut by_id, passages_of, out);
        }
        let seeds: BTreeMap<u32, f64> = by_id.iter().filter_map(|(id, &w)| Some((graph.entity(id)?, w))).collect();
        let passage_seeds = cfg.passage_node_weight > 0.0 && relative.iter().any(|&r| r > 0.0);
        let ranked: Vec<(u32, f64)> = if seeds.is_empty() && !passage_seeds {
            nothing_seeds(out);
            rank(passages.raw.iter().enumerate().map(|(c, &s)| (c as u32, s as f64)))
        } else {
            if seeds.is_empty() {
                no_entity_seeds(out);
            }
            let t = Instant::now();
            let (csr, built) = adjacency(env, graph, cfg)?;
            if built {
                out.timings_ms.insert("graph_build".into(), ms(t));
            }
            let t = Instant::now();
            let ranked = if bounded {
                let at = Seeds { entities: &seeds, relative: &relative, scored: &passages.scored };
                let b = bounded_ranking(&csr, graph.entity_ids.len(), &at, &walk(env, cfg), cfg.ppr_nodes);
                out.extra.insert("ppr_subgraph_nodes".into(), json!(b.nodes));
                out.extra.insert("ppr_pushes".into(), json!(b.pushes));
                b.ranked
            } else {
                self.whole_ranking(env, cfg, &csr, graph.entity_ids.len(), &seeds, &relative, out)
            };
            out.timings_ms.insert("ppr".into(), ms(t));
            ranked
        };
        let top = ranked.into_iter().take(env.config.retrieval.top_k);
        Ok((top.map(|(c, s)| (graph.chunk_ids[c as usize].clone(), s)).collect(), linked))
    }

    /// Step 4 and 5 over the whole graph.
    #[allow(clippy::too_many_arguments)]
    fn whole_ranking(
        &self,
        env: &QueryEnv,
        cfg: &HippoConfig,
        csr: &Csr,
        ne: usize,
        seeds: &BTreeMap<u32, f64>,
        relative: &[f32],
        out: &mut Retrieval,
    ) -> Vec<(u32, f64)> {
        let _ppr = tracing::info_span!("stage", otel.name = "ppr").entered();
        let mut reset = vec![0.0f64; csr.nodes()];
        for (&e, &w) in seeds {
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
                let ranking = FusedRanking { first: ne, relative, share, top_k: env.config.retrieval.top_k };
                let push = ranked_ppr(csr, &reset, damping, &ranking);
                out.extra.insert("ppr_pushes".into(), json!(push.pushes));
                out.extra.insert("ppr_certified".into(), json!(push.certified));
                if push.exhausted {
                    // Ranking gaps too fine for the push budget: sweep the whole graph.
                    sweeps = personalized_pagerank(csr, &reset, damping, DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS);
                    out.extra.insert("ppr_iterations".into(), json!(sweeps.iterations));
                    &sweeps.scores[ne..]
                } else {
                    solved = push.passages;
                    &solved
                }
            }
            PprSolver::OverRelaxed | PprSolver::Reference => {
                sweeps = if self.solver == PprSolver::Reference {
                    gauss_seidel_f64(csr, &reset, damping, 1e-8, DEFAULT_MAX_ITERATIONS)
                } else {
                    personalized_pagerank(csr, &reset, damping, DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS)
                };
                out.extra.insert("ppr_iterations".into(), json!(sweeps.iterations));
                &sweeps.scores[ne..]
            }
        };
        let best = mass.iter().copied().fold(0.0f64, f64::max);
        rank(relative.iter().zip(mass).enumerate().map(|(c, (&r, &p))| {
            let p = if best > 0.0 { p / best } else { 0.0 };
            (c as u32, (1.0 - share) * r as f64 + share * p)
        }))
    }
}

/// Subgraph nodes hippo's PageRank walks on an index above `retrieval.whole_graph_up_to`
/// entities when `hippo.ppr_nodes` is 0 (the whole graph is not read there).
const AROUND_NODES: usize = 5000;

fn walk(env: &QueryEnv, cfg: &HippoConfig) -> Walk {
    Walk {
        passage_weight: cfg.passage_node_weight.max(0.0) as f64,
        damping: cfg.damping as f64,
        share: cfg.ppr_weight.clamp(0.0, 1.0) as f64,
        top_k: env.config.retrieval.top_k,
    }
}

/// Seed the entities the question names (`(id, name)`), each `name_seed_weight` divided by
/// the passages that mention it.
fn name_seeds(
    cfg: &HippoConfig,
    names: &[(String, String)],
    seeds: &mut BTreeMap<String, f64>,
    passages_of: impl Fn(&str) -> usize,
    out: &mut Retrieval,
) {
    for (id, _) in names {
        *seeds.entry(id.clone()).or_default() += cfg.name_seed_weight as f64 / passages_of(id).max(1) as f64;
    }
    let names: Vec<&str> = names.iter().map(|n| n.1.as_str()).collect();
    out.extra.insert("named_entities".into(), json!(names));
}

fn nothing_seeds(out: &mut Retrieval) {
    out.notes.push("nothing seeds the graph: passages ranked by dense retrieval (cosine + BM25 share)".into());
}

fn no_entity_seeds(out: &mut Retrieval) {
    out.notes.push(
        "no entity seeded (no recognised fact, no name in the question): PageRank \
        from the passage seeds alone"
            .into(),
    );
}

/// Best first, ties broken by chunk number (node numbers follow chunk id order).
fn rank(scores: impl Iterator<Item = (u32, f64)>) -> Vec<(u32, f64)> {
    let mut v: Vec<(u32, f64)> = scores.collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}
