//! A question asked of some documents only ([`rhizome_core::DocFilter`]): the [`Scope`]
//! of those documents (their chunks, the entities mentioned in them, the facts they
//! support) and the views of the index that show nothing else: a [`ScopedStore`] and the
//! graph restricted to the scope. Every method retrieves through them unchanged.
//!
//! What is in scope: a chunk of a matching document; an entity mentioned in such a chunk;
//! a fact supported by such a chunk; a relation between two entities in scope; SYNONYM and
//! SIMILAR_TO edges between nodes in scope; a community with a member in scope (its
//! report summarises the whole community); a claim about an entity in scope. An entity
//! known only from a document without chunks (an edge list) is not in any scope.

mod store;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use rhizome_core::{ChunkRow, EntityRow, FactRow, GraphData, RelationRow, Result, StoreRead, VectorKind};

pub use store::ScopedStore;

use crate::graph::{Graph, GraphCache};

/// The documents a question may draw on, and what they support.
pub struct Scope {
    /// The index's graph version the scope was made at: its store says this version, so
    /// that the scope's graph is never rebuilt from the store (a scope of a later version
    /// is a new scope).
    pub version: u64,
    pub docs: HashSet<String>,
    pub chunks: HashSet<String>,
    pub entities: HashSet<String>,
    pub facts: HashSet<String>,
    /// The graph of the scope, as a cache that holds it at the index's graph version.
    pub graph: GraphCache,
    /// Communities with a member in scope, read on first use.
    communities: OnceLock<HashSet<String>>,
    /// Node counts of the whole index (what a search in scope is a share of), read on
    /// first use.
    totals: OnceLock<HashMap<String, u64>>,
    /// Reports of communities in scope, counted on first use.
    pub(crate) report_count: OnceLock<u64>,
    /// The scope's own vectors of each kind searched exactly, read on first use.
    vectors: Mutex<HashMap<VectorKind, Arc<Vec<(String, Vec<f32>)>>>>,
}

impl Scope {
    /// The scope of `docs` in the index whose graph is `full` (at `version`).
    pub fn new(full: &Graph, version: u64, docs: HashSet<String>) -> Scope {
        let data = restricted(full, &docs);
        let chunks = data.chunks.iter().map(|c| c.id.clone()).collect();
        let entities = data.entities.iter().map(|e| e.id.clone()).collect();
        let facts = data.facts.iter().map(|f| f.id.clone()).collect();
        Scope {
            version,
            docs,
            chunks,
            entities,
            facts,
            graph: GraphCache::holding(version, Arc::new(Graph::build(data))),
            communities: OnceLock::new(),
            totals: OnceLock::new(),
            report_count: OnceLock::new(),
            vectors: Mutex::new(HashMap::new()),
        }
    }

    /// How many nodes with `label` the whole index holds.
    pub fn total(&self, store: &dyn StoreRead, label: &str) -> Result<u64> {
        if self.totals.get().is_none() {
            let nodes = store.stats()?.nodes.into_iter().collect();
            let _ = self.totals.set(nodes);
        }
        Ok(self.totals.get().and_then(|t| t.get(label)).copied().unwrap_or(0))
    }

    /// The vectors of `ids` (those of `kind` in scope), read once per scope.
    pub fn vectors_of(
        &self,
        store: &dyn StoreRead,
        kind: VectorKind,
        ids: &HashSet<String>,
    ) -> Result<Arc<Vec<(String, Vec<f32>)>>> {
        if let Some(v) = self.vectors.lock().unwrap_or_else(|p| p.into_inner()).get(&kind) {
            return Ok(v.clone());
        }
        let mut sorted: Vec<String> = ids.iter().cloned().collect();
        sorted.sort();
        let v = Arc::new(store.vectors(kind, &sorted)?);
        self.vectors.lock().unwrap_or_else(|p| p.into_inner()).insert(kind, v.clone());
        Ok(v)
    }

    /// Communities with at least one member in scope.
    pub fn communities(&self, store: &dyn StoreRead) -> Result<&HashSet<String>> {
        if let Some(c) = self.communities.get() {
            return Ok(c);
        }
        let ids = store
            .communities()?
            .into_iter()
            .filter(|c| c.entity_ids.iter().any(|e| self.entities.contains(e)))
            .map(|c| c.id)
            .collect();
        Ok(self.communities.get_or_init(|| ids))
    }
}

/// The rows of `g` that the documents `docs` support (see the module's doc), in the
/// order the full graph holds them.
fn restricted(g: &Graph, docs: &HashSet<String>) -> GraphData {
    let chunk_ok: Vec<bool> = g.chunk_docs.iter().map(|d| docs.contains(d)).collect();
    let entity_ok: Vec<bool> = g.entity_chunks.iter().map(|cs| cs.iter().any(|&(c, _)| chunk_ok[c as usize])).collect();
    let mut data = GraphData::default();
    for (e, ok) in entity_ok.iter().enumerate() {
        if *ok {
            data.entities.push(EntityRow {
                id: g.entity_ids[e].clone(),
                name: g.entity_names[e].clone(),
                entity_type: g.entity_types[e].clone(),
            });
            for &(c, n) in g.entity_chunks[e].iter().filter(|(c, _)| chunk_ok[*c as usize]) {
                data.mentions.push((g.entity_ids[e].clone(), g.chunk_ids[c as usize].clone(), n));
            }
            for &(b, s) in &g.synonyms[e] {
                if entity_ok[b as usize] && g.entity_ids[e] < g.entity_ids[b as usize] {
                    data.synonyms.push((g.entity_ids[e].clone(), g.entity_ids[b as usize].clone(), s));
                }
            }
        }
    }
    for (c, ok) in chunk_ok.iter().enumerate() {
        if *ok {
            data.chunks.push(ChunkRow {
                id: g.chunk_ids[c].clone(),
                doc_id: g.chunk_docs[c].clone(),
                ordinal: g.chunk_ordinals[c],
            });
            for &(b, s) in &g.similar[c] {
                if chunk_ok[b as usize] && g.chunk_ids[c] < g.chunk_ids[b as usize] {
                    data.similar.push((g.chunk_ids[c].clone(), g.chunk_ids[b as usize].clone(), s));
                }
            }
        }
    }
    for r in g.relations.iter().filter(|r| entity_ok[r.source as usize] && entity_ok[r.target as usize]) {
        data.relations.push(RelationRow {
            id: r.id.clone(),
            source_id: g.entity_ids[r.source as usize].clone(),
            target_id: g.entity_ids[r.target as usize].clone(),
            rel_type: r.rel_type.clone(),
            weight: r.weight,
        });
    }
    for f in &g.facts {
        if !(entity_ok[f.subject as usize] && entity_ok[f.object as usize]) {
            continue;
        }
        for &c in f.chunks.iter().filter(|&&c| chunk_ok[c as usize]) {
            data.facts.push(FactRow {
                id: f.id.clone(),
                subject_id: g.entity_ids[f.subject as usize].clone(),
                object_id: g.entity_ids[f.object as usize].clone(),
                chunk_id: Some(g.chunk_ids[c as usize].clone()),
            });
        }
    }
    data
}
