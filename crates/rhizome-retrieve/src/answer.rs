//! Extractive answers: the sentences of the retrieved contexts that best support the
//! question, each cited by its context number. Used when no LLM is configured.

use std::collections::HashMap;

use rhizome_core::ids::sentence_id;
use rhizome_core::text::{bm25_terms, sentences};
use rhizome_core::{dot, EmbedKind, Embedder, Result, StoreRead, VectorKind};

use crate::{Context, ContextKind};

/// The answer given when nothing retrieved supports the question.
pub const INSUFFICIENT_EVIDENCE: &str = "Not enough evidence in the index to answer this question.";

/// Sentences of an extractive answer that are embedded (at least the `n` asked for): the
/// best by question-word overlap, novelty and context rank. A query's answer otherwise
/// embeds every sentence of its top contexts (~25 on MuSiQue, 4/5 of a lone query's work).
/// Measured (`rhizome eval --answers`, 100 questions, extractive): with 10, EM/F1 equal to
/// embedding all of them on the MuSiQue OpenIE import (basic, hippo), the LLM-free MuSiQue
/// index (hippo) and HotpotQA (basic), and 99 (basic) / 100 (hippo) of the OpenIE import's
/// 100 answers identical; with 6, F1 drops slightly and 10-11 of them change.
pub const EMBEDDED_SENTENCES: usize = 10;

