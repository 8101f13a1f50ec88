//! The local GGUF provider, by model name (`rhizome models list` shows them).

use std::sync::Arc;

use anyhow::Result;
use rhizome_core::llm::ChatProvider;
use rhizome_core::Config;
use rhizome_llm_local::{LocalChat, LocalOptions};

pub fn options(config: &Config) -> LocalOptions {
    LocalOptions {
        n_ctx: config.llm.context_tokens,
        default_max_tokens: config.llm.max_tokens,
        ..LocalOptions::default()
    }
}

pub fn load_chat(config: &Config) -> Result<LocalChat> {
    if config.llm.model.is_empty() {
        anyhow::bail!("llm.provider = local needs a model: --llm-model qwen2.5-0.5b (see `rhizome models list`)");
    }
    let dir = rhizome_embed::models_dir();
    Ok(LocalChat::load_installed(&config.llm.model, &dir, options(config))?)
}

pub fn load(config: &Config) -> Result<Arc<dyn ChatProvider>> {
    Ok(Arc::new(load_chat(config)?))
}
