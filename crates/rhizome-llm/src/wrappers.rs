//! Wrapper providers: caching, retries with backoff, concurrency and rate limits, and
//! token accounting. Each wraps any [`ChatProvider`] and is one itself, so a provider is
//! written once and composed: `Metered(Cached(Limited(Retry(provider))))`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rhizome_core::llm::{cache_key, BoxFuture, ChatProvider, ChatRequest, ChatResponse, LlmCache, TokenSink, Usage};
use rhizome_core::{Error, Result};
use serde::Serialize;
use tokio::sync::Semaphore;

/// Serves repeated requests from a persistent cache; only misses reach the provider.
pub struct Cached<P> {
    pub inner: P,
    pub cache: Arc<dyn LlmCache>,
}

impl<P: ChatProvider> ChatProvider for Cached<P> {
    fn id(&self) -> String {
        self.inner.id()
    }
    fn chat<'a>(&'a self, req: &'a ChatRequest, stream: Option<&'a TokenSink>) -> BoxFuture<'a, Result<ChatResponse>> {
        Box::pin(async move {
            let key = cache_key(&self.inner.id(), req);
            if let Some(mut hit) = self.cache.get(&key)? {
                hit.cached = true;
                if let Some(s) = stream {
                    s(&hit.text);
                }
                return Ok(hit);
            }
            let resp = self.inner.chat(req, stream).await?;
            self.cache.put(&key, &self.inner.id(), &resp)?;
            Ok(resp)
        })
    }
}

/// Retries transient failures with exponential backoff (base doubling, capped), honouring
/// a server's `Retry-After`.
pub struct Retry<P> {
    pub inner: P,
    pub max_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl<P: ChatProvider> ChatProvider for Retry<P> {
    fn id(&self) -> String {
        self.inner.id()
    }
    fn chat<'a>(&'a self, req: &'a ChatRequest, stream: Option<&'a TokenSink>) -> BoxFuture<'a, Result<ChatResponse>> {
        Box::pin(async move {
            let mut attempt = 0u32;
            loop {
                match self.inner.chat(req, stream).await {
                    Err(Error::LlmTransient { provider, msg, retry_after_ms }) => {
                        if attempt >= self.max_retries {
                            return Err(Error::Llm {
                                provider,
                                msg: format!("{msg} (gave up after {} attempts)", attempt + 1),
                            });
                        }
                        let backoff = self.base_delay.saturating_mul(1 << attempt.min(16));
                        let wait = retry_after_ms.map(Duration::from_millis).unwrap_or(backoff).min(self.max_delay);
                        tokio::time::sleep(wait).await;
                        attempt += 1;
                    }
                    other => return other,
                }
            }
        })
    }
}

/// Caps calls in flight and requests / tokens per minute (sliding one-minute window;
/// tokens are estimated from the prompt before the call and corrected after it).
pub struct Limited<P> {
    inner: P,
    slots: Semaphore,
    rpm: Option<u32>,
    tpm: Option<u64>,
    window: Mutex<VecDeque<(Instant, u64)>>,
}

impl<P> Limited<P> {
    pub fn new(inner: P, concurrency: usize, rpm: Option<u32>, tpm: Option<u64>) -> Self {
        Limited {
            inner,
            slots: Semaphore::new(concurrency.max(1)),
            rpm: rpm.filter(|&x| x > 0),
            tpm: tpm.filter(|&x| x > 0),
            window: Mutex::new(VecDeque::new()),
        }
    }

    /// How long to wait before a call of `tokens` fits the limits (zero when it does; then
    /// the call is recorded).
    fn admit(&self, tokens: u64) -> Duration {
        let Ok(mut w) = self.window.lock() else { return Duration::ZERO };
        let now = Instant::now();
        while w.front().is_some_and(|(t, _)| now.duration_since(*t) >= Duration::from_secs(60)) {
            w.pop_front();
        }
        let used: u64 = w.iter().map(|x| x.1).sum();
        let over_rpm = self.rpm.is_some_and(|r| w.len() as u64 >= r as u64);
        let over_tpm = self.tpm.is_some_and(|t| !w.is_empty() && used + tokens > t);
        if over_rpm || over_tpm {
            let oldest = w.front().map(|x| x.0).unwrap_or(now);
            return (oldest + Duration::from_secs(60)).saturating_duration_since(now) + Duration::from_millis(5);
        }
        w.push_back((now, tokens));
        Duration::ZERO
    }
}

