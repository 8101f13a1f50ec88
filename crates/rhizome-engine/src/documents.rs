//! Documents for lists and viewers: a page of summaries, and one document with its chunks
//! and the entities found in it.

use std::collections::HashMap;

use rhizome_core::{Chunk, Document, DocumentSummary, Error, Result};
use serde::Serialize;

use crate::browse::GraphNode;
use crate::browse_around::nodes_by_id;
use crate::Engine;

/// One page of the document list.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DocumentPage {
    pub total: u64,
    pub offset: usize,
    pub documents: Vec<DocumentSummary>,
}

/// One document in full.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DocumentDetail {
    pub document: Document,
    pub summary: Option<DocumentSummary>,
    pub chunks: Vec<Chunk>,
    /// Entities mentioned in it, most mentioned first.
    pub entities: Vec<GraphNode>,
}

impl Engine {
    /// Documents by title, `search` in title or source, paged.
    pub fn documents(&self, search: Option<&str>, offset: usize, limit: usize) -> Result<DocumentPage> {
        let store = self.reader()?;
        let search = search.map(str::trim).filter(|s| !s.is_empty());
        Ok(DocumentPage {
            total: store.document_count(search)?,
            offset,
            documents: store.documents(search, offset, limit)?,
        })
    }

    /// The document with id (or source) `id`: its text, chunks and entities.
    ///
    /// On an index above `retrieval.whole_graph_up_to` entities its chunks and the
    /// entities mentioned in them are read by id (`StoreRead::document_chunk_rows`,
    /// `walk_edges`, `entity_degrees`): the same page.
    pub fn document(&self, id: &str) -> Result<DocumentDetail> {
        let store = self.reader()?;
        let document = store.find_document(id)?.ok_or_else(|| {
            Error::NotFound(format!("no document with id or source {id:?}; list them with GET /documents"))
        })?;
        let (ids, entities) = match self.whole_graph(&*store)? {
            Some(g) => {
                let mut chunk_nums: Vec<u32> =
                    (0..g.chunk_ids.len() as u32).filter(|&c| g.chunk_docs[c as usize] == document.id).collect();
                chunk_nums.sort_by_key(|&c| g.chunk_ordinals[c as usize]);
                let ids: Vec<String> = chunk_nums.iter().map(|&c| g.chunk_ids[c as usize].clone()).collect();
                let mut counts: HashMap<u32, u32> = HashMap::new();
                for &c in &chunk_nums {
                    for &(e, n) in &g.chunk_entities[c as usize] {
                        *counts.entry(e).or_insert(0) += n;
                    }
                }
                let nums: Vec<u32> = by_count(counts).into_iter().map(|(e, _)| e).collect();
                (ids, Engine::nodes(&*store, &g, &nums)?)
            }
            None => {
                let mut rows = store.document_chunk_rows(&document.id)?;
                rows.sort_by_key(|c| c.ordinal);
                let ids: Vec<String> = rows.into_iter().map(|c| c.id).collect();
                let mut counts: HashMap<String, u32> = HashMap::new();
                for (e, _, n) in store.walk_edges(&[], &ids, false)?.mentions {
                    *counts.entry(e).or_insert(0) += n;
                }
                let ranked: Vec<String> = by_count(counts).into_iter().map(|(e, _)| e).collect();
                (ids, nodes_by_id(&*store, &ranked)?)
            }
        };
        let mut chunks: Vec<Chunk> = store.chunks(&ids)?.into_iter().map(|c| c.chunk).collect();
        chunks.sort_by_key(|c| c.ordinal);
        let summary = store.documents(Some(&document.title), 0, 50)?.into_iter().find(|s| s.id == document.id);
        Ok(DocumentDetail { document, summary, chunks, entities })
    }
}

/// Entities with their mentions, most mentioned first (then by entity order).
fn by_count<E: Ord>(counts: HashMap<E, u32>) -> Vec<(E, u32)> {
    let mut ranked: Vec<(E, u32)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
}
