//! Asking: follow-up rewriting against a chat history, retrieval by method, the answer
//! (the method's own, the LLM's — streamed to a sink when given — or extractive), and
//! query analysis.

use std::collections::BTreeMap;

use rhizome_core::llm::{ChatMessage, PromptLlm, TokenSink};
use rhizome_core::{Config, DocFilter, Embedder, Error, Result, StoreRead};
use rhizome_llm::answer::{generate_answer, Evidence};
use rhizome_llm::BlockingLlm;
use rhizome_retrieve::analyze::{analyze as run_analysis, standalone_question, QueryAnalysis};
use rhizome_retrieve::scope::ScopedStore;
use rhizome_retrieve::{
    extractive_answer, retriever, AnswerKind, Context, GraphCache, Method, QueryEnv, INSUFFICIENT_EVIDENCE,
};
use serde::Serialize;

use crate::Engine;

/// A question to answer.
#[derive(Debug, Clone)]
pub struct QueryRequest {
    pub question: String,
    pub method: Method,
    /// Contexts to return (default: `retrieval.top_k`).
    pub top_k: Option<usize>,
    /// Earlier messages: a follow-up is first rewritten as a self-contained question.
    pub history: Vec<ChatMessage>,
    /// Settings for this question only (`section.key`, value), e.g. the method's
    /// parameters (`hippo.damping`, `multihop.max_hops`), checked like every setting.
    pub settings: Vec<(String, String)>,
    /// The documents the question may draw on (empty: all). Every method retrieves only
    /// chunks, entities and facts those documents support.
    pub filter: DocFilter,
    /// Retrieval only: the evidence, no answer written (a search tool, a retriever for
    /// another framework). A method that writes its own answer (global, drift, tog) still
    /// does, since that is how it ranks.
    pub retrieve_only: bool,
}

impl QueryRequest {
    pub fn new(question: &str, method: Method) -> Self {
        QueryRequest {
            question: question.into(),
            method,
            top_k: None,
            history: Vec::new(),
            settings: Vec::new(),
            filter: DocFilter::default(),
            retrieve_only: false,
        }
    }
}

/// The answer with its evidence.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueryOutcome {
    /// The question as asked.
    pub question: String,
    /// The question retrieval used (a follow-up made self-contained), when it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standalone_question: Option<String>,
    /// The retrieval method, as the CLI names it.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub method: Method,
    /// Cites contexts as `[n]`.
    pub answer: String,
    /// `llm`, `extractive` or `none` (nothing retrieved).
    pub answer_kind: AnswerKind,
    pub contexts: Vec<Context>,
    pub paths: Vec<String>,
    pub notes: Vec<String>,
    /// Method-specific evidence (scores, anchors, the routed method, a query graph...).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub extra: BTreeMap<String, serde_json::Value>,
    /// Time per stage, in milliseconds.
    pub timings_ms: BTreeMap<String, f64>,
}

impl Engine {
    /// The prompt-level LLM view for query-time code, when an LLM is configured.
    fn prompt_llm(&self, config: &Config) -> Result<Option<BlockingLlm>> {
        Ok(self.llm()?.map(|l| l.prompt_llm(config)))
    }

    /// Run `f` with the retrieval environment of this index: a pooled reader, the
    /// index's embedder, the settings (with `top_k`) calibrated to it, the LLM and the
    /// shared graph.
    pub fn with_env<T>(&self, top_k: Option<usize>, f: impl FnOnce(&QueryEnv) -> Result<T>) -> Result<T> {
        self.with_env_config(&self.config, top_k, f)
    }

    fn with_env_config<T>(
        &self,
        base: &Config,
        top_k: Option<usize>,
        f: impl FnOnce(&QueryEnv) -> Result<T>,
    ) -> Result<T> {
        let store = self.reader()?;
        let embedder = self.embedder(&*store)?;
        self.with_env_embedder(&*store, embedder.as_ref(), base, top_k, self.graph(), f)
    }

    fn with_env_embedder<T>(
        &self,
        store: &dyn StoreRead,
        embedder: &dyn Embedder,
        base: &Config,
        top_k: Option<usize>,
        graph: &GraphCache,
        f: impl FnOnce(&QueryEnv) -> Result<T>,
    ) -> Result<T> {
        let mut config = base.calibrated(embedder.cosine_scale());
        if let Some(k) = top_k {
            config.retrieval.top_k = k;
        }
        let llm = self.prompt_llm(&config)?;
        let env = QueryEnv { store, embedder, config: &config, llm: llm.as_ref().map(|p| p as &dyn PromptLlm), graph };
        f(&env)
    }

