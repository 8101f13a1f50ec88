//! A small index for `--method auto`: two documents with entities, facts and vectors from
//! hashed character trigrams.

use rhizome_core::ids::{chunk_id, document_id, entity_id, fact_id};
use rhizome_core::*;
use rhizome_store::SqliteStore;

/// Hashed character trigrams: deterministic, and similar texts get similar vectors.
pub struct Trigrams;

impl Embedder for Trigrams {
    fn model_id(&self) -> &str {
        "test-trigrams"
    }
    fn dim(&self) -> usize {
        64
    }
    fn embed(&self, texts: &[String], _: EmbedKind) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 64];
                let cs: Vec<char> = t.to_lowercase().chars().collect();
                for w in cs.windows(3) {
                    let h = w.iter().fold(7u32, |h, c| h.wrapping_mul(31).wrapping_add(*c as u32));
                    v[(h % 64) as usize] += 1.0;
                }
                l2_normalize(&mut v);
                v
            })
            .collect())
    }
}

pub fn small_index(dir: &std::path::Path) -> SqliteStore {
    let e = Trigrams;
    let mut s = SqliteStore::open(dir, true).unwrap();
    s.set_embedding_model(e.model_id(), e.dim()).unwrap();
    let texts = [
        ("bohr", "Aage Bohr won the Nobel Prize in Physics in 1975. He was the son of Niels Bohr."),
        ("openai", "OpenAI was founded in 2015. Sam Altman leads OpenAI. Microsoft invested in OpenAI."),
    ];
    for (title, text) in texts {
        let doc = Document {
            id: document_id(title, text),
            source: format!("{title}.txt"),
            title: title.into(),
            text: text.into(),
            pages: None,
            meta: Default::default(),
        };
        let c = Chunk {
            id: chunk_id(&doc.id, 0, text),
            doc_id: doc.id.clone(),
            ordinal: 0,
            text: text.into(),
            tokens: 20,
            start: 0,
            end: 0,
            pages: None,
        };
        let mut b = WriteBatch::default();
        b.vectors.push((
            VectorKind::Chunk,
            c.id.clone(),
            e.embed(&[text.to_string()], EmbedKind::Passage).unwrap().remove(0),
        ));
        let (subj, obj) = if title == "bohr" { ("Aage Bohr", "Nobel Prize") } else { ("Sam Altman", "OpenAI") };
        for n in [subj, obj] {
            b.mentions.push(MentionRecord {
                entity_id: entity_id(n),
                name: n.into(),
                entity_type: "ENTITY".into(),
                description: n.into(),
                doc_id: doc.id.clone(),
                chunk_id: Some(c.id.clone()),
                count: 1,
                importance: None,
            });
            b.vectors.push((
                VectorKind::Entity,
                entity_id(n),
                e.embed(&[n.to_string()], EmbedKind::Passage).unwrap().remove(0),
            ));
        }
        let f = Fact {
            id: fact_id(subj, "relates to", obj),
            subject: subj.into(),
            predicate: "relates to".into(),
            object: obj.into(),
            subject_id: entity_id(subj),
            object_id: entity_id(obj),
        };
        b.vectors.push((
            VectorKind::Fact,
            f.id.clone(),
            e.embed(&[format!("{subj} relates to {obj}")], EmbedKind::Passage).unwrap().remove(0),
        ));
        b.facts.push(FactRecord { fact: f, doc_id: doc.id.clone(), chunk_id: Some(c.id.clone()) });
        b.chunks.push(c);
        b.documents.push(doc);
        s.write_batch(&b).unwrap();
    }
    s
}
