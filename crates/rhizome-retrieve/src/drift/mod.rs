//! `drift`: Microsoft GraphRAG's DRIFT search (Dynamic Reasoning and Inference with
//! Flexible Traversal): a primer over community reports, then rounds of local search on
//! the follow-up questions it raises, then one answer over everything learnt.
//!
//! With an LLM:
//! 1. Primer. HyDE: one `drift_hyde` call drafts a hypothetical report answering the
//!    question, shaped like the highest-rated of the `primer_top_k` reports nearest the
//!    question (its title and summary are the template); the draft is embedded (as a passage, like the reports) and the
//!    `primer_top_k` closest reports are read by `primer_folds` parallel `drift_primer`
//!    calls (reports dealt round-robin by rank), each answering JSON `{intermediate_answer,
//!    score, follow_up_queries}`. The root of the query-state graph gets the joined
//!    answers, their mean score and the union of their follow-ups (case-insensitively
//!    distinct). A garbled fold is dropped with a note; when every fold is, the question
//!    itself becomes the first follow-up.
//! 2. `n_depth` rounds: the best `drift_k_followups` unanswered follow-ups (a follow-up
//!    scores as its parent until answered; ties by text) each get a local search
//!    ([`crate::Local`] with `local.max_context_tokens = drift.local_max_tokens`) and one
//!    `drift_local` call, all calls of a round at once; each answer (JSON `{response,
//!    score, follow_up_queries}`) becomes a node with an edge from its parent, and its
//!    follow-ups join the queue. A garbled reply is dropped with a note.
//! 3. Reduce: one `drift_reduce` call over the answers, best score first, within
//!    `reduce_max_tokens`, in `response_type`: [`Retrieval::answer`].
//!
//! Without an LLM the question itself is embedded, the closest reports are the primer's
//! contexts, and one local search runs on the question; notes say what was skipped. An
//! index without community reports falls back to that local search alone.
//!
//! Contexts: the primer's reports (kind `report`, id the community id, score the cosine),
//! then the local-search contexts the answered follow-ups used (distinct by kind and id,
//! best score kept). `extra.query_graph` holds the query-state graph, `extra.llm` the calls
//! made (DRIFT's and those of its local searches) and the tokens sent and received.

mod meter;
pub(crate) mod parse;
mod primer;
mod reduce;
mod search;
mod settings;
mod state;

use std::collections::HashMap;
use std::time::Instant;

use rhizome_core::config::Section;
use rhizome_core::llm::{PromptCall, PromptLlm};
use rhizome_core::{EmbedKind, Result};
use serde_json::json;

use self::meter::Metered;
use self::parse::parse_step;
use self::primer::{closest_reports, hypothetical_report, run_folds, Ranked};
use self::search::{LocalFound, LocalRunner};
pub use self::settings::DriftConfig;
use self::state::QueryState;
use crate::{ms, Context, ContextKind, LocalConfig, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

/// Token-accounting stage of DRIFT's own calls.
pub(crate) const STAGE: &str = "query.drift";

/// The DRIFT retriever.
pub struct Drift;

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Drift,
    description: "GraphRAG DRIFT: a report primer, then rounds of local search",
    reads_graph: true,
    settings: &[&DriftConfig::KIND, &LocalConfig::KIND],
    retriever: |_| Box::new(Drift),
    prompts: &[
        ("drift_hyde", include_str!("drift_hyde.txt")),
        ("drift_primer", include_str!("drift_primer.txt")),
        ("drift_local", include_str!("drift_local.txt")),
        ("drift_reduce", include_str!("drift_reduce.txt")),
    ],
}];

impl Retriever for Drift {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let runner = LocalRunner::new(env);
        let out = Retrieval::default();
        let mut run = Run { env, question, runner, out, contexts: Contexts::default(), local_notes: Vec::new() };
        match env.llm {
            Some(llm) => {
                let metered = Metered::new(llm);
                run.with_llm(&metered)?;
                run.out.extra.insert("llm".into(), metered.to_json());
            }
            None => run.offline()?,
        }
        Ok(run.finish())
    }
}

