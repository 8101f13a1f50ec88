//! The extractive answer reads a chunk's stored sentence vectors instead of embedding the
//! sentences per query, and embeds only what has none.

use std::sync::atomic::{AtomicUsize, Ordering};

use rhizome_core::embed::WordHashEmbedder;
use rhizome_core::ids::{chunk_id, document_id, sentence_id};
use rhizome_core::*;
use rhizome_retrieve::{extractive_answer, Context, ContextKind};
use rhizome_store::SqliteStore;

/// Counts the passages it is asked to embed.
struct Counting(AtomicUsize);

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        "counting"
    }
    fn dim(&self) -> usize {
        WordHashEmbedder.dim()
    }
    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        if kind == EmbedKind::Passage {
            self.0.fetch_add(texts.len(), Ordering::Relaxed);
        }
        WordHashEmbedder.embed(texts, kind)
    }
}

const QUESTION: &str = "Who designed the tower?";
const SENTENCES: [&str; 3] =
    ["The tower stands in Paris.", "The tower was designed by Gustave Eiffel's firm.", "Tourists visit it often."];

fn context(id: &str, kind: ContextKind, text: &str) -> Context {
    Context {
        kind,
        id: id.into(),
        text: text.into(),
        score: 1.0,
        source: "t.txt".into(),
        title: "Tower".into(),
        pages: None,
    }
}

#[test]
fn stored_sentence_vectors_are_read_not_embedded() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(tmp.path(), true).unwrap();
    let e = Counting(AtomicUsize::new(0));
    store.set_embedding_model(e.model_id(), e.dim()).unwrap();
    let text = SENTENCES.join(" ");
    let doc = Document {
        id: document_id("Tower", &text),
        source: "t.txt".into(),
        title: "Tower".into(),
        text: text.clone(),
        pages: None,
        meta: Default::default(),
    };
    let chunk = Chunk {
        id: chunk_id(&doc.id, 0, &text),
        doc_id: doc.id.clone(),
        ordinal: 0,
        text: text.clone(),
        tokens: 20,
        start: 0,
        end: 0,
        pages: None,
    };
    let q = WordHashEmbedder.embed(&[QUESTION.to_string()], EmbedKind::Query).unwrap().remove(0);
    let mut b = WriteBatch::default();
    b.vectors.push((VectorKind::Chunk, chunk.id.clone(), q.clone()));
    // The last sentence's stored vector is the question's own: it must win on cosine,
    // which it could not if its words were embedded.
    let mut away = vec![0.0; q.len()];
    away[0] = 1.0;
    for (i, s) in SENTENCES.iter().enumerate() {
        let v = if i == 2 { q.clone() } else { away.clone() };
        b.vectors.push((VectorKind::Sentence, sentence_id(&chunk.id, s), v));
    }
    b.chunks.push(chunk.clone());
    b.documents.push(doc);
    store.write_batch(&b).unwrap();

    let ctx = [context(&chunk.id, ContextKind::Chunk, &text)];
    let a = extractive_answer(&e, Some(&store), QUESTION, &ctx, 1, 3).unwrap();
    assert_eq!(e.0.load(Ordering::Relaxed), 0, "every sentence had a stored vector");
    assert_eq!(a, "Tourists visit it often. [1]");

    // Without the store (or for contexts that are not chunks) the sentences are embedded,
    // and the sentence that names the designer wins.
    let a = extractive_answer(&e, None, QUESTION, &ctx, 1, 3).unwrap();
    assert_eq!(e.0.load(Ordering::Relaxed), 3);
    assert_eq!(a, "The tower was designed by Gustave Eiffel's firm. [1]");
    let mixed =
        [context(&chunk.id, ContextKind::Chunk, &text), context("f1", ContextKind::Fact, "Eiffel designed the tower")];
    extractive_answer(&e, Some(&store), QUESTION, &mixed, 1, 3).unwrap();
    assert_eq!(e.0.load(Ordering::Relaxed), 4, "only the fact is embedded");
}
