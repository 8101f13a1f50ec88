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
    /// What is known about it besides its text: from its file, and from describing it.
    #[serde(default, skip_serializing_if = "DocumentMeta::is_empty")]
    pub meta: DocumentMeta,
}

/// What is known about a document besides its text. The loader fills what its file says
/// (media type, size, author, dates); describing the document after indexing fills the
/// summary, the type and the hashtags. Every field may be missing: an index written
/// before metadata was kept has none, and a corpus entry has no file of its own.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DocumentMeta {
    /// Media type (MIME) of the file it was read from: `application/pdf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Size of that file in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// Author, from the file's metadata (PDF Info, DOCX core properties, EPUB, mail sender).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// When the file says it was created, `YYYY-MM-DD` (or a full RFC 3339 time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// When it was last modified, as `created` (the file's modification time when its
    /// contents do not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// A few sentences saying what the document is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Its type, one name of the configured list (`describe.types`): `report`, `manual`...
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub doc_type: Option<String>,
    /// A handful of keyphrases, most telling first, as words of the document's language.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hashtags: Vec<String>,
    /// How summary, type and hashtags were made: `extractive` (no LLM) or `llm`; None:
    /// not described yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub described_by: Option<String>,
}

/// `secs` since the Unix epoch as an RFC 3339 time in UTC: `2024-03-01T09:30:00Z`.
pub fn utc_time(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Gregorian, proleptic).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

impl DocumentMeta {
    /// True when nothing is known.
    pub fn is_empty(&self) -> bool {
        self == &DocumentMeta::default()
    }

    /// The file-side fields of `self` with the description of `described` (summary,
    /// type, hashtags and how they were made).
    pub fn with_description(&self, described: &DocumentMeta) -> DocumentMeta {
        DocumentMeta {
            summary: described.summary.clone(),
            doc_type: described.doc_type.clone(),
            hashtags: described.hashtags.clone(),
            described_by: described.described_by.clone(),
            ..self.clone()
        }
    }
}

impl Document {
    /// A document of `text` from `source`, its id made from title and text, without pages.
    pub fn new(source: impl Into<String>, title: impl Into<String>, text: impl Into<String>) -> Self {
        let (title, text) = (title.into(), text.into());
        Document {
            id: crate::ids::document_id(&title, &text),
            source: source.into(),
            title,
            text,
            pages: None,
            meta: DocumentMeta::default(),
        }
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

/// A claim about an entity seen in one chunk (Microsoft GraphRAG's covariate): what the
/// text asserts of its subject, possibly involving an object, and whether it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedClaim {
    /// The entity the claim is about (by surface name).
    pub subject: String,
    /// The other entity involved, when there is one.
    #[serde(default)]
    pub object: Option<String>,
    /// A short label in capital letters, e.g. `ACQUISITION`.
    pub claim_type: String,
    /// `TRUE`, `FALSE` or `SUSPECTED`.
    pub status: String,
    /// When the claim starts and ends to hold, ISO 8601 dates, empty when not said.
    #[serde(default)]
    pub start_date: String,
    #[serde(default)]
    pub end_date: String,
    pub description: String,
    /// The words of the text the claim rests on.
    #[serde(default)]
    pub source_text: String,
}

/// Everything an extractor found in one chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    pub entities: Vec<ExtractedEntity>,
    pub relations: Vec<ExtractedRelation>,
    pub facts: Vec<ExtractedFact>,
    /// Claims about the entities (only when asked for: `extract.claims`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ExtractedClaim>,
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
    /// How important the entity is, 0..1. Stored: from its support (the mean of the
    /// extractor's judgements when it made some, else how often and in how many documents
    /// it is mentioned). As the engine shows it (one entity, exports): blended with its
    /// centrality in the graph (`rhizome_retrieve::centrality`). None without either.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_times_are_rfc3339() {
        assert_eq!(utc_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_time(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_time(1_709_285_400), "2024-03-01T09:30:00Z");
        assert_eq!(utc_time(-1), "1969-12-31T23:59:59Z");
    }
}
