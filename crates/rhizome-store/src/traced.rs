//! [`Traced`]: any reader with a `tracing` span around each read a query spends time in
//! (searches, the graph load, fetching records by id), named `store.READ`, so that a
//! request's trace shows its store reads whatever the backend. The small reads a query
//! makes many times (versions, meta) pass through without one. With no subscriber
//! installed a span costs one relaxed atomic load.

use rhizome_core::store::*;
use rhizome_core::{Community, CommunityReport, Covariate, Document, Entity, Fact, Relation, Result};
use tracing::info_span;

/// A reader whose heavy reads are spans.
pub struct Traced<S>(pub S);

impl<S: StoreRead> StoreRead for Traced<S> {
    fn stats(&self) -> Result<Stats> {
        info_span!("store.stats").in_scope(|| self.0.stats())
    }
    fn embedding_model(&self) -> Result<Option<String>> {
        self.0.embedding_model()
    }
    fn meta(&self, key: &str) -> Result<Option<String>> {
        self.0.meta(key)
    }
    fn has_document(&self, doc_id: &str) -> Result<bool> {
        self.0.has_document(doc_id)
    }
    fn documents(&self, search: Option<&str>, offset: usize, limit: usize) -> Result<Vec<DocumentSummary>> {
        info_span!("store.documents", limit).in_scope(|| self.0.documents(search, offset, limit))
    }
    fn document_count(&self, search: Option<&str>) -> Result<u64> {
        self.0.document_count(search)
    }
    fn partial_documents(&self) -> Result<Vec<(String, u32)>> {
        self.0.partial_documents()
    }
    fn find_document(&self, id_or_source: &str) -> Result<Option<Document>> {
        self.0.find_document(id_or_source)
    }
    fn document_with_digest(&self, digest: &str) -> Result<Option<String>> {
        self.0.document_with_digest(digest)
    }
    fn document_sources(&self, doc_id: &str) -> Result<Vec<String>> {
        self.0.document_sources(doc_id)
    }
    fn documents_from_source(&self, source: &str) -> Result<Vec<Document>> {
        self.0.documents_from_source(source)
    }
    fn chunks(&self, ids: &[String]) -> Result<Vec<ChunkWithDoc>> {
        info_span!("store.chunks", ids = ids.len()).in_scope(|| self.0.chunks(ids))
    }
    fn entities(&self, ids: &[String]) -> Result<Vec<Entity>> {
        info_span!("store.entities", ids = ids.len()).in_scope(|| self.0.entities(ids))
    }
    fn facts(&self, ids: &[String]) -> Result<Vec<Fact>> {
        info_span!("store.facts", ids = ids.len()).in_scope(|| self.0.facts(ids))
    }
    fn relations_of(&self, entity_ids: &[String]) -> Result<Vec<Relation>> {
        info_span!("store.relations_of", ids = entity_ids.len()).in_scope(|| self.0.relations_of(entity_ids))
    }
    fn bm25(&self, query: &str, k: usize) -> Result<Vec<Scored>> {
        info_span!("store.bm25", k).in_scope(|| self.0.bm25(query, k))
    }
    fn vector_search(&self, kind: VectorKind, query: &[f32], k: usize) -> Result<Vec<Scored>> {
        info_span!("store.vector_search", kind = kind.as_str(), k).in_scope(|| self.0.vector_search(kind, query, k))
    }
    fn vector_search_many(&self, kind: VectorKind, queries: &[Vec<f32>], k: usize) -> Result<Vec<Vec<Scored>>> {
        info_span!("store.vector_search", kind = kind.as_str(), k, queries = queries.len())
            .in_scope(|| self.0.vector_search_many(kind, queries, k))
    }
    fn vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        info_span!("store.vectors", kind = kind.as_str(), ids = ids.len()).in_scope(|| self.0.vectors(kind, ids))
    }
    fn missing_vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<String>> {
        self.0.missing_vectors(kind, ids)
    }
    fn synonyms_dirty(&self) -> Result<bool> {
        self.0.synonyms_dirty()
    }
    fn summary_tasks(&self, min_descriptions: usize) -> Result<Vec<SummaryTask>> {
        self.0.summary_tasks(min_descriptions)
    }
    fn extraction_failures(&self) -> Result<Vec<ExtractionFailure>> {
        self.0.extraction_failures()
    }
    fn graph_data(&self) -> Result<rhizome_core::GraphData> {
        info_span!("store.graph_data").in_scope(|| self.0.graph_data())
    }
    fn neighbourhood(&self, entity_ids: &[String]) -> Result<rhizome_core::Neighbourhood> {
        info_span!("store.neighbourhood", ids = entity_ids.len()).in_scope(|| self.0.neighbourhood(entity_ids))
    }
    fn reads_by_id(&self) -> bool {
        self.0.reads_by_id()
    }
    fn neighbourhood_rows(&self, entity_ids: &[String]) -> Result<rhizome_core::GraphData> {
        info_span!("store.neighbourhood_rows", ids = entity_ids.len())
            .in_scope(|| self.0.neighbourhood_rows(entity_ids))
    }
    fn walk_edges(&self, entity_ids: &[String], chunk_ids: &[String], among: bool) -> Result<rhizome_core::GraphData> {
        info_span!("store.walk_edges", entities = entity_ids.len(), chunks = chunk_ids.len())
            .in_scope(|| self.0.walk_edges(entity_ids, chunk_ids, among))
    }
    fn scope_graph(&self, docs: &[String], support: &rhizome_core::DocSupport) -> Result<rhizome_core::GraphData> {
        info_span!("store.scope_graph", docs = docs.len()).in_scope(|| self.0.scope_graph(docs, support))
    }
    fn chunk_links(&self, chunk_ids: &[String]) -> Result<rhizome_core::GraphData> {
        info_span!("store.chunk_links", chunks = chunk_ids.len()).in_scope(|| self.0.chunk_links(chunk_ids))
    }
    fn chunk_titles(&self, chunk_ids: &[String]) -> Result<Vec<(String, String)>> {
        self.0.chunk_titles(chunk_ids)
    }
    fn fact_rows(&self, fact_ids: &[String]) -> Result<Vec<rhizome_core::FactRow>> {
        self.0.fact_rows(fact_ids)
    }
    fn entity_rows(&self) -> Result<Vec<rhizome_core::EntityRow>> {
        info_span!("store.entity_rows").in_scope(|| self.0.entity_rows())
    }
    fn entity_degrees(&self, entity_ids: &[String]) -> Result<Vec<(String, u32)>> {
        info_span!("store.entity_degrees", ids = entity_ids.len()).in_scope(|| self.0.entity_degrees(entity_ids))
    }
    fn document_chunk_rows(&self, doc_id: &str) -> Result<Vec<rhizome_core::ChunkRow>> {
        self.0.document_chunk_rows(doc_id)
    }
    fn entity_count(&self) -> Result<u64> {
        self.0.entity_count()
    }
    fn fact_count(&self) -> Result<u64> {
        self.0.fact_count()
    }
    fn chunk_count(&self) -> Result<u64> {
        self.0.chunk_count()
    }
    fn graph_version(&self) -> Result<u64> {
        self.0.graph_version()
    }
    fn freshness(&self) -> Result<(u64, u64)> {
        self.0.freshness()
    }
    fn communities(&self) -> Result<Vec<Community>> {
        info_span!("store.communities").in_scope(|| self.0.communities())
    }
    fn community(&self, id: &str) -> Result<Option<Community>> {
        self.0.community(id)
    }
    fn communities_version(&self) -> Result<Option<u64>> {
        self.0.communities_version()
    }
    fn reports_version(&self) -> Result<Option<u64>> {
        self.0.reports_version()
    }
    fn community_reports(&self) -> Result<Vec<CommunityReport>> {
        info_span!("store.community_reports").in_scope(|| self.0.community_reports())
    }
    fn communities_of(&self, entity_ids: &[String]) -> Result<Vec<Community>> {
        info_span!("store.communities_of", ids = entity_ids.len()).in_scope(|| self.0.communities_of(entity_ids))
    }
    fn community_reports_of(&self, community_ids: &[String]) -> Result<Vec<CommunityReport>> {
        info_span!("store.community_reports_of", ids = community_ids.len())
            .in_scope(|| self.0.community_reports_of(community_ids))
    }
    fn leaf_communities(&self, community_ids: &[String]) -> Result<Vec<String>> {
        info_span!("store.leaf_communities", ids = community_ids.len())
            .in_scope(|| self.0.leaf_communities(community_ids))
    }
    fn community_report_count(&self) -> Result<u64> {
        self.0.community_report_count()
    }
    fn covariates_of(&self, entity_ids: &[String]) -> Result<Vec<Covariate>> {
        info_span!("store.covariates_of", ids = entity_ids.len()).in_scope(|| self.0.covariates_of(entity_ids))
    }
    fn supported_by(&self, doc_ids: &[String]) -> Result<DocSupport> {
        info_span!("store.supported_by", docs = doc_ids.len()).in_scope(|| self.0.supported_by(doc_ids))
    }
    fn support_rows(&self, entities: &[String], relations: &[String]) -> Result<SupportRows> {
        info_span!("store.support_rows", entities = entities.len(), relations = relations.len())
            .in_scope(|| self.0.support_rows(entities, relations))
    }
    fn tagged_documents(&self, key: &str, from: &str, to: Option<&str>) -> Result<Vec<String>> {
        info_span!("store.tagged_documents", key).in_scope(|| self.0.tagged_documents(key, from, to))
    }
    fn document_names(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        info_span!("store.document_names").in_scope(|| self.0.document_names(prefix))
    }
    fn document_batch(&self, doc_id: &str) -> Result<Option<WriteBatch>> {
        self.0.document_batch(doc_id)
    }
    fn entity_summaries(&self) -> Result<Vec<(String, String, String)>> {
        self.0.entity_summaries()
    }
}
