//! A small index for `--method auto`: two documents with entities, facts and vectors from
//! hashed character trigrams.

use rhizome_core::ids::entity_id;
use rhizome_core::*;
use rhizome_store::SqliteStore;

use crate::common;

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
    let mut s = common::open_store(dir, &e);
    let texts = [
        ("bohr", "Aage Bohr won the Nobel Prize in Physics in 1975. He was the son of Niels Bohr."),
        ("openai", "OpenAI was founded in 2015. Sam Altman leads OpenAI. Microsoft invested in OpenAI."),
    ];
    for (title, text) in texts {
        let doc = common::text_document(title, text);
        let c = common::chunk(&doc, 0, text, 20);
        let mut b = WriteBatch::default();
        b.vectors.push((VectorKind::Chunk, c.id.clone(), common::passage_vector(&e, text)));
        let (subj, obj) = if title == "bohr" { ("Aage Bohr", "Nobel Prize") } else { ("Sam Altman", "OpenAI") };
        for n in [subj, obj] {
            b.mentions.push(common::mention(n, n.into(), &doc, Some(&c)));
            b.vectors.push((VectorKind::Entity, entity_id(n), common::passage_vector(&e, n)));
        }
        let f = common::fact((subj, "relates to", obj), &doc.id, &c.id);
        b.vectors.push((
            VectorKind::Fact,
            f.fact.id.clone(),
            common::passage_vector(&e, &format!("{subj} relates to {obj}")),
        ));
        b.facts.push(f);
        b.chunks.push(c);
        b.documents.push(doc);
        s.write_batch(&b).unwrap();
    }
    s
}
