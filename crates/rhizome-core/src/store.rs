//! The store contract, split like a database: [`StoreRead`] for queries, [`StoreWrite`]
//! for ingestion. Retrieval code takes `&dyn StoreRead` only, so another backend
//! (PostgreSQL + pgvector, FalkorDB) plugs in without touching it.
//!
//! Ownership rule every backend keeps: each derived record (mention, relation, fact,
//! similarity edge) is *supported* by a document. Deleting a document removes its support;
//! a node or edge left with no support is removed with its embedding and full-text entry.
//! Hence "index A and B, delete B" equals "index A".

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::community::{Community, CommunityReport, Covariate, CovariateRecord};
use crate::model::{Chunk, Document, DocumentMeta, Entity, Fact, Relation};
use crate::Result;

/// Which set of vectors a search runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum VectorKind {
    Chunk,
    Entity,
    Fact,
    /// Community reports.
    Report,
    /// Sentences of chunks, pooled from the chunk's own forward pass at index time (ids
    /// from [`crate::ids::sentence_id`]): read by id for extractive answers, never searched.
    /// They live and die with their chunk.
    Sentence,
}

impl VectorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            VectorKind::Chunk => "chunk",
            VectorKind::Entity => "entity",
            VectorKind::Fact => "fact",
            VectorKind::Report => "report",
            VectorKind::Sentence => "sentence",
        }
    }
}

/// An id with a score, best first in every result list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    pub id: String,
    pub score: f32,
}

/// Node counts per label and edge counts per type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Stats {
    pub nodes: BTreeMap<String, u64>,
    pub edges: BTreeMap<String, u64>,
}

/// An entity occurrence supported by a document (and a chunk of it, when there is one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MentionRecord {
    pub entity_id: String,
    pub name: String,
    pub entity_type: String,
    pub description: String,
    pub doc_id: String,
    pub chunk_id: Option<String>,
    pub count: u32,
    /// The extractor's importance judgement (0..1) in this chunk, if it made one.
    pub importance: Option<f32>,
}

/// A relation supported by a document (and chunk).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelationRecord {
    pub relation: Relation,
    pub doc_id: String,
    pub chunk_id: Option<String>,
}

/// A fact supported by a document (and chunk).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactRecord {
    pub fact: Fact,
    pub doc_id: String,
    pub chunk_id: Option<String>,
}

/// A chunk with the document it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkWithDoc {
    pub chunk: Chunk,
    pub doc_title: String,
    pub doc_source: String,
    /// What the document's pages are ([`crate::Pagination::unit`]); empty without pages.
    #[serde(default)]
    pub doc_page_unit: String,
}

impl ChunkWithDoc {
    /// The pages this chunk is on, for a citation; None when its document has no pages.
    pub fn page_ref(&self) -> Option<crate::PageRef> {
        let p = self.chunk.pages?;
        (!self.doc_page_unit.is_empty()).then(|| crate::PageRef {
            unit: self.doc_page_unit.clone(),
            first: p.first,
            last: p.last,
        })
    }
}

/// A document as a list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DocumentSummary {
    pub id: String,
    pub title: String,
    pub source: String,
    /// `en`, `vi`, `zh` (None: indexed before languages were recorded).
    pub language: Option<String>,
    pub chunks: u64,
    /// Distinct entities mentioned in it.
    pub entities: u64,
    /// Seconds since the Unix epoch (None: indexed before this was recorded).
    pub indexed_at: Option<u64>,
    /// Still being written in parts (a large file).
    pub partial: bool,
    /// The other names the same content arrived under ([`WriteBatch::aliases`]), in the
    /// order they came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Its pages (slides, sheets, chapters), for a paged document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// What is known about it besides its text (summary, type, hashtags, file metadata).
    #[serde(default, skip_serializing_if = "DocumentMeta::is_empty")]
    pub meta: DocumentMeta,
}

