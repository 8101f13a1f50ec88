//! The embedder of an index: `embed.model = auto` follows the index's own model (the
//! default for a new index); an explicit model the index does not hold is refused.

use std::sync::Arc;

use rhizome_core::{Config, EmbedKind, Embedder, Error, Result, SpanVectors};

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

/// The index's embedder as the engine lends it: every call is counted
/// (`rhizome_embedder_calls_total`, `rhizome_embedded_texts_total`) and is an `embed`
/// span with the number of texts.
pub(crate) struct Observed(pub Arc<dyn Embedder>);

fn counted(texts: usize) {
    rhizome_core::metrics::EMBEDDER_CALLS.inc(&[]);
    rhizome_core::metrics::EMBEDDED_TEXTS.add(&[], texts as f64);
}

impl Embedder for Observed {
    fn model_id(&self) -> &str {
        self.0.model_id()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn cosine_scale(&self) -> f32 {
        self.0.cosine_scale()
    }
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        counted(texts.len());
        let span = tracing::info_span!("embed", model = self.0.model_id(), texts = texts.len(), kind = ?kind);
        span.in_scope(|| self.0.embed(texts, kind))
    }
    fn embed_spans(
        &self,
        texts: &[String],
        spans: &[Vec<std::ops::Range<usize>>],
        kind: EmbedKind,
    ) -> Result<Option<Vec<SpanVectors>>> {
        let span = tracing::info_span!("embed", model = self.0.model_id(), texts = texts.len(), kind = ?kind);
        let out = span.in_scope(|| self.0.embed_spans(texts, spans, kind))?;
        if out.is_some() {
            counted(texts.len());
        }
        Ok(out)
    }
}
