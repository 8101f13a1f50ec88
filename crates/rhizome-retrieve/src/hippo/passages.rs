//! Step 1 of hippo: every passage's score (cosine plus a BM25 share), its min-max
//! normalisation, and the relative scores that scale the passage seeds.

use std::collections::HashMap;

use rhizome_core::{Result, VectorKind};

use crate::graph::Graph;
use crate::QueryEnv;

/// Min-max normalise `x` against `[lo, hi]`; a flat list maps to 1.
pub(super) fn min_max(x: f32, lo: f32, hi: f32) -> f32 {
    if hi - lo > f32::EPSILON {
        ((x - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// Per graph chunk: the passage score (cosine + BM25 share) and its min-max normalisation.
pub(super) struct PassageScores {
    pub(super) raw: Vec<f32>,
    pub(super) normalized: Vec<f32>,
    /// The chunks whose score was computed (the others hold the least computed cosine).
    pub(super) scored: Vec<u32>,
}

/// Passage scores of every chunk, or of the best `limit` by cosine (and BM25's
/// candidates) when given.
pub(super) fn passage_scores(
    env: &QueryEnv,
    graph: &Graph,
    q: &[f32],
    question: &str,
    bm25_weight: f32,
    limit: Option<usize>,
) -> Result<PassageScores> {
    let n = graph.chunk_ids.len();
    let k = limit.unwrap_or(n).min(n);
    let hits = if n == 0 { Vec::new() } else { env.store.vector_search(VectorKind::Chunk, q, k)? };
    let mut scored: Vec<u32> = hits.iter().filter_map(|s| graph.chunk(&s.id)).collect();
    // A chunk without a vector scores as the least similar one.
    let floor = hits.last().map_or(0.0, |s| s.score);
    let mut raw = vec![floor; n];
    for s in &hits {
        if let Some(c) = graph.chunk(&s.id) {
            raw[c as usize] = s.score;
        }
    }
    if bm25_weight > 0.0 && n > 0 {
        let sparse = env.store.bm25(question, env.config.retrieval.candidates.max(1))?;
        let best = sparse.iter().map(|s| s.score).fold(0.0f32, f32::max);
        if best > 0.0 {
            for s in &sparse {
                if let Some(c) = graph.chunk(&s.id) {
                    raw[c as usize] += bm25_weight * s.score / best;
                    scored.push(c);
                }
            }
        }
    }
    let hi = raw.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let lo = raw.iter().copied().fold(f32::INFINITY, f32::min);
    let normalized = raw.iter().map(|&x| min_max(x, lo, hi)).collect();
    scored.sort_unstable();
    scored.dedup();
    Ok(PassageScores { raw, normalized, scored })
}

/// Per passage, in [0, 1]: `exp((s - s_max) / T)` with `T = passage_temperature` (1 for
/// the best passage, falling fast below it), or the min-max normalised score when the
/// temperature is 0. Scales the passage seeds and is the context score of the facts.
pub(super) fn relative_passage_scores(p: &PassageScores, temperature: f32) -> Vec<f32> {
    let t = temperature as f64;
    if t > 0.0 && t.is_finite() {
        let hi = p.raw.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        p.raw.iter().map(|&s| ((s as f64 - hi) / t).exp() as f32).collect()
    } else {
        p.normalized.clone()
    }
}

/// Step 1 without the graph: the passage scores of the chunks scored (the best `k` by
/// cosine and BM25's candidates), by chunk id, and what every other chunk holds (the least
/// cosine computed), so that [`Sparse::relative`] equals [`relative_passage_scores`].
pub(super) struct Sparse {
    pub(super) raw: HashMap<String, f32>,
    pub(super) floor: f32,
    hi: f32,
    temperature: f32,
}

impl Sparse {
    pub(super) fn new(
        env: &QueryEnv,
        q: &[f32],
        question: &str,
        bm25_weight: f32,
        k: usize,
        temperature: f32,
    ) -> Result<Sparse> {
        let hits = env.store.vector_search(VectorKind::Chunk, q, k)?;
        let floor = hits.last().map_or(0.0, |s| s.score);
        let mut raw: HashMap<String, f32> = hits.into_iter().map(|s| (s.id, s.score)).collect();
        if bm25_weight > 0.0 {
            let sparse = env.store.bm25(question, env.config.retrieval.candidates.max(1))?;
            let best = sparse.iter().map(|s| s.score).fold(0.0f32, f32::max);
            if best > 0.0 {
                for s in sparse {
                    *raw.entry(s.id).or_insert(floor) += bm25_weight * s.score / best;
                }
            }
        }
        let hi = raw.values().copied().fold(floor, f32::max);
        Ok(Sparse { raw, floor, hi, temperature })
    }

    /// The relative score of a chunk ([`relative_passage_scores`]); min-max normalised
    /// from the floor at temperature 0 (the index holds more chunks than were scored).
    pub(super) fn relative(&self, chunk: &str) -> f32 {
        let s = self.raw.get(chunk).copied().unwrap_or(self.floor);
        let t = self.temperature as f64;
        if t > 0.0 && t.is_finite() {
            ((s as f64 - self.hi as f64) / t).exp() as f32
        } else {
            min_max(s, self.floor, self.hi)
        }
    }
}
