//! The configured LLM: provider -> Retry -> Limited -> Cached (with the index) -> Metered,
//! on a tokio runtime of its own.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rhizome_core::llm::{ChatProvider, LlmCache};
use rhizome_core::{Config, Error, Result, StoreWrite};
use rhizome_llm::prompt::Prompts;
use rhizome_llm::{BlockingLlm, Cached, Limited, Metered, OpenAiConfig, OpenAiProvider, Retry, StageUsage};
#[cfg(feature = "local-llm")]
use rhizome_llm_local::{LocalChat, LocalOptions};

pub type Stack = Metered<Cached<Limited<Retry<Arc<dyn ChatProvider>>>>>;

/// The configured LLM stack with its prompts and runtime.
pub struct Llm {
    pub stack: Arc<Stack>,
    pub prompts: Arc<Prompts>,
    pub runtime: tokio::runtime::Runtime,
    pub cache: Arc<dyn LlmCache>,
}

impl Llm {
    pub fn provider(&self) -> Arc<dyn ChatProvider> {
        self.stack.clone()
    }

    /// The blocking, prompt-level view query-time code uses.
    pub fn prompt_llm(&self, config: &Config) -> BlockingLlm {
        BlockingLlm {
            provider: self.stack.clone(),
            prompts: self.prompts.clone(),
            runtime: self.runtime.handle().clone(),
            temperature: config.llm.temperature,
            max_tokens: config.llm.max_tokens,
        }
    }
}

fn runtime(threads: usize) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|e| Error::Llm { provider: "runtime".into(), msg: format!("cannot start the async runtime: {e}") })
}

/// Local GGUF model options from the settings.
#[cfg(feature = "local-llm")]
pub fn local_options(config: &Config) -> LocalOptions {
    LocalOptions {
        n_ctx: config.llm.context_tokens,
        default_max_tokens: config.llm.max_tokens,
        ..LocalOptions::default()
    }
}

/// The local chat model named by `llm.model`.
#[cfg(feature = "local-llm")]
pub fn load_local(config: &Config) -> Result<LocalChat> {
    if config.llm.model.is_empty() {
        return Err(Error::Config(
            "llm.provider = local needs a model: --llm-model qwen2.5-0.5b (see `rhizome models list`)".into(),
        ));
    }
    LocalChat::load_installed(&config.llm.model, &rhizome_embed::models_dir(), local_options(config))
}

/// The base provider named by `llm.provider`, or None for `none`.
pub fn base_provider(config: &Config) -> Result<Option<Arc<dyn ChatProvider>>> {
    let c = &config.llm;
    match c.provider.as_str() {
        "none" | "" => Ok(None),
        "openai" => {
            if c.model.is_empty() {
                return Err(Error::Config(
                    "llm.provider = openai needs a model: --llm-model NAME or RHIZOME_LLM_MODEL".into(),
                ));
            }
            let api_key = std::env::var(&c.api_key_env).ok().filter(|k| !k.is_empty());
            let p = OpenAiProvider::new(OpenAiConfig {
                base_url: c.base_url.clone(),
                model: c.model.clone(),
                api_key,
                azure_api_version: Some(c.azure_api_version.clone()).filter(|v| !v.is_empty()),
                timeout: Duration::from_secs_f64(c.timeout_s.max(0.1)),
            })?;
            Ok(Some(Arc::new(p)))
        }
        #[cfg(feature = "local-llm")]
        "local" => Ok(Some(Arc::new(load_local(config)?))),
        #[cfg(not(feature = "local-llm"))]
        "local" => Err(Error::Config(
            "llm.provider = local: this build of rhizome has no local LLM (llama.cpp); build it with the \
             `local-llm` feature (`cargo build --release --features local-llm`), or use llm.provider = openai"
                .into(),
        )),
        other => Err(Error::Config(format!("llm.provider = {other:?}: use none, openai or local"))),
    }
}

fn retry_limited(config: &Config, base: Arc<dyn ChatProvider>) -> Limited<Retry<Arc<dyn ChatProvider>>> {
    let c = &config.llm;
    let retry = Retry {
        inner: base,
        max_retries: c.max_retries,
        base_delay: Duration::from_millis(c.retry_base_ms),
        max_delay: Duration::from_millis(c.retry_max_ms.max(c.retry_base_ms)),
    };
    Limited::new(retry, c.concurrency, Some(c.requests_per_minute), Some(c.tokens_per_minute))
}

fn prompts(config: &Config) -> Result<Arc<Prompts>> {
    let dir = Some(Path::new(&config.llm.prompts_dir)).filter(|p| !p.as_os_str().is_empty());
    Ok(Arc::new(Prompts::load_with(dir, &crate::prompts())?))
}

/// The full stack for `config`, caching in `cache`. None when no LLM is configured.
pub fn build(config: &Config, cache: impl FnOnce() -> Result<Arc<dyn LlmCache>>) -> Result<Option<Llm>> {
    let Some(base) = base_provider(config)? else { return Ok(None) };
    let cache = cache()?;
    let stack = Arc::new(Metered::new(Cached { inner: retry_limited(config, base), cache: cache.clone() }));
    Ok(Some(Llm { stack, prompts: prompts(config)?, runtime: runtime(2)?, cache }))
}

/// The provider behind retries and limits, without a cache (no index needed).
pub fn bare(config: &Config) -> Result<Option<(tokio::runtime::Runtime, BlockingLlm)>> {
    let Some(base) = base_provider(config)? else { return Ok(None) };
    let rt = runtime(1)?;
    let c = &config.llm;
    let llm = BlockingLlm {
        provider: Arc::new(retry_limited(config, base)),
        prompts: prompts(config)?,
        runtime: rt.handle().clone(),
        temperature: c.temperature,
        max_tokens: c.max_tokens,
    };
    Ok(Some((rt, llm)))
}

/// Add this run's LLM usage to the totals kept in the index; returns this run's.
pub(crate) fn record_usage(store: &mut dyn StoreWrite, llm: &Llm) -> Result<BTreeMap<String, StageUsage>> {
    let run = llm.stack.usage();
    let mut total: BTreeMap<String, StageUsage> =
        store.meta("llm_usage")?.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
    for (stage, u) in &run {
        let t = total.entry(stage.clone()).or_default();
        t.calls += u.calls;
        t.cached_calls += u.cached_calls;
        t.failed_calls += u.failed_calls;
        t.prompt_tokens += u.prompt_tokens;
        t.completion_tokens += u.completion_tokens;
    }
    store.set_meta("llm_usage", &serde_json::to_string(&total).unwrap_or_default())?;
    Ok(run)
}