/// Contexts gathered so far: reports first, then local-search contexts, distinct by kind
/// and id (best score kept, first position kept).
#[derive(Default)]
struct Contexts {
    list: Vec<Context>,
    index: HashMap<(ContextKind, String), usize>,
}

impl Contexts {
    fn add(&mut self, c: Context) {
        match self.index.get(&(c.kind, c.id.clone())) {
            Some(&i) => {
                if c.score > self.list[i].score {
                    self.list[i].score = c.score;
                }
            }
            None => {
                self.index.insert((c.kind, c.id.clone()), self.list.len());
                self.list.push(c);
            }
        }
    }
}

/// One search in progress.
struct Run<'e, 'a> {
    env: &'e QueryEnv<'a>,
    question: &'e str,
    runner: LocalRunner,
    out: Retrieval,
    contexts: Contexts,
    /// Notes of the local searches, each once.
    local_notes: Vec<String>,
}

impl Run<'_, '_> {
    fn time(&mut self, stage: &str, since: Instant) {
        *self.out.timings_ms.entry(stage.to_string()).or_default() += ms(since);
    }

    fn local(&mut self, llm: Option<&dyn PromptLlm>, query: &str) -> Result<LocalFound> {
        let found = self.runner.search(self.env, llm, query)?;
        for n in &found.notes {
            let n = format!("local search: {n}");
            if !self.local_notes.contains(&n) {
                self.local_notes.push(n);
            }
        }
        Ok(found)
    }

    fn add_reports(&mut self, ranked: &[Ranked]) {
        for r in ranked {
            self.contexts.add(r.context());
        }
        let ids: Vec<&str> = ranked.iter().map(|r| r.report.community_id.as_str()).collect();
        self.out.extra.insert("primer_reports".into(), json!(ids));
    }

    /// The LLM-free path, and the fallback of an index without reports: the closest
    /// reports by the question's own vector, one local search on the question.
    fn offline(&mut self) -> Result<()> {
        let t = Instant::now();
        let k = self.env.config.section::<DriftConfig>().primer_top_k;
        let ranked = closest_reports(self.env, self.question, EmbedKind::Query, k)?;
        self.time("primer_reports", t);
        if ranked.is_empty() {
            self.no_primer_note()?;
        } else {
            self.add_reports(&ranked);
            self.out.notes.push(format!(
                "no LLM configured: HyDE skipped (reports found by the question itself), the {} closest \
                 reports are the primer's contexts without fold calls, no follow-up questions (one local \
                 search on the question), no reduce answer",
                ranked.len()
            ));
        }
        self.local_only(None)
    }

    /// Why no report was found: none in the index, or none with a vector. Counted only
    /// then: a count is a read of every report on some backends.
    fn no_primer_note(&mut self) -> Result<()> {
        let note = if self.env.store.community_report_count()? == 0 {
            "no community reports in the index (build them with `rhizome communities`): \
            DRIFT's primer skipped, fell back to local search for the question alone"
        } else {
            "no report vector matched (are the reports embedded?): DRIFT's primer \
            skipped, fell back to local search for the question alone"
        };
        self.out.notes.push(note.into());
        Ok(())
    }

    /// The query graph of a single local search on the question: the root and its node.
    fn local_only(&mut self, llm: Option<&dyn PromptLlm>) -> Result<()> {
        let t = Instant::now();
        let mut state = QueryState::new(self.question);
        let found = self.local(llm, self.question)?;
        state.propose_again(0, self.question);
        let f = state.take_best(1);
        state.add_answer(&f[0], None, None);
        for c in found.contexts {
            self.contexts.add(c);
        }
        self.time("local_1", t);
        self.out.extra.insert("query_graph".into(), state.to_json());
        Ok(())
    }

