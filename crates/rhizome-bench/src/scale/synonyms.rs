//! SYNONYM edges of the synthetic index. Synonymy compares every entity with every other
//! (`StoreWrite::rebuild_synonyms`: a matrix product over all entity vectors, quadratic in
//! the entities), which at a million entities would take hours and is not what the scale
//! curve is about. So it is computed once, on the base corpus's entities, exactly as
//! indexing computes it, and each copy gets the same edges between its renamed entities
//! (`StoreWrite::set_synonyms`). Copies are not linked to each other.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicBool;

use rhizome_core::ids::{entity_id, normalize_name};
use rhizome_core::{EmbedKind, Embedder, Result};
use rhizome_store::vectors::VectorMatrix;

use super::corpus::{rename, Base};

/// The base corpus's entities and synonymy edges between them.
pub struct Synonyms {
    /// One name each entity is written under (its first spelling).
    names: Vec<String>,
    /// The entities (indexes into `names`) of each base passage.
    of_passage: Vec<Vec<u32>>,
    /// (entity a, entity b, cosine) of the base corpus.
    edges: Vec<(u32, u32, f32)>,
}

impl Synonyms {
    /// Embed the base corpus's entity names with `embedder` and keep each entity's
    /// `top_k` nearest with cosine >= `threshold`.
    pub fn compute(base: &Base, embedder: &dyn Embedder, top_k: usize, threshold: f32) -> Result<Synonyms> {
        let mut index: BTreeMap<String, u32> = BTreeMap::new();
        let mut names = Vec::new();
        let mut keys = Vec::new();
        let mut of_passage = Vec::with_capacity(base.len());
        for i in 0..base.len() {
            let mut mine = Vec::new();
            for (text, name) in base.entity_names(i) {
                // Two spellings of one name ("Paris", "Paris.") are one entity in copy 0
                // but two in a copy ("paris zqb", "paris. zqb"): keyed as in a copy.
                let key = normalize_name(&rename(name, 1));
                let n = *index.entry(key).or_insert_with(|| {
                    names.push(name.trim().to_string());
                    keys.push(text);
                    (names.len() - 1) as u32
                });
                mine.push(n);
            }
            mine.sort_unstable();
            mine.dedup();
            of_passage.push(mine);
        }
        let mut edges = Vec::new();
        if top_k > 0 && !keys.is_empty() {
            let vecs = embedder.embed(&keys, EmbedKind::Passage)?;
            let mut m = VectorMatrix::default();
            for (i, v) in vecs.iter().enumerate() {
                m.push(i.to_string(), v);
            }
            let pairs = m.knn_pairs(top_k, threshold, &AtomicBool::new(false)).unwrap_or_default();
            edges = pairs.into_iter().map(|(a, b, s)| (a as u32, b as u32, s)).collect();
        }
        Ok(Synonyms { names, of_passage, edges })
    }

    /// Distinct entities of the base corpus.
    pub fn entities(&self) -> usize {
        self.names.len()
    }

    /// Edges per copy.
    pub fn per_copy(&self) -> usize {
        self.edges.len()
    }

    /// The SYNONYM edges of an index holding copies `0..full` whole and the first
    /// `partial` passages of copy `full`: (entity id a, entity id b, cosine), a < b.
    pub fn edges(&self, full: u32, partial: usize) -> Vec<(String, String, f32)> {
        let mut out = Vec::with_capacity(self.edges.len() * (full as usize + 1));
        let mut copy = |k: u32, present: Option<&HashSet<u32>>| {
            let ids: Vec<String> = self.names.iter().map(|n| entity_id(&rename(n, k))).collect();
            for &(a, b, s) in &self.edges {
                if present.is_some_and(|p| !p.contains(&a) || !p.contains(&b)) {
                    continue;
                }
                let (x, y) = (&ids[a as usize], &ids[b as usize]);
                match x.cmp(y) {
                    std::cmp::Ordering::Less => out.push((x.clone(), y.clone(), s)),
                    std::cmp::Ordering::Greater => out.push((y.clone(), x.clone(), s)),
                    std::cmp::Ordering::Equal => {}
                }
            }
        };
        for k in 0..full {
            copy(k, None);
        }
        if partial > 0 {
            let present: HashSet<u32> = self.of_passage[..partial].iter().flatten().copied().collect();
            copy(full, Some(&present));
        }
        // Copy 0 may join two spellings of one entity: each pair once.
        out.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
        out.dedup_by(|x, y| x.0 == y.0 && x.1 == y.1);
        out
    }
}
