//! The embedder of an index: `embed.model = auto` follows the index's own model (the
//! default for a new index); an explicit model the index does not hold is refused.

use std::sync::Arc;

use rhizome_core::{Config, Embedder, Error, Result};

/// The model `config` asks for, given the model the index holds (`held`).
pub fn model_name<'a>(config: &'a Config, held: Option<&'a str>) -> &'a str {
    match config.embed.model.as_str() {
        "auto" => held.unwrap_or(rhizome_core::config::DEFAULT_EMBED_MODEL),
        explicit => explicit,
    }
}

/// Refuse an explicit model the index does not hold (vectors are never mixed).
pub fn check_held(config: &Config, held: Option<&str>, index: &str) -> Result<()> {
    let wanted = &config.embed.model;
    match held {
        Some(m) if wanted != "auto" && m != wanted => Err(Error::Config(format!(
            "index {index} holds vectors of {m}, but embed.model is {wanted}; use --set embed.model={m} \
             (or auto), or index into a new --index directory"
        ))),
        _ => Ok(()),
    }
}

/// Load the embedder named by `embed.model` (`auto`: `held`, else the default) from the
/// model cache, with the configured batch size.
pub fn load(config: &Config, held: Option<&str>) -> Result<Arc<dyn Embedder>> {
    let dir = rhizome_embed::models_dir();
    let b = config.embed.batch_size;
    let name = model_name(config, held);
    Ok(match name {
        rhizome_embed::MINILM_MODEL_ID => Arc::new(rhizome_embed::load_minilm(&dir)?.with_batch_size(b)),
        rhizome_embed::E5_MODEL_ID => Arc::new(rhizome_embed::load_e5(&dir)?.with_batch_size(b)),
        _ => Arc::from(
            rhizome_embed::load_embedder(name, &dir)
                .map_err(|e| Error::Config(format!("embed.model = {name:?}: {e} (see `rhizome models list`)")))?,
        ),
    })
}
