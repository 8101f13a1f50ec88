//! The local GGUF provider, by model name.

use std::sync::Arc;

use anyhow::Result;
use rhizome_core::llm::ChatProvider;
use rhizome_core::Config;

pub fn load(config: &Config) -> Result<Arc<dyn ChatProvider>> {
    anyhow::bail!(
        "llm.provider = local is not available in this build (model {:?})",
        config.llm.model
    )
}
