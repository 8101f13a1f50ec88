//! Extractive answers: the sentences of the retrieved contexts that best support the
//! question, each cited by its context number. Used when no LLM is configured.

use rhizome_core::text::{bm25_terms, sentences};
use rhizome_core::{dot, EmbedKind, Embedder, Result};

use crate::Context;

/// The answer given when nothing retrieved supports the question.
pub const INSUFFICIENT_EVIDENCE: &str =
    "Not enough evidence in the index to answer this question.";

/// Pick up to `n` sentences from the first `max_contexts` contexts, scored by cosine with
/// the question plus the share of question terms they contain; cite each as `[k]`.
pub fn extractive_answer(embedder: &dyn Embedder, question: &str, contexts: &[Context],
    n: usize, max_contexts: usize) -> Result<String> {
    let mut cands: Vec<(usize, String)> = Vec::new();
    for (i, c) in contexts.iter().take(max_contexts).enumerate() {
        for (_, s) in sentences(&c.text) {
            cands.push((i, s.to_string()));
        }
    }
    if cands.is_empty() {
        return Ok(INSUFFICIENT_EVIDENCE.to_string());
    }
    let q_terms = bm25_terms(question);
    let mut texts = vec![question.to_string()];
    texts.extend(cands.iter().map(|(_, s)| s.clone()));
    let q = embedder.embed(&texts[..1], EmbedKind::Query)?.remove(0);
    let vecs = embedder.embed(&texts[1..], EmbedKind::Passage)?;
    let mut scored: Vec<(f32, usize)> = vecs
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let terms = bm25_terms(&cands[k].1);
            let overlap = if q_terms.is_empty() {
                0.0
            } else {
                q_terms.iter().filter(|t| terms.contains(t)).count() as f32 / q_terms.len() as f32
            };
            // Earlier contexts are better supported: a small rank prior breaks near-ties.
            let prior = 0.02 * (max_contexts.saturating_sub(cands[k].0)) as f32;
            (dot(&q, v) + 0.5 * overlap + prior, k)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut picked: Vec<usize> = scored.iter().take(n.max(1)).map(|x| x.1).collect();
    picked.sort();
    let parts: Vec<String> =
        picked.iter().map(|&k| format!("{} [{}]", cands[k].1, cands[k].0 + 1)).collect();
    Ok(parts.join(" "))
}