/// Everything one ingestion step commits at once. A backend writes a batch atomically:
/// after a crash either all of it is there or none of it is.
#[derive(Debug, Clone, Default)]
pub struct WriteBatch {
    pub documents: Vec<Document>,
    pub chunks: Vec<Chunk>,
    pub mentions: Vec<MentionRecord>,
    pub relations: Vec<RelationRecord>,
    pub facts: Vec<FactRecord>,
    /// SIMILAR_TO edges between chunks of one document: (chunk a, chunk b, cosine), a < b.
    pub similar: Vec<(String, String, f32)>,
    /// New vectors, by kind and node id.
    pub vectors: Vec<(VectorKind, String, Vec<f32>)>,
    /// Chunks whose extraction failed in this run (recorded, or their attempt count
    /// raised): the next indexing run retries them.
    pub failures: Vec<ExtractionFailure>,
    /// Chunks whose earlier failed extraction succeeded now (their records are in this
    /// batch): their failure records go.
    pub resolved_failures: Vec<String>,
    /// Claims about entities (covariates).
    pub covariates: Vec<CovariateRecord>,
    /// Documents written in parts (a large file): (document id, `Some(n)`) when its
    /// chunks `0..n` are written and more parts follow, `None` when this batch writes its
    /// last part. Until then [`StoreRead::has_document`] says false and
    /// [`StoreRead::partial_documents`] tells a rerun where to go on.
    pub doc_progress: Vec<(String, Option<u32>)>,
    /// Other names of stored documents: (document id, a source the same content arrived
    /// under again). A name is one document's at a time: an alias moves a name from the
    /// document that had it, and a document written with a source takes that name from
    /// any document holding it as an alias. An alias of a document that is not stored, or
    /// that names the document's own source, is not written.
    pub aliases: Vec<(String, String)>,
    /// Stored documents whose source now names other content, kept under another of
    /// their names: (document id, the name that becomes its source, taken from any
    /// document holding it as an alias). Applied before the batch's documents are
    /// written, so a document of this batch can take the freed name. A pair whose name is
    /// another stored document's source is not applied.
    pub renames: Vec<(String, String)>,
}

/// A chunk whose extraction failed: kept in the index without its graph until a later run
/// extracts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractionFailure {
    pub chunk_id: String,
    pub doc_id: String,
    pub error: String,
    /// Failed attempts so far (including this one).
    pub attempts: u32,
}

/// An entity described in several chunks, whose descriptions want one summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryTask {
    pub entity_id: String,
    pub name: String,
    /// Distinct descriptions, in document order.
    pub descriptions: Vec<String>,
    /// Identifies this set of descriptions: a summary is used only while it still matches.
    pub fingerprint: String,
}

/// What a deletion removed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeleteReport {
    pub documents: u64,
    pub chunks: u64,
    pub entities: u64,
    pub facts: u64,
    pub relations: u64,
}

/// The ids of what some documents support ([`StoreRead::supported_by`]), each list
/// sorted and without repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocSupport {
    pub entities: Vec<String>,
    pub relations: Vec<String>,
    pub facts: Vec<String>,
    /// Claims (covariates) the documents state.
    pub claims: Vec<String>,
}

impl DocSupport {
    /// From ids in any order, with repeats.
    pub fn new(mut entities: Vec<String>, mut relations: Vec<String>, mut facts: Vec<String>) -> DocSupport {
        for v in [&mut entities, &mut relations, &mut facts] {
            v.sort_unstable();
            v.dedup();
        }
        DocSupport { entities, relations, facts, claims: Vec::new() }
    }

    /// With the ids of the claims the documents state (any order, with repeats).
    pub fn with_claims(mut self, mut claims: Vec<String>) -> DocSupport {
        claims.sort_unstable();
        claims.dedup();
        self.claims = claims;
        self
    }
}

/// Support rows of entities and of relations ([`StoreRead::support_rows`]).
pub type SupportRows = (Vec<MentionRecord>, Vec<RelationRecord>);

/// Embeds the texts of entity names (one vector per text, of the index's embedding model,
/// as the pipeline embeds a new entity's name) for a deletion that re-keys entities; see
/// [`StoreWrite::delete_document`].
pub type EmbedNames<'a> = &'a mut dyn FnMut(&[String]) -> crate::Result<Vec<Vec<f32>>>;