    fn with_llm(&mut self, llm: &Metered) -> Result<()> {
        let env = self.env;
        let cfg = env.config.section::<DriftConfig>();
        // 1. Primer.
        let t = Instant::now();
        let near = closest_reports(self.env, self.question, EmbedKind::Query, cfg.primer_top_k)?;
        self.time("primer_reports", t);
        if near.is_empty() {
            self.no_primer_note()?;
            return self.local_only(Some(llm));
        }
        let t = Instant::now();
        let hyde = hypothetical_report(llm, self.env, self.question, &near, &mut self.out.notes);
        self.time("hyde", t);
        let t = Instant::now();
        let ranked = match &hyde {
            Some(h) => closest_reports(self.env, h, EmbedKind::Passage, cfg.primer_top_k)?,
            None => near,
        };
        self.time("primer_reports", t);
        self.out.extra.insert("hyde".into(), json!(hyde));
        if ranked.is_empty() {
            self.no_primer_note()?;
            return self.local_only(Some(llm));
        }
        self.add_reports(&ranked);
        let t = Instant::now();
        let primer = run_folds(llm, self.env, self.question, &ranked, &mut self.out.notes);
        self.time("primer", t);
        self.out.extra.insert("primer_folds".into(), json!(primer.folds));
        let mut state = QueryState::new(self.question);
        match primer.answer {
            Some((answer, score)) => {
                state.answer_root(answer, score);
                if state.propose(0, &primer.follow_ups) == 0 {
                    self.out.notes.push("the primer proposed no follow-up question".into());
                }
            }
            None => {
                self.out.notes.push(
                    "every primer fold was dropped: the question itself is the first \
                    follow-up (answered by local search)"
                        .into(),
                );
                state.propose_again(0, self.question);
            }
        }

        // 2. Rounds of follow-ups.
        for round in 1..=cfg.n_depth {
            let picked = state.take_best(cfg.drift_k_followups);
            if picked.is_empty() {
                if round > 1 {
                    self.out.notes.push(format!("no follow-up left after round {}", round - 1));
                }
                break;
            }
            let t = Instant::now();
            let mut found = Vec::with_capacity(picked.len());
            for f in &picked {
                found.push(self.local(Some(llm), &f.query)?);
            }
            self.time(&format!("local_{round}"), t);
            let t = Instant::now();
            let calls: Vec<PromptCall> = picked
                .iter()
                .zip(&found)
                .map(|(f, l)| {
                    let context = if l.rendered.is_empty() { "(local search found nothing)" } else { &l.rendered };
                    PromptCall::new(
                        "drift_local",
                        STAGE,
                        &[("question", self.question), ("follow_up", &f.query), ("context", context)],
                    )
                    .json()
                    .max_tokens(cfg.max_output_tokens)
                })
                .collect();
            let replies = llm.run(&calls);
            for ((f, l), reply) in picked.iter().zip(found).zip(replies) {
                let parsed = reply.map_err(|e| format!("call failed: {e}")).and_then(|r| parse_step(&r, "response"));
                match parsed {
                    Ok(step) => {
                        for p in &step.problems {
                            self.out.notes.push(format!("follow-up {:?}: {p}", f.query));
                        }
                        let id = state.add_answer(f, Some(step.answer), Some(step.score));
                        state.propose(id, &step.follow_ups);
                        for c in l.contexts {
                            self.contexts.add(c);
                        }
                    }
                    Err(why) => self.out.notes.push(format!("follow-up {:?} dropped: {why}", f.query)),
                }
            }
            self.time(&format!("follow_ups_{round}"), t);
        }
        self.out.extra.insert("unanswered_follow_ups".into(), json!(state.unanswered()));

        // 3. Reduce.
        let t = Instant::now();
        self.out.answer = reduce::reduce(llm, self.env, self.question, &state, &mut self.out.notes);
        self.time("reduce", t);
        self.out.extra.insert("query_graph".into(), state.to_json());
        Ok(())
    }

    fn finish(mut self) -> Retrieval {
        self.out.notes.append(&mut self.local_notes);
        self.out.contexts = self.contexts.list;
        self.out
    }
}
