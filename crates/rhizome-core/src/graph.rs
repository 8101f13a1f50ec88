//! The whole graph as plain rows, for methods that walk it (Personalized PageRank, paths,
//! ego graphs, communities). A backend hands this out with [`crate::StoreRead::graph_data`];
//! retrieval builds its own indexed adjacency from it once per index.

use serde::{Deserialize, Serialize};

/// An entity node: id, name and type (descriptions are fetched on demand).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityRow {
    pub id: String,
    pub name: String,
    pub entity_type: String,
}

/// A chunk node: id, its document and its position there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkRow {
    pub id: String,
    pub doc_id: String,
    pub ordinal: u32,
}

/// A RELATED edge between two entities (directed as extracted: source -> target).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelationRow {
    pub id: String,
    pub source_id: String,
    pub target_id: String,
    pub rel_type: String,
    pub weight: f32,
}

/// A fact with the chunk that supports it (one row per supporting chunk; `chunk_id` is
/// None when the supporting document has no chunks, e.g. an edge-list import).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactRow {
    pub id: String,
    pub subject_id: String,
    pub object_id: String,
    pub chunk_id: Option<String>,
}

/// Every node and edge that graph methods use. Rows are in a stable order (by id) so that
/// anything computed from them is deterministic.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphData {
    pub entities: Vec<EntityRow>,
    pub chunks: Vec<ChunkRow>,
    pub relations: Vec<RelationRow>,
    /// MENTIONED_IN: (entity id, chunk id, occurrences in that chunk).
    pub mentions: Vec<(String, String, u32)>,
    /// SYNONYM: (entity a, entity b, cosine), a < b.
    pub synonyms: Vec<(String, String, f32)>,
    /// SIMILAR_TO: (chunk a, chunk b, cosine), a < b, both of one document.
    pub similar: Vec<(String, String, f32)>,
    pub facts: Vec<FactRow>,
}
