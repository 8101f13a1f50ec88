//! [`MemoEmbedder`]: a text embedded once is answered from memory after that, per kind.
//!
//! The engine wraps the index's embedder in one for the span of each query (the question
//! is embedded by the retriever and again by the extractive answer; nothing is remembered
//! across questions, so benchmarks that ask the same questions twice measure the same
//! work twice), and `rhizome bench backends` keeps one for a whole run (every backend then
//! measures its own work, not the model's).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rhizome_core::{EmbedKind, Embedder, Result, SpanVectors};

pub struct MemoEmbedder {
    inner: Arc<dyn Embedder>,
    /// Calls with more texts than this go straight through, unremembered.
    max_texts: usize,
    seen: Mutex<HashMap<(bool, String), Vec<f32>>>,
}

impl MemoEmbedder {
    /// Remember every call of at most `max_texts` texts (`usize::MAX`: every call).
    pub fn new(inner: Arc<dyn Embedder>, max_texts: usize) -> MemoEmbedder {
        MemoEmbedder { inner, max_texts, seen: Mutex::new(HashMap::new()) }
    }
}

impl Embedder for MemoEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn cosine_scale(&self) -> f32 {
        self.inner.cosine_scale()
    }
    /// Not remembered: each call is a different text's forward pass.
    fn embed_spans(
        &self,
        texts: &[String],
        spans: &[Vec<std::ops::Range<usize>>],
        kind: EmbedKind,
    ) -> Result<Option<Vec<SpanVectors>>> {
        self.inner.embed_spans(texts, spans, kind)
    }
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        if texts.len() > self.max_texts {
            return self.inner.embed(texts, kind);
        }
        let q = kind == EmbedKind::Query;
        let lock = || self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let mut missing: Vec<String> = {
            let seen = lock();
            texts.iter().filter(|t| !seen.contains_key(&(q, (*t).clone()))).cloned().collect()
        };
        missing.sort();
        missing.dedup();
        if !missing.is_empty() {
            let vs = self.inner.embed(&missing, kind)?;
            let mut seen = lock();
            for (t, v) in missing.into_iter().zip(vs) {
                seen.insert((q, t), v);
            }
        }
        let seen = lock();
        Ok(texts.iter().map(|t| seen[&(q, t.clone())].clone()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::embed::WordHashEmbedder;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting(AtomicUsize);
    impl Embedder for Counting {
        fn model_id(&self) -> &str {
            "test-words"
        }
        fn dim(&self) -> usize {
            64
        }
        fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            WordHashEmbedder.embed(texts, kind)
        }
    }

    #[test]
    fn a_text_is_embedded_once_per_kind() {
        let c = Arc::new(Counting(AtomicUsize::new(0)));
        let m = MemoEmbedder::new(c.clone(), 8);
        let q = vec!["Who won?".to_string()];
        let a = m.embed(&q, EmbedKind::Query).unwrap();
        assert_eq!(m.embed(&q, EmbedKind::Query).unwrap(), a);
        assert_eq!(c.0.load(Ordering::SeqCst), 1);
        m.embed(&q, EmbedKind::Passage).unwrap();
        assert_eq!(c.0.load(Ordering::SeqCst), 2, "another kind is another text");
        let two = vec!["Who won?".to_string(), "Bohr".to_string(), "Bohr".to_string()];
        let got = m.embed(&two, EmbedKind::Query).unwrap();
        assert_eq!((got[0].clone(), got.len()), (a[0].clone(), 3));
        assert_eq!(c.0.load(Ordering::SeqCst), 3, "a repeated text in one call is embedded once");
        let many: Vec<String> = (0..9).map(|i| format!("t{i}")).collect();
        m.embed(&many, EmbedKind::Query).unwrap();
        m.embed(&many, EmbedKind::Query).unwrap();
        assert_eq!(c.0.load(Ordering::SeqCst), 21, "calls over the limit are not remembered");
    }
}