/// A rough token estimate (4 characters a token) for limits and dry runs.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

impl<P: ChatProvider> ChatProvider for Limited<P> {
    fn id(&self) -> String {
        self.inner.id()
    }
    fn chat<'a>(&'a self, req: &'a ChatRequest, stream: Option<&'a TokenSink>) -> BoxFuture<'a, Result<ChatResponse>> {
        Box::pin(async move {
            let _slot = self.slots.acquire().await.map_err(|_| Error::Cancelled)?;
            let est: u64 = req.messages.iter().map(|m| estimate_tokens(&m.content)).sum::<u64>()
                + req.max_tokens.unwrap_or(256) as u64;
            loop {
                let wait = self.admit(est);
                if wait.is_zero() {
                    break;
                }
                tokio::time::sleep(wait).await;
            }
            self.inner.chat(req, stream).await
        })
    }
}

/// Calls and tokens of one pipeline stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct StageUsage {
    pub calls: u64,
    pub cached_calls: u64,
    pub failed_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// Counts calls and tokens per stage (`ChatRequest::stage`); cached responses are counted
/// apart and cost nothing.
pub struct Metered<P> {
    pub inner: P,
    usage: Mutex<BTreeMap<String, StageUsage>>,
    calls: AtomicU64,
}

impl<P> Metered<P> {
    pub fn new(inner: P) -> Self {
        Metered { inner, usage: Mutex::new(BTreeMap::new()), calls: AtomicU64::new(0) }
    }
    /// Usage so far, per stage.
    pub fn usage(&self) -> BTreeMap<String, StageUsage> {
        self.usage.lock().map(|u| u.clone()).unwrap_or_default()
    }
    /// Calls that reached the provider (cache misses).
    pub fn provider_calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
    fn record(&self, stage: &str, f: impl FnOnce(&mut StageUsage)) {
        if let Ok(mut u) = self.usage.lock() {
            f(u.entry(if stage.is_empty() { "other".into() } else { stage.to_string() }).or_default());
        }
    }
}

/// Every call is also an `llm` span (stage, model, then tokens and whether the cache
/// answered) and counts in the process's metrics (`rhizome_llm_*`).
impl<P: ChatProvider> ChatProvider for Metered<P> {
    fn id(&self) -> String {
        self.inner.id()
    }
    fn chat<'a>(&'a self, req: &'a ChatRequest, stream: Option<&'a TokenSink>) -> BoxFuture<'a, Result<ChatResponse>> {
        use rhizome_core::metrics::{LLM_CACHED_CALLS, LLM_CALLS, LLM_ERRORS, LLM_TOKENS};
        use tracing::field::Empty;
        let stage = if req.stage.is_empty() { "other" } else { req.stage.as_str() };
        // Made here, in the caller's context, so that it is the child of the caller's span
        // whichever thread polls the call.
        let span = tracing::info_span!(
            "llm",
            otel.kind = "client",
            stage,
            model = %self.inner.id(),
            prompt_tokens = Empty,
            completion_tokens = Empty,
            cached = Empty,
            error = Empty,
        );
        let call = async move {
            let r = self.inner.chat(req, stream).await;
            let span = tracing::Span::current();
            match &r {
                Ok(resp) if resp.cached => {
                    self.record(&req.stage, |u| u.cached_calls += 1);
                    LLM_CACHED_CALLS.inc(&[stage]);
                    span.record("cached", true);
                }
                Ok(resp) => {
                    self.calls.fetch_add(1, Ordering::Relaxed);
                    let Usage { prompt_tokens, completion_tokens } = resp.usage;
                    self.record(&req.stage, |u| {
                        u.calls += 1;
                        u.prompt_tokens += prompt_tokens;
                        u.completion_tokens += completion_tokens;
                    });
                    LLM_CALLS.inc(&[stage]);
                    LLM_TOKENS.add(&["prompt"], prompt_tokens as f64);
                    LLM_TOKENS.add(&["completion"], completion_tokens as f64);
                    span.record("prompt_tokens", prompt_tokens);
                    span.record("completion_tokens", completion_tokens);
                    span.record("cached", false);
                }
                Err(e) => {
                    self.record(&req.stage, |u| u.failed_calls += 1);
                    LLM_ERRORS.inc(&[]);
                    span.record("error", tracing::field::display(e));
                }
            }
            r
        };
        Box::pin(tracing::Instrument::instrument(call, span))
    }
}
