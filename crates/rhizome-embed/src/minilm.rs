//! `all-MiniLM-L6-v2`: a 6-layer, 384-wide BERT sentence embedder (mean pooling + L2).

use std::path::{Path, PathBuf};

use rhizome_core::text::clip;
use rhizome_core::{l2_normalize, EmbedKind, Embedder, Error, Result};
use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{Bert, BertConfig};

/// Model id reported by [`MiniLmEmbedder::model_id`](Embedder::model_id).
pub const MINILM_MODEL_ID: &str = "all-MiniLM-L6-v2";
/// Sequences per forward pass unless changed with [`MiniLmEmbedder::with_batch_size`].
pub const DEFAULT_BATCH_SIZE: usize = 32;
/// Token limit (specials included) unless changed with [`MiniLmEmbedder::with_max_tokens`];
/// the limit sentence-transformers uses for this model.
pub const DEFAULT_MAX_TOKENS: usize = 256;

/// Files a MiniLM model directory must hold.
pub const MINILM_FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

/// Local CPU sentence embedder for `all-MiniLM-L6-v2` (any BERT checkpoint with a
/// `tokenizer.json` works the same way).
///
/// Texts are tokenised (uncased WordPiece, `[CLS] … [SEP]`, truncated to
/// [`max_tokens`](Self::max_tokens)), sorted by length, run through the encoder in
/// batches of [`batch_size`](Self::batch_size) sequences (packed, so no compute is spent on
/// padding), mean-pooled and L2-normalised. Results come back in input order; a text's
/// vector does not depend on the batch it was computed in (beyond float rounding). Immutable after loading: `Send + Sync`, share it behind an `Arc`.
pub struct MiniLmEmbedder {
    model_id: String,
    tokenizer: Tokenizer,
    bert: Bert,
    max_tokens: usize,
    batch_size: usize,
}

fn model_err(e: impl std::fmt::Display) -> Error {
    Error::Model(e.to_string())
}

impl MiniLmEmbedder {
    /// Load from a directory holding `config.json`, `model.safetensors` and `tokenizer.json`
    /// (as installed by [`crate::models::fetch`]). A missing file gives
    /// [`Error::ModelMissing`]; unreadable or inconsistent files give [`Error::Model`].
    pub fn load(model_dir: &Path) -> Result<Self> {
        for f in MINILM_FILES {
            if !model_dir.join(f).is_file() {
                return Err(Error::ModelMissing { name: MINILM_MODEL_ID.to_string(), path: model_dir.to_path_buf() });
            }
        }
        let cfg = BertConfig::from_file(&model_dir.join("config.json")).map_err(Error::Model)?;
        let bert = Bert::load(&model_dir.join("model.safetensors"), cfg).map_err(Error::Model)?;
        let tok_path: PathBuf = model_dir.join("tokenizer.json");
        let mut tokenizer =
            Tokenizer::from_file(&tok_path).map_err(|e| Error::Model(format!("{}: {e}", tok_path.display())))?;
        tokenizer.with_padding(None);
        let mut this = MiniLmEmbedder {
            model_id: MINILM_MODEL_ID.to_string(),
            tokenizer,
            bert,
            max_tokens: 0,
            batch_size: DEFAULT_BATCH_SIZE,
        };
        this.set_max_tokens(DEFAULT_MAX_TOKENS)?;
        Ok(this)
    }

    fn set_max_tokens(&mut self, n: usize) -> Result<()> {
        let n = n.clamp(2, self.bert.config().max_tokens());
        self.tokenizer
            .with_truncation(Some(TruncationParams { max_length: n, ..Default::default() }))
            .map_err(model_err)?;
        self.max_tokens = n;
        Ok(())
    }