    /// The question made self-contained against `history` (LLM-assisted when one is
    /// configured); None when it is not a follow-up.
    pub fn standalone(&self, question: &str, history: &[ChatMessage]) -> Result<Option<String>> {
        if history.is_empty() || question.trim().is_empty() {
            return Ok(None);
        }
        let s = self.with_llm_view(|llm| standalone_question(question, history, llm))?;
        Ok(s.is_follow_up.then_some(s.question))
    }

    /// Check `req` without running it: a question is there and every per-request setting
    /// is a known key with a valid value (the error names it). A caller that answers
    /// in a stream calls this first, so that bad input is refused before streaming.
    pub fn check_query(&self, req: &QueryRequest) -> Result<()> {
        if req.question.trim().is_empty() {
            return Err(crate::empty_question("rhizome query"));
        }
        check_request(req)?;
        self.config.with_settings(&req.settings, "params").map(|_| ())
    }

    /// Answer `req` (checked as [`Engine::check_query`] does). With an LLM and a `sink`, the answer's tokens go to the sink as the
    /// model writes them.
    /// Queries share the cores: one alone uses all of them, one beside others uses one.
    /// Each query is a `query` span (method, top_k) and one observation of
    /// `rhizome_query_duration_seconds{method}`.
    pub fn query(&self, req: &QueryRequest, sink: Option<&TokenSink>) -> Result<QueryOutcome> {
        let span = tracing::info_span!("query", method = req.method.as_str(), top_k = req.top_k);
        // The span crosses to the pool the query may run on.
        self.share.run(|| span.in_scope(|| self.query_here(req, sink)))
    }

    fn query_here(&self, req: &QueryRequest, sink: Option<&TokenSink>) -> Result<QueryOutcome> {
        let started = std::time::Instant::now();
        let out = self.answer(req, sink);
        let secs = started.elapsed().as_secs_f64();
        rhizome_core::metrics::QUERY_DURATION.observe(&[req.method.as_str()], secs);
        let mut out = out?;
        out.timings_ms.insert("total".into(), secs * 1e3);
        Ok(out)
    }

    fn answer(&self, req: &QueryRequest, sink: Option<&TokenSink>) -> Result<QueryOutcome> {
        check_request(req)?;
        let asked = rhizome_core::text::nfc(&req.question).into_owned();
        if asked.trim().is_empty() {
            return Err(crate::empty_question("rhizome query"));
        }
        let standalone = self.standalone(&asked, &req.history)?;
        let question = standalone.clone().unwrap_or_else(|| asked.clone());
        let method = req.method;
        let base = self.config.with_settings(&req.settings, "params")?;
        // One reader and one embedder for the whole query; no text is embedded twice.
        let store = self.reader()?;
        let shared = self.embedder(&*store)?;
        let embedder = rhizome_embed::MemoEmbedder::new(shared, 8);
        // A filtered question sees the index through the scope of its documents.
        let t = std::time::Instant::now();
        let scope = if req.filter.is_empty() { None } else { Some(self.scope(&*store, &req.filter)?) };
        let scoped = scope.as_ref().map(|s| ScopedStore { inner: &*store, scope: s });
        let (view, graph): (&dyn StoreRead, &GraphCache) = match (&scoped, &scope) {
            (Some(v), Some(s)) => (v, &s.graph),
            _ => (&*store, self.graph()),
        };
        let scoping_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut r = self.with_env_embedder(view, &embedder, &base, req.top_k, graph, |env| {
            let t = std::time::Instant::now();
            let span = tracing::info_span!("retrieve", method = method.as_str());
            let mut r = span.in_scope(|| retriever(method).retrieve(env, &question))?;
            r.timings_ms.insert("retrieve".into(), t.elapsed().as_secs_f64() * 1e3);
            Ok(r)
        })?;
        if let Some(s) = &scope {
            r.timings_ms.insert("filter".into(), scoping_ms);
            r.notes.push(format!(
                "filter {}: {} document(s), {} chunks, {} entities",
                req.filter.describe(),
                s.docs.len(),
                s.chunks.len(),
                s.entities.len()
            ));
        }
        let t = std::time::Instant::now();
        let _answering = tracing::info_span!("answer").entered();
        let own_answer = r.answer.take();
        // A method may say how many of its contexts go to the answer (hippo: qa_top_k).
        let answer_contexts = r.answer_contexts();
        let (answer, kind) = if let Some(a) = own_answer {
            // The method wrote its own answer (global's and drift's reduce, tog's path answer).
            (a, AnswerKind::Llm)
        } else if r.contexts.is_empty() {
            (INSUFFICIENT_EVIDENCE.to_string(), AnswerKind::None)
        } else if req.retrieve_only {
            (String::new(), AnswerKind::Skipped)
        } else if let Some(llm) = self.llm()? {
            let cites: Vec<String> = answer_contexts.iter().map(|c| c.cite()).collect();
            let evidence: Vec<Evidence> =
                answer_contexts.iter().zip(&cites).map(|(c, cite)| Evidence { source: cite, text: &c.text }).collect();
            let c = &self.config.llm;
            let resp = llm.runtime.block_on(generate_answer(
                llm.stack.as_ref(),
                &llm.prompts,
                &question,
                &evidence,
                sink,
                c.temperature,
                c.max_tokens,
            ))?;
            (resp.text, AnswerKind::Llm)
        } else {
            let a = extractive_answer(
                &embedder,
                Some(&*store),
                &question,
                answer_contexts,
                base.retrieval.answer_sentences,
                3,
            )?;
            (a, AnswerKind::Extractive)
        };
        r.timings_ms.insert("answer".into(), t.elapsed().as_secs_f64() * 1e3);
        Ok(QueryOutcome {
            question: asked,
            standalone_question: standalone,
            method,
            answer,
            answer_kind: kind,
            contexts: r.contexts,
            paths: r.paths,
            notes: r.notes,
            extra: r.extra,
            timings_ms: r.timings_ms,
        })
    }