/// Pick up to `n` sentences from the first `max_contexts` contexts, scored by cosine with
/// the question plus the share of question terms they contain (only the
/// [`EMBEDDED_SENTENCES`] best by the latter are scored by cosine); cite each as `[k]`.
///
/// A sentence of a chunk has its vector in `store` when the index was built by an embedder
/// that pools sentences from the chunk's own forward pass (`VectorKind::Sentence`, ids from
/// [`sentence_id`]); only the others (other embedders, statements, reports, indexes made
/// before) are embedded here, with their document's title. With stored vectors a query
/// embeds nothing but the question: its work stays on one thread, which is what lets
/// concurrent queries share the cores.
pub fn extractive_answer(
    embedder: &dyn Embedder,
    store: Option<&dyn StoreRead>,
    question: &str,
    contexts: &[Context],
    n: usize,
    max_contexts: usize,
) -> Result<String> {
    // Bonuses are on MiniLM's cosine scale (see `Embedder::cosine_scale`).
    let scale = embedder.cosine_scale();
    let mut cands: Vec<(usize, String)> = Vec::new();
    for (i, c) in contexts.iter().take(max_contexts).enumerate() {
        // An edge, path or fact is one statement, whatever full stops its names hold
        // ("Huy chương H. C. Ørsted"); text is split into sentences.
        let statement = c.kind.is_statement();
        let parts: Vec<&str> =
            if statement { vec![c.text.trim()] } else { sentences(&c.text).into_iter().map(|(_, s)| s).collect() };
        for s in parts.into_iter().filter(|s| !s.is_empty()) {
            // A sentence repeated (in another context, or twice in a report) counts once,
            // at its first and best-ranked place.
            if !cands.iter().any(|(_, x)| x == s) {
                cands.push((i, s.to_string()));
            }
        }
    }
    if cands.is_empty() {
        return Ok(INSUFFICIENT_EVIDENCE.to_string());
    }
    let q_terms = bm25_terms(question);
    let q = embedder.embed(&[question.to_string()], EmbedKind::Query)?.remove(0);
    let lexical: Vec<f32> = cands
        .iter()
        .map(|(i, s)| {
            let terms = bm25_terms(s);
            let overlap = if q_terms.is_empty() {
                0.0
            } else {
                q_terms.iter().filter(|t| terms.contains(t)).count() as f32 / q_terms.len() as f32
            };
            // Earlier contexts are better supported: a small rank prior breaks near-ties.
            let prior = 0.02 * (max_contexts.saturating_sub(*i)) as f32;
            // An answer adds something the question lacks: a name or number it doesn't have.
            let novel = if adds_information(question, &q_terms, s) { 0.15 } else { 0.0 };
            0.5 * overlap + prior + novel
        })
        .collect();
    // Only the sentences the lexical score ranks highest are embedded: the cosine decides
    // among them. The rest could win only on cosine alone against sentences that share
    // more of the question's words or add a name or number; on MuSiQue and HotpotQA the
    // picked sentences are the same (see EMBEDDED_SENTENCES).
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by(|&a, &b| lexical[b].total_cmp(&lexical[a]).then(a.cmp(&b)));
    order.truncate(EMBEDDED_SENTENCES.max(n));
    // Stored sentence vectors of chunks (read in the context of their chunk and title).
    let ids: Vec<Option<String>> = order
        .iter()
        .map(|&k| {
            let (i, s) = &cands[k];
            (contexts[*i].kind == ContextKind::Chunk).then(|| sentence_id(&contexts[*i].id, s))
        })
        .collect();
    let mut stored: HashMap<String, Vec<f32>> = HashMap::new();
    if let Some(store) = store {
        let wanted: Vec<String> = ids.iter().flatten().cloned().collect();
        if !wanted.is_empty() {
            stored =
                store.vectors(VectorKind::Sentence, &wanted)?.into_iter().filter(|(_, v)| v.len() == q.len()).collect();
        }
    }
    // The rest are embedded with their document's title: "The current editor is X" is
    // about the journal named in the title, not about editors in general.
    let missing: Vec<usize> =
        (0..order.len()).filter(|&j| ids[j].as_ref().is_none_or(|id| !stored.contains_key(id))).collect();
    let texts: Vec<String> = missing
        .iter()
        .map(|&j| {
            let (i, s) = &cands[order[j]];
            let title = &contexts[*i].title;
            if title.is_empty() {
                s.clone()
            } else {
                format!("{title}: {s}")
            }
        })
        .collect();
    let mut fresh = if texts.is_empty() { Vec::new() } else { embedder.embed(&texts, EmbedKind::Passage)? }.into_iter();
    let mut vecs: Vec<Vec<f32>> = Vec::with_capacity(order.len());
    for id in &ids {
        match id.as_ref().and_then(|id| stored.remove(id)) {
            Some(v) => vecs.push(v),
            None => vecs.push(fresh.next().unwrap_or_default()),
        }
    }
    let mut scored: Vec<(f32, usize)> =
        order.iter().zip(&vecs).map(|(&k, v)| (dot(&q, v) + scale * lexical[k], k)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut picked: Vec<usize> = scored.iter().take(n.max(1)).map(|x| x.1).collect();
    picked.sort();
    let parts: Vec<String> = picked.iter().map(|&k| format!("{} [{}]", cands[k].1, cands[k].0 + 1)).collect();
    Ok(parts.join(" "))
}

/// True when `sentence` carries a name or number that the question does not: the kind of
/// sentence that answers rather than restates. For "when / what year" questions the new
/// token must be a number.
fn adds_information(question: &str, q_terms: &[String], sentence: &str) -> bool {
    let ql = question.to_lowercase();
    let wants_number = [
        "when",
        "what year",
        "how many",
        "how much",
        "how long",
        "bao giờ",
        "khi nào",
        "năm nào",
        "bao nhiêu",
        "何时",
        "哪一年",
        "多少",
        "几",
    ]
    .iter()
    .any(|w| ql.contains(w));
    sentence.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).any(|w| {
        let lower = w.to_lowercase();
        if q_terms.contains(&lower) {
            return false;
        }
        let number = w.chars().all(|c| c.is_ascii_digit());
        let name = w.chars().next().is_some_and(char::is_uppercase) && w.chars().count() > 1;
        if wants_number {
            number
        } else {
            number || name
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::embed::WordHashEmbedder;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts the passages it is asked to embed.
    struct Counting(AtomicUsize);

    impl Embedder for Counting {
        fn model_id(&self) -> &str {
            "counting"
        }
        fn dim(&self) -> usize {
            64
        }
        fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
            if kind == EmbedKind::Passage {
                self.0.fetch_add(texts.len(), Ordering::Relaxed);
            }
            WordHashEmbedder.embed(texts, kind)
        }
    }

    fn chunk(text: String) -> Context {
        Context {
            kind: ContextKind::Chunk,
            id: "c".into(),
            text,
            score: 1.0,
            source: "s".into(),
            title: String::new(),
            pages: None,
        }
    }

    #[test]
    fn only_the_lexically_best_sentences_are_embedded() {
        // 30 filler sentences and one that names the answer, last.
        let mut text: String = (0..30).map(|i| format!("Filler sentence number {i} says little. ")).collect();
        text.push_str("The Eiffel Tower was designed by Gustave Eiffel's company.");
        let e = Counting(AtomicUsize::new(0));
        let a = extractive_answer(&e, None, "Whose company designed the Eiffel Tower?", &[chunk(text)], 1, 3).unwrap();
        assert_eq!(e.0.load(Ordering::Relaxed), EMBEDDED_SENTENCES);
        assert_eq!(a, "The Eiffel Tower was designed by Gustave Eiffel's company. [1]");
        // Fewer sentences than that: every one is embedded.
        let e = Counting(AtomicUsize::new(0));
        extractive_answer(&e, None, "Who?", &[chunk("One. Two. Three.".into())], 5, 3).unwrap();
        assert_eq!(e.0.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn novelty_prefers_sentences_that_answer() {
        let q = "Who is the current editor of the Journal of Mathematical Physics?";
        let terms = bm25_terms(q);
        assert!(adds_information(q, &terms, "The current editor is Jan Philip Solovej."));
        assert!(!adds_information(q, &terms, "the journal of mathematical physics is a journal."));
        let q = "When was the journal first published?";
        let terms = bm25_terms(q);
        assert!(adds_information(q, &terms, "It was first published in 1960."));
        assert!(!adds_information(q, &terms, "It was first published by Springer."));
    }
}