    /// Set the sequences per forward pass (at least 1). Batch 1 is the unbatched baseline;
    /// larger batches give the matmuls more rows to work with and amortise per-call costs.
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// Set the token limit per text, specials included (clamped to `2..=512`). Longer texts
    /// are truncated at the end.
    pub fn with_max_tokens(mut self, n: usize) -> Self {
        // Cannot fail for n >= 2 with no stride; keep the old limit if it somehow does.
        let _ = self.set_max_tokens(n);
        self
    }

    /// Sequences per forward pass.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Token limit per text, `[CLS]` and `[SEP]` included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Token ids of `text` exactly as [`embed`](Embedder::embed) feeds them to the encoder:
    /// `[CLS] … [SEP]`, truncated to [`max_tokens`](Self::max_tokens).
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>> {
        let mut v = self.tokenize_batch(&[text])?;
        Ok(v.pop().unwrap_or_default())
    }

    fn tokenize_batch(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        let encs = self.tokenizer.encode_batch_fast(texts.to_vec(), true).map_err(model_err)?;
        Ok(encs.into_iter().map(|e| e.get_ids().to_vec()).collect())
    }

    /// Embed pre-tokenised sequences (each `1..=512` valid ids, e.g. from
    /// [`tokenize`](Self::tokenize)): batched, mean-pooled, L2-normalised, in input order.
    pub fn embed_token_ids(&self, seqs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let limit = self.bert.config().max_tokens();
        if let Some(bad) = seqs.iter().position(|s| s.is_empty() || s.len() > limit) {
            return Err(Error::bad_input(
                format!("token sequence {bad}"),
                format!("has {} ids; must have 1..={limit}", seqs[bad].len()),
            ));
        }
        // Longest first: similar lengths share a batch (balanced attention work) and the
        // largest allocation happens up front.
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(seqs[i].len()));
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); seqs.len()];
        // A batch holds up to `batch_size` sequences of typical passage length: its budget is
        // `batch_size * 128` tokens, so short texts (entity names, facts) go many at a time.
        let budget = self.batch_size * 128;
        let mut start = 0;
        while start < order.len() {
            let mut end = start;
            let mut tokens = 0;
            while end < order.len() && (end == start || tokens + seqs[order[end]].len() <= budget) {
                tokens += seqs[order[end]].len();
                end += 1;
            }
            let chunk = &order[start..end];
            start = end;
            let lens: Vec<usize> = chunk.iter().map(|&i| seqs[i].len()).collect();
            let ids: Vec<u32> = chunk.iter().flat_map(|&i| seqs[i].iter().copied()).collect();
            let pooled = self.bert.forward_mean_pooled(&ids, &lens).map_err(model_err)?;
            for (&i, mut v) in chunk.iter().zip(pooled) {
                l2_normalize(&mut v);
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn embed_texts(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // Only the first `max_tokens` tokens are kept; the tokenizer would still make (and
        // hold, as overflow) the tokens of the whole text: a huge text (a 40 KB title put
        // before each of a document's chunks) took ~1 GB. A BERT word-piece token covers
        // at least one byte and rarely 32, so the tokens kept come from the first bytes.
        let refs: Vec<&str> = texts.iter().map(|t| clip(t, 32 * self.max_tokens)).collect();
        let ids = self.tokenize_batch(&refs)?;
        self.embed_token_ids(&ids)
    }
}

impl Embedder for MiniLmEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.bert.config().hidden_size
    }

    /// `kind` is ignored: MiniLM embeds queries and passages alike.
    fn embed(&self, texts: &[String], _kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        crate::guard(|| self.embed_texts(texts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn embedder_is_send_sync() {
        assert_send_sync::<MiniLmEmbedder>();
    }

    #[test]
    fn missing_dir_is_model_missing() {
        let err = MiniLmEmbedder::load(Path::new("/nonexistent/rhizome/minilm")).err().unwrap();
        assert!(matches!(err, Error::ModelMissing { .. }), "{err}");
        assert!(err.to_string().contains("rhizome models fetch"), "{err}");
    }
}
