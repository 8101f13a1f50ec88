//! One query never embeds the same text twice: the question is embedded by the retriever
//! and again by the extractive answer (and some methods embed their keywords, which can be
//! the question itself). [`Memo`] wraps the index's embedder for the span of one query and
//! answers a repeated (text, kind) from what it already computed. It lives only as long as
//! the query, so nothing is remembered across questions (benchmarks that ask the same
//! questions twice measure the same work twice).

use std::collections::HashMap;
use std::sync::Mutex;

use rhizome_core::{EmbedKind, Embedder, Result};

pub(crate) struct Memo<'a> {
    inner: &'a dyn Embedder,
    seen: Mutex<HashMap<(bool, String), Vec<f32>>>,
}

/// Texts longer than this are not remembered (passages are embedded once anyway).
const MAX_TEXTS: usize = 8;

impl<'a> Memo<'a> {
    pub(crate) fn new(inner: &'a dyn Embedder) -> Memo<'a> {
        Memo { inner, seen: Mutex::new(HashMap::new()) }
    }
}

impl Embedder for Memo<'_> {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn cosine_scale(&self) -> f32 {
        self.inner.cosine_scale()
    }
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        if texts.len() > MAX_TEXTS {
            return self.inner.embed(texts, kind);
        }
        let q = kind == EmbedKind::Query;
        let missing: Vec<String> = {
            let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            let mut m: Vec<String> = texts.iter().filter(|t| !seen.contains_key(&(q, (*t).clone()))).cloned().collect();
            m.dedup();
            m
        };
        if !missing.is_empty() {
            let vs = self.inner.embed(&missing, kind)?;
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            for (t, v) in missing.into_iter().zip(vs) {
                seen.insert((q, t), v);
            }
        }
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
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
        let c = Counting(AtomicUsize::new(0));
        let m = Memo::new(&c);
        let q = vec!["Who won?".to_string()];
        let a = m.embed(&q, EmbedKind::Query).unwrap();
        assert_eq!(m.embed(&q, EmbedKind::Query).unwrap(), a);
        assert_eq!(c.0.load(Ordering::SeqCst), 1);
        m.embed(&q, EmbedKind::Passage).unwrap();
        assert_eq!(c.0.load(Ordering::SeqCst), 2, "another kind is another text");
        let two = vec!["Who won?".to_string(), "Bohr".to_string()];
        assert_eq!(m.embed(&two, EmbedKind::Query).unwrap()[0], a[0]);
        assert_eq!(c.0.load(Ordering::SeqCst), 3);
    }
}
