//! Copies of a corpus and their vectors. Copy `k` (k >= 1) renames every entity by a
//! copy tag, a word of its own (`Paris` -> `Paris Zqb`); copy 0 is the corpus as it is.
//! [`DerivedEmbedder`] gives the text of copy `k` the vector of the same text in copy 0
//! (embedded once by the real model, then remembered), moved by a small deterministic
//! perturbation of copy `k`'s own and normalised again: copies of one passage are close
//! but not equal, and a question about copy `k` is nearest to copy `k`'s records. So an
//! index of a million chunks costs one embedding of the base corpus, and the scale
//! figures measure the store and the graph, not the embedder.

use std::sync::Arc;

use rhizome_core::{EmbedKind, Embedder, Result, SpanVectors};
use rhizome_embed::MemoEmbedder;

/// The first letters of every copy tag: no English word starts with them, so a tag is
/// never taken for a word of the text.
const TAG_PREFIX: &str = "Zq";

/// How far a copy's vector is moved from the base vector (norm of the perturbation of a
/// unit vector): the cosine of a copy to its base is about 1/sqrt(1 + 0.35^2) = 0.94,
/// of two copies to each other about 0.89.
const PERTURBATION: f32 = 0.35;

/// The tag of copy `k` (k >= 1): `Zq` and `k` in base 26 written with `a`..`z`.
pub fn tag(k: u32) -> String {
    let mut letters = Vec::new();
    let mut n = k;
    loop {
        letters.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    letters.reverse();
    format!("{TAG_PREFIX}{}", String::from_utf8(letters).unwrap_or_default())
}

/// The copy a tag names (any case), if `word` is a tag.
fn copy_of(word: &str) -> Option<u32> {
    let rest = word.get(..2).filter(|p| p.eq_ignore_ascii_case(TAG_PREFIX)).map(|_| &word[2..])?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_alphabetic()) || rest.len() > 6 {
        return None;
    }
    Some(rest.bytes().fold(0u32, |n, b| n * 26 + (b.to_ascii_lowercase() - b'a') as u32))
}

/// A text of some copy as (the same text in copy 0, the copy): every ` TAG` removed.
pub fn split_copy(text: &str) -> (String, u32) {
    let mut copy = 0;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(' ') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let end = after.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(after.len());
        match copy_of(&after[..end]) {
            Some(k) => {
                copy = k;
                rest = &after[end..];
            }
            None => {
                out.push(' ');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    (out, copy)
}

/// `v` moved by copy `k`'s perturbation for `base` (the text in copy 0), normalised.
pub fn perturb(v: &mut [f32], k: u32, base: &str) {
    if k == 0 || v.is_empty() {
        return;
    }
    // FNV-1a of the text and the copy seeds a SplitMix64 stream.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in base.bytes().chain(k.to_le_bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let mut next = || {
        h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let noise: Vec<f32> = v.iter().map(|_| next()).collect();
    let norm = noise.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    let scale = PERTURBATION * v.iter().map(|x| x * x).sum::<f32>().sqrt() / norm;
    for (x, n) in v.iter_mut().zip(noise) {
        *x += scale * n;
    }
    let len = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= len);
}

/// Vectors of copies derived from the base texts' (see the module documentation).
pub struct DerivedEmbedder {
    base: MemoEmbedder,
}

impl DerivedEmbedder {
    pub fn new(model: Arc<dyn Embedder>) -> DerivedEmbedder {
        DerivedEmbedder { base: MemoEmbedder::new(model, usize::MAX) }
    }
}

impl Embedder for DerivedEmbedder {
    fn model_id(&self) -> &str {
        self.base.model_id()
    }
    fn dim(&self) -> usize {
        self.base.dim()
    }
    fn cosine_scale(&self) -> f32 {
        self.base.cosine_scale()
    }
    /// No sentence vectors: chunks get their vector alone (as with MiniLM).
    fn embed_spans(
        &self,
        _texts: &[String],
        _spans: &[Vec<std::ops::Range<usize>>],
        _kind: EmbedKind,
    ) -> Result<Option<Vec<SpanVectors>>> {
        Ok(None)
    }
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        let split: Vec<(String, u32)> = texts.iter().map(|t| split_copy(t)).collect();
        let bases: Vec<String> = split.iter().map(|(b, _)| b.clone()).collect();
        let mut vecs = self.base.embed(&bases, kind)?;
        for (v, (b, k)) in vecs.iter_mut().zip(&split) {
            perturb(v, *k, b);
        }
        Ok(vecs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_names_its_copy_and_is_taken_out_of_any_text() {
        for k in [1, 25, 26, 27, 675, 676, 100_000] {
            assert_eq!(copy_of(&tag(k)), Some(k), "{}", tag(k));
        }
        let t = format!("Paris {0} is in France {0}. paris {1}", tag(3), tag(3).to_lowercase());
        assert_eq!(split_copy(&t), ("Paris is in France. paris".to_string(), 3));
        assert_eq!(split_copy("Zqb at the start stays"), ("Zqb at the start stays".to_string(), 0));
        assert_eq!(split_copy("plain text"), ("plain text".to_string(), 0));
    }

    #[test]
    fn copies_are_close_to_their_base_and_differ_from_each_other() {
        let base: Vec<f32> = (0..384).map(|i| ((i * 7 % 13) as f32 - 6.0) / 40.0).collect();
        let len = base.iter().map(|x| x * x).sum::<f32>().sqrt();
        let base: Vec<f32> = base.iter().map(|x| x / len).collect();
        let copy = |k| {
            let mut v = base.clone();
            perturb(&mut v, k, "paris");
            v
        };
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        let (a, b) = (copy(1), copy(2));
        assert!((dot(&a, &a) - 1.0).abs() < 1e-4);
        assert!((0.9..0.98).contains(&dot(&a, &base)), "{}", dot(&a, &base));
        assert!(dot(&a, &b) < 0.95 && dot(&a, &b) > 0.8, "{}", dot(&a, &b));
        assert_eq!(copy(1), a, "deterministic");
        assert_eq!(copy(0), base, "copy 0 is the base");
    }
}
