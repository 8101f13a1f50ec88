//! [`StoreRead`] for [`SqliteStore`].

use std::sync::Arc;

use rhizome_core::{
    ChunkWithDoc, Document, Entity, Fact, Relation, Result, Scored, Stats, StoreRead, SummaryTask, VectorKind,
};
use rusqlite::{params, OptionalExtension};

use super::{aliases, meta, postings, rows, sql, SqliteStore};
use crate::vectors::{decode, VectorMatrix};

fn count(conn: &rusqlite::Connection, q: &str) -> Result<u64> {
    conn.query_row(q, [], |r| r.get::<_, i64>(0)).map(|n| n as u64).map_err(sql)
}

impl SqliteStore {
    pub(crate) fn matrix(&self, kind: VectorKind) -> Result<Arc<VectorMatrix>> {
        if let Some(m) = self.vector_cache.borrow().get(&kind) {
            return Ok(m.clone());
        }
        let mut stmt = self.conn.prepare("SELECT id, vec FROM vectors WHERE kind = ?1 ORDER BY id").map_err(sql)?;
        let mut m = VectorMatrix::default();
        let rows =
            stmt.query_map([kind.as_str()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))).map_err(sql)?;
        for row in rows {
            let (id, blob) = row.map_err(sql)?;
            m.push(id, &decode(&blob));
        }
        let m = Arc::new(m);
        self.vector_cache.borrow_mut().insert(kind, m.clone());
        Ok(m)
    }

    fn lengths(&self) -> Result<Arc<crate::bm25::DocLengths>> {
        if let Some(l) = self.bm25_cache.borrow().as_ref() {
            return Ok(l.clone());
        }
        let l = Arc::new(postings::lengths(&self.conn)?);
        *self.bm25_cache.borrow_mut() = Some(l.clone());
        Ok(l)
    }

    /// Ids of the chunks of a document, in order.
    pub fn chunk_ids_of(&self, doc_id: &str) -> Result<Vec<String>> {
        rows::all(&self.conn, "SELECT id FROM chunks WHERE doc_id = ?1 ORDER BY ordinal", [doc_id], |r| r.get(0))
    }

    /// [`StoreRead::supported_by`]: through the support tables' document indexes.
    fn support_of(&self, doc_ids: &[String]) -> Result<rhizome_core::DocSupport> {
        let ids = |q: &str| -> Result<Vec<String>> {
            let mut out = Vec::new();
            for d in doc_ids {
                out.extend(rows::all(&self.conn, q, [d], |r| r.get::<_, String>(0))?);
            }
            Ok(out)
        };
        Ok(rhizome_core::DocSupport::new(
            ids("SELECT DISTINCT entity_id FROM entity_support WHERE doc_id = ?1")?,
            ids("SELECT DISTINCT relation_id FROM relation_support WHERE doc_id = ?1")?,
            ids("SELECT DISTINCT fact_id FROM fact_support WHERE doc_id = ?1")?,
        )
        .with_claims(ids("SELECT DISTINCT id FROM covariates WHERE doc_id = ?1")?))
    }

    /// All documents (id, source, title), ordered by source.
    pub fn list_documents(&self) -> Result<Vec<(String, String, String)>> {
        let q = "SELECT id, source, title FROM documents ORDER BY source, id";
        rows::list(&self.conn, q, [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
    }
}

impl StoreRead for SqliteStore {
    fn stats(&self) -> Result<Stats> {
        let c = &self.conn;
        let mut s = Stats::default();
        s.nodes.insert("Document".into(), count(c, "SELECT COUNT(*) FROM documents")?);
        s.nodes.insert("Chunk".into(), count(c, "SELECT COUNT(*) FROM chunks")?);
        s.nodes.insert("Entity".into(), count(c, "SELECT COUNT(*) FROM entities")?);
        s.nodes.insert("Fact".into(), count(c, "SELECT COUNT(*) FROM facts")?);
        s.edges.insert("PART_OF".into(), count(c, "SELECT COUNT(*) FROM chunks")?);
        s.edges.insert("NEXT_CHUNK".into(), count(c, "SELECT COUNT(*) FROM chunks WHERE ordinal > 0")?);
        s.edges.insert(
            "MENTIONED_IN".into(),
            count(
                c,
                "SELECT COUNT(*) FROM (SELECT DISTINCT entity_id, chunk_id FROM entity_support
                 WHERE chunk_id IS NOT NULL)",
            )?,
        );
        s.edges.insert("RELATED".into(), count(c, "SELECT COUNT(*) FROM relations")?);
        s.edges.insert("SYNONYM".into(), count(c, "SELECT COUNT(*) FROM synonyms")?);
        s.edges.insert("SIMILAR_TO".into(), count(c, "SELECT COUNT(*) FROM similar")?);
        s.nodes.insert("Community".into(), count(c, "SELECT COUNT(*) FROM communities")?);
        s.nodes.insert("CommunityReport".into(), count(c, "SELECT COUNT(*) FROM community_reports")?);
        s.nodes.insert("Covariate".into(), count(c, "SELECT COUNT(DISTINCT id) FROM covariates")?);
        s.edges.insert(
            "IN_COMMUNITY".into(),
            count(c, "SELECT COALESCE(SUM(json_array_length(entity_ids)), 0) FROM communities")?,
        );
        Ok(s)
    }

    fn embedding_model(&self) -> Result<Option<String>> {
        meta::get_meta(&self.conn, "embedding_model")
    }

    fn has_document(&self, doc_id: &str) -> Result<bool> {
        let found: Option<i64> = self
            .conn
            .query_row(
                "SELECT 1 FROM documents WHERE id = ?1
                 AND NOT EXISTS (SELECT 1 FROM partial_documents WHERE doc_id = ?1)",
                [doc_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        Ok(found.is_some())
    }

    fn meta(&self, key: &str) -> Result<Option<String>> {
        meta::get_meta(&self.conn, key)
    }

    fn partial_documents(&self) -> Result<Vec<(String, u32)>> {
        let q = "SELECT doc_id, chunks_done FROM partial_documents ORDER BY doc_id";
        rows::list(&self.conn, q, [], |r| Ok((r.get(0)?, r.get(1)?)))
    }

    fn find_document(&self, id_or_source: &str) -> Result<Option<Document>> {
        self.conn
            .query_row(
                "SELECT id, source, title, text, pages, meta FROM documents WHERE id = ?1 OR source = ?1
                 OR id = (SELECT doc_id FROM document_aliases WHERE source = ?1)
                 ORDER BY source <> ?1, id LIMIT 1",
                [id_or_source],
                rows::document_row,
            )
            .optional()
            .map_err(sql)
    }

    fn document_with_digest(&self, digest: &str) -> Result<Option<String>> {
        aliases::with_digest(&self.conn, digest)
    }

    fn document_sources(&self, doc_id: &str) -> Result<Vec<String>> {
        aliases::sources(&self.conn, doc_id)
    }

    fn documents(
        &self,
        search: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<rhizome_core::DocumentSummary>> {
        let pattern = search.map(crate::like_pattern);
        let mut list = rows::list(
            &self.conn,
            "SELECT d.id, d.title, d.source, d.language, d.indexed_at,
               (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.id),
               (SELECT COUNT(DISTINCT s.entity_id) FROM entity_support s WHERE s.doc_id = d.id),
               EXISTS(SELECT 1 FROM partial_documents p WHERE p.doc_id = d.id), d.pages, d.meta
             FROM documents d
             WHERE ?1 IS NULL OR d.title LIKE ?1 ESCAPE '\\' OR d.source LIKE ?1 ESCAPE '\\'
                OR EXISTS(SELECT 1 FROM document_aliases a WHERE a.doc_id = d.id AND a.source LIKE ?1 ESCAPE '\\')
             ORDER BY d.title, d.id LIMIT ?2 OFFSET ?3",
            params![pattern, limit.min(i64::MAX as usize) as i64, offset.min(i64::MAX as usize) as i64],
            |r| {
                Ok(rhizome_core::DocumentSummary {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    source: r.get(2)?,
                    language: r.get(3)?,
                    indexed_at: r.get::<_, Option<i64>>(4)?.map(|t| t.max(0) as u64),
                    chunks: r.get::<_, i64>(5)? as u64,
                    entities: r.get::<_, i64>(6)? as u64,
                    partial: r.get(7)?,
                    aliases: Vec::new(),
                    pages: crate::page_count(r.get(8)?),
                    meta: crate::meta_from_json(r.get(9)?),
                })
            },
        )?;
        for d in &mut list {
            d.aliases = aliases::of(&self.conn, &d.id)?;
        }
        Ok(list)
    }

    fn document_count(&self, search: Option<&str>) -> Result<u64> {
        let pattern = search.map(crate::like_pattern);
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM documents d
                 WHERE ?1 IS NULL OR d.title LIKE ?1 ESCAPE '\\' OR d.source LIKE ?1 ESCAPE '\\'
                OR EXISTS(SELECT 1 FROM document_aliases a WHERE a.doc_id = d.id AND a.source LIKE ?1 ESCAPE '\\')",
                params![pattern],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(sql)
    }

    fn documents_from_source(&self, source: &str) -> Result<Vec<Document>> {
        let prefix = format!("{source}#");
        rows::list(
            &self.conn,
            "SELECT id, source, title, text, pages, meta FROM documents
             WHERE source = ?1 OR substr(source, 1, length(?2)) = ?2 ORDER BY source, id",
            params![source, prefix],
            rows::document_row,
        )
    }

    fn chunks(&self, ids: &[String]) -> Result<Vec<ChunkWithDoc>> {
        rows::by_ids(
            &self.conn,
            "SELECT c.id, c.doc_id, c.ordinal, c.text, c.tokens, c.char_start, c.char_end, c.page_first,
             c.page_last, d.title, d.source, coalesce(json_extract(d.pages, '$.unit'), '')
             FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id = ?1",
            ids,
            |r| {
                Ok(ChunkWithDoc {
                    chunk: rows::chunk_row(r)?,
                    doc_title: r.get(9)?,
                    doc_source: r.get(10)?,
                    doc_page_unit: r.get(11)?,
                })
            },
        )
    }

    fn entities(&self, ids: &[String]) -> Result<Vec<Entity>> {
        let q = "SELECT id, name, entity_type, description, importance FROM entities WHERE id = ?1";
        rows::by_ids(&self.conn, q, ids, rows::entity_row)
    }

    fn facts(&self, ids: &[String]) -> Result<Vec<Fact>> {
        let q = "SELECT id, subject, predicate, object, subject_id, object_id FROM facts WHERE id = ?1";
        rows::by_ids(&self.conn, q, ids, rows::fact_row)
    }

    fn relations_of(&self, entity_ids: &[String]) -> Result<Vec<Relation>> {
        rows::union_by(
            &self.conn,
            "SELECT id, source_id, target_id, rel_type, description, weight FROM relations
             WHERE source_id = ?1 OR target_id = ?1",
            entity_ids,
            rows::relation_row,
            |r| &r.id,
        )
    }

    fn bm25(&self, query: &str, k: usize) -> Result<Vec<Scored>> {
        let lengths = self.lengths()?;
        let hits = postings::search(&self.conn, &lengths, query, k)?;
        postings::to_scored(&self.conn, hits)
    }

    fn vector_search(&self, kind: VectorKind, query: &[f32], k: usize) -> Result<Vec<Scored>> {
        Ok(self.matrix(kind)?.search(query, k))
    }

    fn vector_search_many(&self, kind: VectorKind, queries: &[Vec<f32>], k: usize) -> Result<Vec<Vec<Scored>>> {
        Ok(self.matrix(kind)?.search_many(queries, k))
    }

    fn missing_vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached("SELECT 1 FROM vectors WHERE kind = ?1 AND id = ?2").map_err(sql)?;
        let mut out = Vec::new();
        for id in ids {
            let found: Option<i64> =
                stmt.query_row(params![kind.as_str(), id], |r| r.get(0)).optional().map_err(sql)?;
            if found.is_none() {
                out.push(id.clone());
            }
        }
        Ok(out)
    }

    fn vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        let mut stmt = self.conn.prepare_cached("SELECT vec FROM vectors WHERE kind = ?1 AND id = ?2").map_err(sql)?;
        let mut out = Vec::new();
        for id in ids {
            let found: Option<Vec<u8>> =
                stmt.query_row(params![kind.as_str(), id], |r| r.get(0)).optional().map_err(sql)?;
            if let Some(b) = found {
                out.push((id.clone(), crate::vectors::decode(&b)));
            }
        }
        Ok(out)
    }

    fn summary_tasks(&self, min_descriptions: usize) -> Result<Vec<SummaryTask>> {
        if min_descriptions == 0 {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = rows::list(
            &self.conn,
            "SELECT entity_id FROM entity_support WHERE description != ''
             GROUP BY entity_id HAVING COUNT(DISTINCT description) >= ?1 ORDER BY entity_id",
            [min_descriptions as i64],
            |r| r.get(0),
        )?;
        let mut out = Vec::new();
        for id in ids {
            let (descriptions, fingerprint) = super::write::entity_descriptions(&self.conn, &id)?;
            let done: Option<i64> = self
                .conn
                .query_row(
                    "SELECT 1 FROM entity_summaries WHERE entity_id = ?1 AND fingerprint = ?2",
                    params![id, fingerprint],
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql)?;
            if done.is_some() {
                continue;
            }
            let name = self.entities(std::slice::from_ref(&id))?.pop().map(|e| e.name).unwrap_or_default();
            out.push(SummaryTask { entity_id: id, name, descriptions, fingerprint });
        }
        Ok(out)
    }

    fn extraction_failures(&self) -> Result<Vec<rhizome_core::ExtractionFailure>> {
        let q = "SELECT chunk_id, doc_id, error, attempts FROM extraction_failures ORDER BY rowid";
        rows::list(&self.conn, q, [], rows::failure_row)
    }

    fn graph_data(&self) -> Result<rhizome_core::GraphData> {
        super::graph_read::graph_data(&self.conn)
    }

    fn reads_by_id(&self) -> bool {
        true
    }

    fn neighbourhood(&self, entity_ids: &[String]) -> Result<rhizome_core::Neighbourhood> {
        super::neighbourhood::neighbourhood(&self.conn, entity_ids, true)
    }

    fn neighbourhood_rows(&self, entity_ids: &[String]) -> Result<rhizome_core::GraphData> {
        Ok(super::neighbourhood::neighbourhood(&self.conn, entity_ids, false)?.graph)
    }

    fn walk_edges(&self, entity_ids: &[String], chunk_ids: &[String], among: bool) -> Result<rhizome_core::GraphData> {
        super::walk::walk_edges(&self.conn, entity_ids, chunk_ids, among)
    }

    fn scope_graph(&self, docs: &[String], support: &rhizome_core::DocSupport) -> Result<rhizome_core::GraphData> {
        super::scoped::scope_graph(&self.conn, docs, support)
    }

    fn chunk_links(&self, chunk_ids: &[String]) -> Result<rhizome_core::GraphData> {
        super::walk::chunk_links(&self.conn, chunk_ids)
    }

    fn chunk_titles(&self, chunk_ids: &[String]) -> Result<Vec<(String, String)>> {
        super::walk::chunk_titles(&self.conn, chunk_ids)
    }

    fn fact_rows(&self, fact_ids: &[String]) -> Result<Vec<rhizome_core::FactRow>> {
        super::walk::fact_rows(&self.conn, fact_ids)
    }

    fn entity_rows(&self) -> Result<Vec<rhizome_core::EntityRow>> {
        super::graph_read::entity_rows(&self.conn)
    }

    fn entity_degrees(&self, entity_ids: &[String]) -> Result<Vec<(String, u32)>> {
        super::neighbourhood::entity_degrees(&self.conn, entity_ids)
    }

    fn document_chunk_rows(&self, doc_id: &str) -> Result<Vec<rhizome_core::ChunkRow>> {
        super::neighbourhood::document_chunk_rows(&self.conn, doc_id)
    }

    fn entity_count(&self) -> Result<u64> {
        super::neighbourhood::entity_count(&self.conn, "entities")
    }

    fn fact_count(&self) -> Result<u64> {
        super::neighbourhood::entity_count(&self.conn, "facts")
    }

    fn chunk_count(&self) -> Result<u64> {
        super::neighbourhood::entity_count(&self.conn, "chunks")
    }

    fn communities(&self) -> Result<Vec<rhizome_core::Community>> {
        super::communities::communities(&self.conn)
    }

    fn community(&self, id: &str) -> Result<Option<rhizome_core::Community>> {
        super::communities::community(&self.conn, id)
    }

    fn communities_version(&self) -> Result<Option<u64>> {
        super::communities::version(&self.conn)
    }

    fn reports_version(&self) -> Result<Option<u64>> {
        super::communities::reports_version(&self.conn)
    }

    fn community_reports(&self) -> Result<Vec<rhizome_core::CommunityReport>> {
        super::communities::reports(&self.conn)
    }

    fn communities_of(&self, entity_ids: &[String]) -> Result<Vec<rhizome_core::Community>> {
        super::communities::communities_of(&self.conn, entity_ids)
    }

    fn community_reports_of(&self, community_ids: &[String]) -> Result<Vec<rhizome_core::CommunityReport>> {
        super::communities::reports_of(&self.conn, community_ids)
    }

    fn leaf_communities(&self, community_ids: &[String]) -> Result<Vec<String>> {
        super::communities::leaves(&self.conn, community_ids)
    }

    fn community_report_count(&self) -> Result<u64> {
        super::communities::report_count(&self.conn)
    }

    fn covariates_of(&self, entity_ids: &[String]) -> Result<Vec<rhizome_core::Covariate>> {
        super::communities::covariates_of(&self.conn, entity_ids)
    }

    fn document_batch(&self, doc_id: &str) -> Result<Option<rhizome_core::WriteBatch>> {
        super::export::document_batch(&self.conn, doc_id)
    }

    fn entity_summaries(&self) -> Result<Vec<(String, String, String)>> {
        super::export::entity_summaries(&self.conn)
    }

    fn graph_version(&self) -> Result<u64> {
        Ok(meta::get_meta(&self.conn, "graph_version")?.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    fn synonyms_dirty(&self) -> Result<bool> {
        Ok(meta::get_meta(&self.conn, "synonyms_dirty")?.as_deref() == Some("1"))
    }

    fn support_rows(&self, entity_ids: &[String], relation_ids: &[String]) -> Result<rhizome_core::SupportRows> {
        super::tags::support_rows(&self.conn, entity_ids, relation_ids)
    }

    fn tagged_documents(&self, key: &str, from: &str, to: Option<&str>) -> Result<Vec<String>> {
        super::tags::tagged(&self.conn, key, from, to)
    }

    fn document_names(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        super::tags::names(&self.conn, prefix)
    }

    fn supported_by(&self, doc_ids: &[String]) -> Result<rhizome_core::DocSupport> {
        self.support_of(doc_ids)
    }
}