/// Read side: everything retrieval, eval and stats need.
pub trait StoreRead {
    fn stats(&self) -> Result<Stats>;
    /// The embedding model whose vectors this index holds, if any were written.
    fn embedding_model(&self) -> Result<Option<String>>;
    /// A free-form metadata value (the extractor used, LLM usage totals).
    fn meta(&self, key: &str) -> Result<Option<String>>;
    /// Whether the document is indexed completely (a document written in parts is not,
    /// until its last part is written).
    fn has_document(&self, doc_id: &str) -> Result<bool>;
    /// Documents by title then id, `offset` and `limit` for paging; `search` keeps those
    /// whose title or source contains it (case-insensitive).
    fn documents(&self, search: Option<&str>, offset: usize, limit: usize) -> Result<Vec<DocumentSummary>>;
    /// How many documents [`StoreRead::documents`] would list without paging.
    fn document_count(&self, search: Option<&str>) -> Result<u64>;
    /// Documents written in part: (document id, chunks written, from ordinal 0).
    fn partial_documents(&self) -> Result<Vec<(String, u32)>>;
    /// A document by id, or by the exact source (or alias, [`WriteBatch::aliases`]) it was
    /// loaded from.
    fn find_document(&self, id_or_source: &str) -> Result<Option<Document>>;
    /// The complete document whose text has the digest `digest`
    /// ([`crate::ids::text_digest`]), if any: content that arrives again under another name
    /// is indexed once.
    fn document_with_digest(&self, digest: &str) -> Result<Option<String>>;
    /// Every name a document arrived under: its source, then its aliases in the order they
    /// came. Empty when there is no such document.
    fn document_sources(&self, doc_id: &str) -> Result<Vec<String>>;
    /// All documents whose source is `source` or starts with `source#` (entries of a corpus file).
    fn documents_from_source(&self, source: &str) -> Result<Vec<Document>>;
    /// Chunks by id, with their documents, in the order asked (unknown ids are skipped).
    fn chunks(&self, ids: &[String]) -> Result<Vec<ChunkWithDoc>>;
    fn entities(&self, ids: &[String]) -> Result<Vec<Entity>>;
    fn facts(&self, ids: &[String]) -> Result<Vec<Fact>>;
    /// Relations touching any of `entity_ids`.
    fn relations_of(&self, entity_ids: &[String]) -> Result<Vec<Relation>>;
    /// BM25 over chunk text, terms from [`crate::text::bm25_terms`]. Best `k`.
    fn bm25(&self, query: &str, k: usize) -> Result<Vec<Scored>>;
    /// Cosine nearest neighbours among vectors of `kind`. Best `k`.
    fn vector_search(&self, kind: VectorKind, query: &[f32], k: usize) -> Result<Vec<Scored>>;
    /// [`StoreRead::vector_search`] for many queries at once (one result list per query).
    fn vector_search_many(&self, kind: VectorKind, queries: &[Vec<f32>], k: usize) -> Result<Vec<Vec<Scored>>> {
        queries.iter().map(|q| self.vector_search(kind, q, k)).collect()
    }
    /// The stored vectors of `kind` for those of `ids` that have one, in the order asked.
    fn vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>>;
    /// Of `ids`, those with no vector of `kind` yet.
    fn missing_vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<String>>;
    /// True when entities changed since synonymy edges were last rebuilt.
    fn synonyms_dirty(&self) -> Result<bool>;
    /// Entities with at least `min_descriptions` distinct descriptions and no summary of
    /// exactly those descriptions yet.
    fn summary_tasks(&self, min_descriptions: usize) -> Result<Vec<SummaryTask>>;
    /// Chunks whose extraction failed and has not succeeded since, oldest first.
    fn extraction_failures(&self) -> Result<Vec<ExtractionFailure>>;
    /// The whole graph as rows (entities, chunks, relations, mentions, synonyms, similar
    /// chunks, facts), each list ordered by id.
    fn graph_data(&self) -> Result<crate::GraphData>;
    /// The graph around `entity_ids` ([`crate::Neighbourhood`] says which rows): what a
    /// method reads per question instead of the whole graph on a large index. It must
    /// equal `self.graph_data()?.around(entity_ids)`, which is the default; a backend
    /// overrides it with reads by id that do not grow with the graph.
    fn neighbourhood(&self, entity_ids: &[String]) -> Result<crate::Neighbourhood> {
        Ok(self.graph_data()?.around(entity_ids))
    }
    /// The rows of [`StoreRead::neighbourhood`] without the degrees of the relations'
    /// ends, which cost a read of every end's relations: what a method that does not
    /// weigh entities by degree reads. It must equal the neighbourhood's graph, which is
    /// the default; a backend overrides it with the same reads, less the degrees.
    fn neighbourhood_rows(&self, entity_ids: &[String]) -> Result<crate::GraphData> {
        Ok(self.neighbourhood(entity_ids)?.graph)
    }
    /// The edges of hippo's PageRank graph that touch `entity_ids` or `chunk_ids`, or with
    /// `among` that have both ends among them ([`crate::GraphData::walk_edges`] says which
    /// rows): what hippo reads, a few hundred nodes at a time, to walk the part of a large
    /// index around a question. It must equal `self.graph_data()?.walk_edges(..)`, which is
    /// the default; a backend overrides it with reads by id.
    fn walk_edges(&self, entity_ids: &[String], chunk_ids: &[String], among: bool) -> Result<crate::GraphData> {
        Ok(self.graph_data()?.walk_edges(entity_ids, chunk_ids, among))
    }
    /// The graph of the documents `docs` (ids), given what they support
    /// ([`StoreRead::supported_by`]): what a question asked of those documents only walks
    /// ([`crate::GraphData::scoped`] says which rows). It must equal
    /// `self.graph_data()?.scoped(..)`, which is the default; a backend overrides it with
    /// reads by id, so that a scope's graph costs what the scope holds.
    fn scope_graph(&self, docs: &[String], support: &DocSupport) -> Result<crate::GraphData> {
        Ok(self.graph_data()?.scoped(docs, support))
    }
    /// The chunks `chunk_ids` with the previous and next chunk of each one's document, and
    /// their SIMILAR_TO edges ([`crate::GraphData::chunk_links`] says which rows): what
    /// graph reasoning expands through on a large index. It must equal
    /// `self.graph_data()?.chunk_links(..)`, which is the default; a backend overrides it
    /// with reads by id.
    fn chunk_links(&self, chunk_ids: &[String]) -> Result<crate::GraphData> {
        Ok(self.graph_data()?.chunk_links(chunk_ids))
    }
    /// (chunk id, its document's title) for those of `chunk_ids` that exist, by chunk id.
    fn chunk_titles(&self, chunk_ids: &[String]) -> Result<Vec<(String, String)>> {
        let mut out: Vec<(String, String)> =
            self.chunks(chunk_ids)?.into_iter().map(|c| (c.chunk.id, c.doc_title)).collect();
        out.sort();
        out.dedup();
        Ok(out)
    }
    /// The fact rows of [`StoreRead::graph_data`] (one per supporting chunk) of the facts
    /// asked, in its order (by fact id, then chunk id, a fact without a chunk first).
    fn fact_rows(&self, fact_ids: &[String]) -> Result<Vec<crate::FactRow>> {
        let asked: std::collections::BTreeSet<&str> = fact_ids.iter().map(String::as_str).collect();
        Ok(self.graph_data()?.facts.into_iter().filter(|f| asked.contains(f.id.as_str())).collect())
    }
    /// Every entity's id, name and type, by id (the entity rows of
    /// [`StoreRead::graph_data`]): what a question's names are matched against.
    fn entity_rows(&self) -> Result<Vec<crate::EntityRow>> {
        Ok(self.graph_data()?.entities)
    }
    /// (entity, RELATED edges at it in the whole graph) for those of `entity_ids` that
    /// exist, by id: the degrees a viewer shows and ranks by, read through the indexes on
    /// relation ends. It must equal `self.graph_data()?.degrees(..)`, which is the default.
    fn entity_degrees(&self, entity_ids: &[String]) -> Result<Vec<(String, u32)>> {
        Ok(self.graph_data()?.degrees(entity_ids))
    }
    /// The chunk rows of [`StoreRead::graph_data`] of the document `doc_id` (none for no
    /// such document), in its order (by chunk id), read through the chunks' index by
    /// document. It must equal those of `self.graph_data()?.chunks`, which is the default.
    fn document_chunk_rows(&self, doc_id: &str) -> Result<Vec<crate::ChunkRow>> {
        Ok(self.graph_data()?.chunks.into_iter().filter(|c| c.doc_id == doc_id).collect())
    }
    /// True when the backend reads the graph around some entities or chunks by id
    /// ([`StoreRead::neighbourhood`], [`StoreRead::walk_edges`] and the other reads whose
    /// default cuts [`StoreRead::graph_data`]); false, the default, when those are the
    /// defaults: then each would read the whole graph, and a process holds the whole
    /// graph at any index size instead of reading around each question.
    fn reads_by_id(&self) -> bool {
        false
    }
    /// How many entities the index holds.
    fn entity_count(&self) -> Result<u64> {
        Ok(self.stats()?.nodes.get("Entity").copied().unwrap_or(0))
    }
    /// How many chunks the index holds.
    fn chunk_count(&self) -> Result<u64> {
        Ok(self.stats()?.nodes.get("Chunk").copied().unwrap_or(0))
    }
    /// How many facts the index holds.
    fn fact_count(&self) -> Result<u64> {
        Ok(self.stats()?.nodes.get("Fact").copied().unwrap_or(0))
    }
    /// A counter that changes whenever the graph changes (any write or delete), so that a
    /// caller can cache what it derives from [`StoreRead::graph_data`].
    fn graph_version(&self) -> Result<u64>;
    /// What a reader's caches depend on, read together: (graph version, reports version
    /// or 0). The engine asks it at the start of every reader loan, so a backend may keep
    /// what it read then (with more: its data version, the embedding model) for the rest
    /// of the loan instead of reading each again per call: on PostgreSQL every read is a
    /// round trip, and they were most of a query's time. Writes through the same store end
    /// such a loan.
    fn freshness(&self) -> Result<(u64, u64)> {
        Ok((self.graph_version()?, self.reports_version()?.unwrap_or(0)))
    }
    /// All communities, by level then id.
    fn communities(&self) -> Result<Vec<Community>>;
    /// One community by id (None: no such community).
    fn community(&self, id: &str) -> Result<Option<Community>>;
    /// The graph version the stored communities were computed at (None: never computed
    /// or imported). Communities are stale when it differs from [`StoreRead::graph_version`].
    fn communities_version(&self) -> Result<Option<u64>>;
    /// The graph version at which every report was last checked against its inputs
    /// (None: never). Reports may be stale when it differs from the graph version.
    fn reports_version(&self) -> Result<Option<u64>>;
    /// All community reports, by level then community id.
    fn community_reports(&self) -> Result<Vec<CommunityReport>>;
    /// The communities (any level) holding at least one of `entity_ids`, by level then id.
    fn communities_of(&self, entity_ids: &[String]) -> Result<Vec<Community>>;
    /// The reports of `community_ids` that exist, by level then community id.
    fn community_reports_of(&self, community_ids: &[String]) -> Result<Vec<CommunityReport>>;
    /// Of `community_ids`, those of stored communities that are leaves (not split
    /// further), in the order asked: what decides whether a report of a shallower level
    /// stands for itself at a deeper one ([`crate::community::reports_at_level`]). The
    /// default reads each community whole; a backend reads only their children.
    fn leaf_communities(&self, community_ids: &[String]) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for id in community_ids {
            if self.community(id)?.is_some_and(|c| c.is_leaf()) {
                out.push(id.clone());
            }
        }
        Ok(out)
    }
    /// How many community reports the index holds.
    fn community_report_count(&self) -> Result<u64>;
    /// Claims whose subject or object is one of `entity_ids`, by id.
    fn covariates_of(&self, entity_ids: &[String]) -> Result<Vec<Covariate>>;
    /// What the documents `doc_ids` support: the entities, relations and facts with a
    /// support row from one of them, whatever else supports them too (read through an
    /// index on the support rows' document, never a scan of the graph).
    fn supported_by(&self, doc_ids: &[String]) -> Result<DocSupport>;
    /// Every support row, from every document, of the entities `entity_ids` and of the
    /// relations `relation_ids` (what their aggregates are made of), in the order they
    /// were written; read through the support rows' index by entity and by relation. A
    /// scope aggregates again those of its own documents.
    fn support_rows(&self, entity_ids: &[String], relation_ids: &[String]) -> Result<SupportRows>;
    /// The documents with a row of the document index ([`crate::filter::doc_tags`]) under
    /// `key` whose value is in `from..to` (no upper bound without `to`), sorted, each once:
    /// a range read of the index by (key, value), never a scan of the documents.
    fn tagged_documents(&self, key: &str, from: &str, to: Option<&str>) -> Result<Vec<String>>;
    /// Every (document id, name), for each name (its source, its aliases) that starts
    /// with `prefix` ("": every name), read from the names' index alone.
    fn document_names(&self, prefix: &str) -> Result<Vec<(String, String)>>;
    /// Everything `doc_id` supports, as the batch that would write it again: the document,
    /// its chunks (by ordinal), the mentions, relations, facts, SIMILAR_TO edges, claims and
    /// extraction failures it supports (each list in a stable order), its progress when it
    /// is written in part, its aliases in the order they came, and the vectors of its chunks and of the entities and facts it
    /// supports. `None` when there is no such document. Writing the batches of every
    /// document into an empty store of any backend rebuilds the same graph
    /// (`rhizome copy`).
    fn document_batch(&self, doc_id: &str) -> Result<Option<WriteBatch>>;
    /// Every stored entity summary: (entity id, fingerprint of the descriptions it
    /// summarises, summary), by entity id.
    fn entity_summaries(&self) -> Result<Vec<(String, String, String)>>;
}

