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

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use rhizome_core::{ChunkRow, EntityRow, FactRow, GraphData, RelationRow, Result, StoreRead};

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
        }
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