    /// Query analysis (type, complexity, key concepts, multi-hop, follow-up rewriting).
    /// Needs no index: with an LLM configured and no index, the LLM runs without a cache.
    pub fn analyze(&self, question: &str, history: &[ChatMessage]) -> Result<QueryAnalysis> {
        let q = rhizome_core::text::nfc(question).into_owned();
        if q.trim().is_empty() {
            return Err(crate::empty_question("rhizome analyze"));
        }
        self.with_llm_view(|llm| run_analysis(&q, history, llm))
    }

    /// Run `f` with the configured LLM: the cached stack when the index exists, else the
    /// bare provider (so that analysing creates no index).
    fn with_llm_view<T>(&self, f: impl FnOnce(Option<&dyn PromptLlm>) -> Result<T>) -> Result<T> {
        if self.exists() {
            let view = self.prompt_llm(&self.config)?;
            f(view.as_ref().map(|v| v as &dyn PromptLlm))
        } else {
            let bare = crate::llm::bare(&self.config)?;
            f(bare.as_ref().map(|(_, v)| v as &dyn PromptLlm))
        }
    }
}

/// The config sections a query may change per request: `retrieval` and the methods' own
/// sections. Everything else (store, embedder, LLM provider, extraction) is the process's.
pub fn query_sections() -> Vec<&'static str> {
    let mut out = vec!["retrieval"];
    for m in Method::ALL {
        for s in m.settings_sections() {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// The longest question a query takes, in bytes of UTF-8. A question is embedded to at
/// most a few hundred tokens and echoed in the outcome: past this it is refused, so that a
/// reply stays near the size of the request's question.
pub const MAX_QUESTION_BYTES: usize = 16 * 1024;

/// Refuse a question over [`MAX_QUESTION_BYTES`], and a per-request setting outside
/// [`query_sections`], naming it and what may be set.
fn check_request(req: &QueryRequest) -> Result<()> {
    if req.question.len() > MAX_QUESTION_BYTES {
        return Err(Error::bad_input(
            "question",
            format!(
                "{} bytes, more than the {MAX_QUESTION_BYTES} a question may have; ask a shorter question",
                req.question.len()
            ),
        ));
    }
    let sections = query_sections();
    for (key, _) in &req.settings {
        let section = key.trim().split_once('.').map_or(key.trim(), |(s, _)| s);
        if !sections.contains(&section) {
            let may: Vec<String> = sections.iter().map(|s| format!("{s}.*")).collect();
            return Err(Error::bad_input(
                format!("params.{}", rhizome_core::text::clip(key.trim(), 80)),
                format!("cannot be set per request (it is the server's setting); a request may set {}", may.join(", ")),
            ));
        }
    }
    Ok(())
}
