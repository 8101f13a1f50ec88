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
    /// Where each page (slide, sheet, chapter) of a paged document is in `text`; None for
    /// a document without pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Pagination>,
}

impl Document {
    /// A document of `text` from `source`, its id made from title and text, without pages.
    pub fn new(source: impl Into<String>, title: impl Into<String>, text: impl Into<String>) -> Self {
        let (title, text) = (title.into(), text.into());
        Document { id: crate::ids::document_id(&title, &text), source: source.into(), title, text, pages: None }
    }

    /// The first and last page that characters `start..end` of the text (end exclusive)
    /// fall on; None without pages or when the range touches no page.
    pub fn pages_of(&self, start: u32, end: u32) -> Option<PageRange> {
        let p = self.pages.as_ref()?;
        let mut on = p.pages.iter().filter(|g| g.start < end.max(start + 1) && g.end > start && g.start < g.end);
        let first = on.next()?.number;
        Some(PageRange { first, last: on.next_back().map_or(first, |g| g.number) })
    }
}

/// The pages of a paged document and what they are called.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Pagination {
    /// What a page is: `page` (PDF, scans), `slide`, `sheet` or `chapter`.
    pub unit: String,
    /// The pages in order.
    pub pages: Vec<PageSpan>,
}

/// One page of a [`Pagination`]: its number and the characters of the document's text it
/// holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageSpan {
    /// From 1, as a reader of the file counts.
    pub number: u32,
    /// Its name, where it has one (a sheet's name, a chapter's title).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Character range (Unicode scalar values, end exclusive) in the document's text.
    pub start: u32,
    pub end: u32,
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
    /// Character range of the chunk in its document's text (Unicode scalar values, end
    /// exclusive). 0..0 for a chunk stored before ranges were kept.
    #[serde(default)]
    pub start: u32,
    #[serde(default)]
    pub end: u32,
    /// The first and last page (slide, sheet, chapter) the chunk spans, in a paged document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<PageRange>,
}

/// Where in a paged document a passage is, for citations: `p. 3`, `pp. 3-4`, `slide 2`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageRef {
    /// What a page is: `page`, `slide`, `sheet` or `chapter` ([`Pagination::unit`]).
    pub unit: String,
    pub first: u32,
    pub last: u32,
}

impl PageRef {
    /// The citation: `p. 3`, `pp. 3-4`, `slide 2`, `slides 2-3`, `sheet 1`, `ch. 4`.
    pub fn cite(&self) -> String {
        let (one, many) = match self.unit.as_str() {
            "page" => ("p.", "pp."),
            "slide" => ("slide", "slides"),
            "sheet" => ("sheet", "sheets"),
            "chapter" => ("ch.", "chs."),
            other => (other, other),
        };
        if self.first == self.last {
            format!("{one} {}", self.first)
        } else {
            format!("{many} {}-{}", self.first, self.last)
        }
    }
}

/// The pages a chunk spans, `first..=last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageRange {
    pub first: u32,
    pub last: u32,
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
