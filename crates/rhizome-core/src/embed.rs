//! The embedder contract.
//!
//! An [`Embedder`] turns texts into fixed-size vectors. Every vector it returns is
//! L2-normalised, so cosine similarity is a dot product everywhere in Rhizome.
//! `model_id` names the model and its pooling exactly: an index records it, and vectors
//! of two different `model_id`s are never compared.

use crate::Result;

/// What a text is, for models that embed queries and passages differently
/// (multilingual-e5 prefixes `query: ` / `passage: `; MiniLM ignores it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedKind {
    Query,
    Passage,
}

pub trait Embedder: Send + Sync {
    /// Stable identifier of the model and pooling, e.g. `all-MiniLM-L6-v2`.
    fn model_id(&self) -> &str;
    /// Vector length.
    fn dim(&self) -> usize;
    /// Embed `texts` (any number; implementations batch internally). One L2-normalised
    /// vector per input, in input order. An empty text gets a valid (zero or constant) vector.
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>>;
    /// How wide this model's band of cosines is compared with all-MiniLM-L6-v2's, the
    /// scale every cosine threshold, temperature and cosine-mixing weight in Rhizome's
    /// configuration is written on (see [`crate::Config::calibrated`]). 1 for MiniLM; below
    /// 1 for a model whose cosines crowd near 1 (multilingual-e5: unrelated texts score
    /// about 0.8 there, about 0.1 with MiniLM).
    fn cosine_scale(&self) -> f32 {
        1.0
    }
    /// Embed `texts` as [`embed`](Self::embed) does (each text's vector bit-identical to
    /// `embed`'s) and, from the same forward pass, one vector per byte span in `spans[i]`
    /// of `texts[i]`: the mean of the model's last-layer states over the tokens inside the
    /// span, L2-normalised like the text's own vector. A span must start and end at a
    /// whitespace boundary of the text (a sentence); it gets `None` when truncation cut
    /// it off. `Ok(None)` when the model cannot pool spans (the caller embeds the spans'
    /// texts instead).
    fn embed_spans(
        &self,
        texts: &[String],
        spans: &[Vec<std::ops::Range<usize>>],
        kind: EmbedKind,
    ) -> Result<Option<Vec<SpanVectors>>> {
        let _ = (texts, spans, kind);
        Ok(None)
    }
}

/// A text's vector and its spans' vectors (see [`Embedder::embed_spans`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SpanVectors {
    pub text: Vec<f32>,
    pub spans: Vec<Option<Vec<f32>>>,
}

/// Dot product of two equal-length vectors (cosine for normalised vectors), written with
/// eight independent accumulators so the compiler vectorises it.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// Scale `v` to unit length in place (a zero vector stays zero).
pub fn l2_normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// A deterministic bag-of-words embedder: lowercased words hashed into 64 dimensions,
/// L2-normalised, so texts that share words are close. No model and no weights; it knows
/// nothing of meaning. For tests of code that takes an [`Embedder`].
pub struct WordHashEmbedder;

impl Embedder for WordHashEmbedder {
    fn model_id(&self) -> &str {
        "test-words"
    }
    fn dim(&self) -> usize {
        64
    }
    fn embed(&self, texts: &[String], _kind: EmbedKind) -> crate::Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 64];
                for w in t.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
                    let h = w.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
                    v[(h % 64) as usize] += 1.0;
                }
                l2_normalize(&mut v);
                v
            })
            .collect())
    }
}
