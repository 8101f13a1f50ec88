//! Building the configured LLM: provider -> Retry -> Limited -> Cached (in the index) ->
//! Metered, on a tokio runtime owned by the command.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use rhizome_core::llm::ChatProvider;
use rhizome_core::Config;
use rhizome_llm::prompt::Prompts;
use rhizome_llm::{Cached, Limited, Metered, OpenAiConfig, OpenAiProvider, Retry};
use rhizome_store::SqliteLlmCache;

pub type Stack = Metered<Cached<Limited<Retry<Arc<dyn ChatProvider>>>>>;

pub struct Llm {
    pub stack: Arc<Stack>,
    pub prompts: Arc<Prompts>,
    pub runtime: tokio::runtime::Runtime,
    pub cache: Arc<SqliteLlmCache>,
}

impl Llm {
    pub fn provider(&self) -> Arc<dyn ChatProvider> {
        self.stack.clone()
    }

    /// The blocking, prompt-level view query-time code uses.
    pub fn prompt_llm(&self, config: &Config) -> rhizome_llm::BlockingLlm {
        rhizome_llm::BlockingLlm {
            provider: self.stack.clone(),
            prompts: self.prompts.clone(),
            runtime: self.runtime.handle().clone(),
            temperature: config.llm.temperature,
            max_tokens: config.llm.max_tokens,
        }
    }
}

/// The base provider named by `llm.provider`, or None for `none`.
pub fn base_provider(config: &Config) -> Result<Option<Arc<dyn ChatProvider>>> {
    let c = &config.llm;
    match c.provider.as_str() {
        "none" | "" => Ok(None),
        "openai" => {
            if c.model.is_empty() {
                bail!("llm.provider = openai needs a model: --llm-model NAME or RHIZOME_LLM_MODEL");
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
        "local" => crate::llm_local::load(config).map(Some),
        other => bail!("llm.provider = {other:?}: use none, openai or local"),
    }
}

/// The full stack for `config`, caching in the index at `index`. None when no LLM is set.
pub fn build(config: &Config, index: &Path) -> Result<Option<Llm>> {
    let Some(base) = base_provider(config)? else { return Ok(None) };
    let c = &config.llm;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let cache = Arc::new(SqliteLlmCache::open(index)?);
    let retry = Retry {
        inner: base,
        max_retries: c.max_retries,
        base_delay: Duration::from_millis(c.retry_base_ms),
        max_delay: Duration::from_millis(c.retry_max_ms.max(c.retry_base_ms)),
    };
    let limited = Limited::new(
        retry,
        c.concurrency,
        Some(c.requests_per_minute),
        Some(c.tokens_per_minute),
    );
    let stack = Arc::new(Metered::new(Cached { inner: limited, cache: cache.clone() }));
    let dir = Some(Path::new(&c.prompts_dir)).filter(|p| !p.as_os_str().is_empty());
    let prompts = Arc::new(Prompts::load(dir)?);
    Ok(Some(Llm { stack, prompts, runtime, cache }))
}