/// Write side: ingestion. Every method is atomic.
pub trait StoreWrite: StoreRead + Send {
    /// Record the embedding model; an index holding vectors of another model refuses.
    fn set_embedding_model(&mut self, model_id: &str, dim: usize) -> Result<()>;
    /// Write a free-form metadata value.
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()>;
    fn write_batch(&mut self, batch: &WriteBatch) -> Result<()>;
    /// Remove a document (with its aliases) and everything only it supported. An entity keeps the id of the
    /// name it was first written under; when the document took every support row with that
    /// name (the entity had absorbed another document's name as an alias), the entity is
    /// re-keyed by the support that remains, as if the document had never been indexed:
    /// its rows, the relations and facts naming it move to the new id, and `embed` is
    /// called once with the texts of the new keys' vectors (not at all when nothing is
    /// re-keyed).
    fn delete_document(&mut self, doc_id: &str, embed: EmbedNames<'_>) -> Result<DeleteReport>;
    /// Store a summary of an entity's descriptions; the entity's description becomes the
    /// summary for as long as its descriptions keep this fingerprint.
    fn set_entity_summary(&mut self, entity_id: &str, fingerprint: &str, summary: &str) -> Result<()>;
    /// Replace the metadata of documents, `(document id, metadata)`, in one write; ids of
    /// no document are passed over. Returns how many documents it changed. Does not change
    /// the graph version: nothing retrieval reads changes.
    fn set_document_meta(&mut self, metas: &[(String, DocumentMeta)]) -> Result<u64>;
    /// Recompute SYNONYM edges: each entity to its `top_k` nearest entities with cosine
    /// >= `threshold`. Returns the number of edges. Stops early when `cancel` is set.
    fn rebuild_synonyms(&mut self, top_k: usize, threshold: f32, cancel: &AtomicBool) -> Result<u64>;
    /// Replace all communities with `communities`, computed at `graph_version`. Reports
    /// (and their vectors) of communities that are gone are removed; the others are kept
    /// (the caller compares their inputs). Does not change the graph version.
    fn replace_communities(&mut self, communities: &[Community], graph_version: u64) -> Result<()>;
    /// Store reports (replacing a community's earlier report) with their vectors
    /// (community id, vector), which must be of the index's embedding model. A report of
    /// a community that is not stored is not written.
    fn put_reports(&mut self, reports: &[CommunityReport], vectors: &[(String, Vec<f32>)]) -> Result<()>;
    /// Record that every report was checked against its inputs at `graph_version`.
    fn set_reports_version(&mut self, graph_version: u64) -> Result<()>;
    /// Replace every SYNONYM edge with `edges` ((a, b, cosine), a < b, both stored
    /// entities), computed elsewhere for exactly the stored entities (`rhizome copy`), and
    /// mark synonymy as up to date. Changes the graph version.
    fn set_synonyms(&mut self, edges: &[(String, String, f32)]) -> Result<()>;
    /// A load of many batches begins (`true`) or ends (`false`). Meanwhile a store may set
    /// aside what each batch would keep up to date and what is cheaper built once at the
    /// end (PostgreSQL drops its HNSW indexes, searches are exact meanwhile, and builds
    /// them again when the load ends). Results never differ, only their cost; a load that
    /// never ends (the process dies) leaves nothing wrong: the next write builds what is
    /// missing. Stores with nothing to set aside do nothing.
    fn bulk_load(&mut self, on: bool) -> Result<()> {
        let _ = on;
        Ok(())
    }
}
