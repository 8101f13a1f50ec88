//! The data model: what flows from a file to the graph.
//!
//! Document -> Chunk -> (Entity, Relation, Fact, Mention). Ids are content hashes
//! ([`crate::ids`]), so the same input always produces the same ids.

use serde::{Deserialize, Serialize};

/// A source document, as loaded (before chunking).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Document {
    /// `doc_` + hash of (title, text).
    pub id: String,
    /// Where it came from: a file path, or `FILE#N` for one entry of a corpus file.
    pub source: String,
    pub title: String,
    pub text: String,
}

/// A span of a document's text, the unit of retrieval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Chunk {
    /// `chk_` + hash of (document id, ordinal, text).
    pub id: String,
    pub doc_id: String,
    /// Position of the chunk in its document, from 0. NEXT_CHUNK links n -> n+1.
    pub ordinal: u32,
    pub text: String,
    /// Tokens counted by [`crate::text::count_tokens`].
    pub tokens: u32,
}

/// An entity seen in one chunk (before resolution across chunks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedEntity {
    /// Surface form as written.
    pub name: String,
    /// Type label, e.g. PERSON, ORGANIZATION, DATE, NUMBER, CONCEPT.
    pub entity_type: String,
    /// Short description (for LLM-free extraction: the sentence it was first seen in).
    pub description: String,
    /// Times it occurs in the chunk.
    pub count: u32,
    /// How important the entity is to the chunk, 0..1, when the extractor judges it (the
    /// LLM extractor does; None otherwise).
    #[serde(default)]
    pub importance: Option<f32>,
}

/// A relation seen in one chunk, between two extracted entities (by surface name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedRelation {
    pub source: String,
    pub target: String,
    /// Relation type, e.g. `CO_OCCURS` or a predicate.
    pub rel_type: String,
    pub description: String,
    pub weight: f32,
}

/// A (subject, predicate, object) statement seen in one chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedFact {
    pub subject: String,
    pub predicate: String,
    pub object: String,
}

/// Everything an extractor found in one chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    pub entities: Vec<ExtractedEntity>,
    pub relations: Vec<ExtractedRelation>,
    pub facts: Vec<ExtractedFact>,
}

/// A resolved entity node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Entity {
    /// `ent_` + hash of the normalised name.
    pub id: String,
    pub name: String,
    pub entity_type: String,
    pub description: String,
    /// Mean importance (0..1) over the chunks whose extractor judged it; None when none did.
    #[serde(default)]
    pub importance: Option<f32>,
}

/// A resolved relation edge (RELATED), with its support summed over chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Relation {
    pub id: String,
    pub source_id: String,
    pub target_id: String,
    pub rel_type: String,
    pub description: String,
    pub weight: f32,
}

/// A resolved fact node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// `fact_` + hash of the normalised triple.
    pub id: String,
    pub subject: String,
    pub predicate: String,
    pub object: String,
    /// Entity ids of subject and object.
    pub subject_id: String,
    pub object_id: String,
}

impl Fact {
    /// The text that is embedded and shown for a fact.
    pub fn text(&self) -> String {
        format!("{} {} {}", self.subject, self.predicate, self.object)
    }
}

/// Node labels of the graph.
pub const NODE_LABELS: [&str; 4] = ["Document", "Chunk", "Entity", "Fact"];
/// Edge types of the graph.
pub const EDGE_TYPES: [&str; 6] = ["PART_OF", "NEXT_CHUNK", "MENTIONED_IN", "RELATED", "SYNONYM", "SIMILAR_TO"];
