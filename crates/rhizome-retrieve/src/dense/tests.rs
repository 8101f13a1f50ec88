use rhizome_core::ids::{chunk_id, document_id};
use rhizome_core::{Chunk, Config, Document, EmbedKind, Embedder, Result, StoreWrite, VectorKind, WriteBatch};

use crate::{ContextKind, GraphCache, Method, QueryEnv};

/// Vectors over three words: a text is near the chunks that share its words.
struct Words;

const WORDS: [&str; 3] = ["engine", "poem", "london"];

impl Embedder for Words {
    fn model_id(&self) -> &str {
        "words"
    }
    fn dim(&self) -> usize {
        WORDS.len()
    }
    fn embed(&self, texts: &[String], _: EmbedKind) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| vector(t)).collect())
    }
}

fn vector(text: &str) -> Vec<f32> {
    let lower = text.to_lowercase();
    let v: Vec<f32> = WORDS.iter().map(|w| if lower.contains(w) { 1.0 } else { 0.1 }).collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

/// An index of one chunk per text, embedded by [`Words`].
fn store(dir: &std::path::Path, texts: &[&str]) -> rhizome_store::SqliteStore {
    let mut store = rhizome_store::SqliteStore::open(dir, true).unwrap();
    store.set_embedding_model("words", WORDS.len()).unwrap();
    let mut b = WriteBatch::default();
    for (i, text) in texts.iter().enumerate() {
        let source = format!("d{i}.txt");
        let doc = Document {
            id: document_id(&source, text),
            source,
            title: format!("d{i}"),
            text: text.to_string(),
            pages: None,
            meta: Default::default(),
        };
        let c = Chunk {
            id: chunk_id(&doc.id, 0, text),
            doc_id: doc.id.clone(),
            ordinal: 0,
            text: text.to_string(),
            tokens: 8,
            start: 0,
            end: 0,
            pages: None,
        };
        b.vectors.push((VectorKind::Chunk, c.id.clone(), vector(text)));
        b.chunks.push(c);
        b.documents.push(doc);
    }
    store.write_batch(&b).unwrap();
    store
}

#[test]
fn chunks_come_by_cosine_alone_best_first_at_most_top_k() {
    let dir = tempfile::tempdir().unwrap();
    let texts = [
        "Babbage designed the engine in London.",
        "An engine poem, read in London.",
        "Notes on the engine: the engine, the engine and its parts.",
    ];
    let s = store(dir.path(), &texts);
    let mut config = Config::default();
    config.retrieval.top_k = 2;
    let graph = GraphCache::new();
    let env = QueryEnv { store: &s, embedder: &Words, config: &config, llm: None, graph: &graph };
    let method: Method = "dense".parse().unwrap();
    let r = method.retriever().retrieve(&env, "engine in London").unwrap();

    assert_eq!(r.contexts.len(), 2, "{r:?}");
    assert_eq!(r.contexts[0].text, texts[0], "engine and London: the nearest");
    assert!(r.contexts.iter().all(|c| c.kind == ContextKind::Chunk && c.source.starts_with('d')));
    let q = vector("engine in London");
    for c in &r.contexts {
        let cosine: f32 = q.iter().zip(vector(&c.text)).map(|(a, b)| a * b).sum();
        assert!((c.score - cosine).abs() < 1e-4, "{} scored {} not its cosine {cosine}", c.text, c.score);
    }
    assert!(r.contexts[0].score >= r.contexts[1].score);
    // The notes say "engine" three times but miss London: the cosine ranks them last.
    assert_eq!(r.contexts[1].text, texts[1], "{r:?}");
    for k in ["embed_query", "dense", "fetch"] {
        assert!(r.timings_ms.contains_key(k), "{k}: {:?}", r.timings_ms);
    }
    assert!(r.notes.is_empty() && r.answer.is_none() && r.answer_top_k.is_none());
}

#[test]
fn the_registry_makes_dense_known() {
    let m: Method = "Dense".parse().unwrap();
    assert!(Method::ALL.contains(&m));
    assert_eq!(m.description(), "Dense vector search alone over chunks");
    assert!(m.settings_sections().is_empty());
}
