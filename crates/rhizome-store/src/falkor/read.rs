//! [`StoreRead`] for [`FalkorStore`]: batched reads (`UNWIND $ids`), caches per
//! connection keyed by the graph and reports versions. Searches are in `search`, the rows'
//! decoding in `rows`.

use std::collections::HashMap;
use std::sync::Arc;

use rhizome_core::{
    ChunkWithDoc, Document, DocumentSummary, Entity, Fact, GraphData, Relation, Result, Scored, Stats, StoreRead,
    SummaryTask, VectorKind,
};

use super::keys::{PARTIAL, PENDING, REL, SUMMARIES};
use super::rows::{chunk, document, entity, fact, ids_lit, in_order, one};
use super::support::{self, Row};
use super::{FalkorStore, Lit, Value};

impl FalkorStore {
    pub(crate) fn covariate_rows(&self) -> Result<Arc<Vec<rhizome_core::CovariateRecord>>> {
        if let Some(c) = self.fresh_cache()?.covariates.clone() {
            return Ok(c);
        }
        let v = self.redis(&[b"HVALS", &self.key(super::keys::COVARIATES)])?.into_array();
        let mut rows: Vec<Row<rhizome_core::CovariateRecord>> =
            v.iter().filter_map(|x| serde_json::from_str(&x.as_str()?).ok()).collect();
        rows.sort_by_key(|r| r.seq);
        let c = Arc::new(rows.into_iter().map(|r| r.rec).collect::<Vec<_>>());
        self.fresh_cache()?.covariates = Some(c.clone());
        Ok(c)
    }

    pub(super) fn set_of(&self, key: &str, hash: bool) -> Result<std::collections::HashSet<String>> {
        let c: &[u8] = if hash { b"HKEYS" } else { b"SMEMBERS" };
        Ok(self.redis(&[c, &self.key(key)])?.into_array().iter().filter_map(Value::as_str).collect())
    }
}

impl StoreRead for FalkorStore {
    fn stats(&self) -> Result<Stats> {
        let n = |q: &str| -> Result<u64> { Ok(one(&self.ro(q)?)) };
        let mut s = Stats::default();
        s.nodes.insert("Document".into(), n("MATCH (d:Document) RETURN count(d)")?);
        s.nodes.insert("Chunk".into(), n("MATCH (c:Chunk) RETURN count(c)")?);
        s.nodes.insert("Entity".into(), n("MATCH (e:__Entity__) RETURN count(e)")?);
        s.nodes.insert("Fact".into(), n("MATCH (f:Fact) RETURN count(f)")?);
        s.edges.insert("PART_OF".into(), n("MATCH (:Chunk)-[r:PART_OF]->(:Document) RETURN count(r)")?);
        s.edges.insert("NEXT_CHUNK".into(), n("MATCH (:Chunk)-[r:NEXT_CHUNK]->(:Chunk) RETURN count(r)")?);
        s.edges.insert("MENTIONED_IN".into(), n("MATCH (:__Entity__)-[r:MENTIONED_IN]->(:Chunk) RETURN count(r)")?);
        // Relations are counted in their index (an untyped count over thousands of edge
        // types is slow in FalkorDB).
        s.edges.insert("RELATED".into(), self.redis(&[b"HLEN", &self.key(REL)])?.as_int().unwrap_or(0).max(0) as u64);
        s.edges.insert("SYNONYM".into(), n("MATCH (:__Entity__)-[r:SYNONYM]->(:__Entity__) RETURN count(r)")?);
        s.edges.insert("SIMILAR_TO".into(), n("MATCH (:Chunk)-[r:SIMILAR_TO]->(:Chunk) RETURN count(r)")?);
        let communities = self.communities_cached()?;
        s.nodes.insert("Community".into(), communities.len() as u64);
        s.nodes.insert("CommunityReport".into(), self.community_report_count()?);
        let mut cov: Vec<&str> = Vec::new();
        let covs = self.covariate_rows()?;
        for c in covs.iter() {
            cov.push(&c.covariate.id);
        }
        cov.sort();
        cov.dedup();
        s.nodes.insert("Covariate".into(), cov.len() as u64);
        s.edges.insert("IN_COMMUNITY".into(), communities.iter().map(|c| c.entity_ids.len() as u64).sum());
        Ok(s)
    }

    fn embedding_model(&self) -> Result<Option<String>> {
        self.meta_get("embedding_model")
    }

    fn meta(&self, key: &str) -> Result<Option<String>> {
        self.meta_get(key)
    }

    fn has_document(&self, doc_id: &str) -> Result<bool> {
        let found = !self.rop(&[("d", doc_id.into())], "MATCH (d:Document {id: $d}) RETURN d.id")?.is_empty();
        if !found {
            return Ok(false);
        }
        let v = self.pipe(vec![
            vec![b"HEXISTS".to_vec(), self.key(PARTIAL), doc_id.as_bytes().to_vec()],
            vec![b"SISMEMBER".to_vec(), self.key(PENDING), doc_id.as_bytes().to_vec()],
        ])?;
        Ok(v.iter().all(|x| x.as_int() == Some(0)))
    }

    fn documents(&self, search: Option<&str>, offset: usize, limit: usize) -> Result<Vec<DocumentSummary>> {
        self.document_page(search, offset, limit)
    }

    fn document_count(&self, search: Option<&str>) -> Result<u64> {
        Ok(self.all_documents(search)?.len() as u64)
    }

    fn partial_documents(&self) -> Result<Vec<(String, u32)>> {
        let v = self.redis(&[b"HGETALL", &self.key(PARTIAL)])?.into_array();
        let mut out: Vec<(String, u32)> =
            v.chunks_exact(2).filter_map(|kv| Some((kv[0].as_str()?, kv[1].as_int()?.max(0) as u32))).collect();
        out.sort();
        Ok(out)
    }

    fn find_document(&self, id_or_source: &str) -> Result<Option<Document>> {
        let rows = self.rop(&[("x", id_or_source.into())],
            "MATCH (d:Document) WHERE d.id = $x OR d.source = $x RETURN d.id, d.source, d.title, d.text, d.pages, d.meta ORDER BY d.id")?;
        // The document of that source before one of that id (as the other backends).
        let mut docs: Vec<Document> = rows.iter().map(|r| document(r)).collect();
        docs.sort_by_key(|d| d.source != id_or_source);
        if let Some(d) = docs.into_iter().next() {
            return Ok(Some(d));
        }
        match self.alias_owner(id_or_source)? {
            Some(id) => self.find_document(&id),
            None => Ok(None),
        }
    }

    fn document_with_digest(&self, digest: &str) -> Result<Option<String>> {
        self.with_digest(digest)
    }

    fn document_sources(&self, doc_id: &str) -> Result<Vec<String>> {
        self.sources_of(doc_id)
    }

    fn documents_from_source(&self, source: &str) -> Result<Vec<Document>> {
        let prefix = format!("{source}#");
        let rows = self.rop(
            &[("s", source.into()), ("p", Lit::Str(prefix))],
            "MATCH (d:Document) WHERE d.source = $s OR d.source STARTS WITH $p RETURN d.id, d.source, d.title, d.text, d.pages, d.meta",
        )?;
        let mut docs: Vec<Document> = rows.iter().map(|r| document(r)).collect();
        docs.sort_by(|a, b| (&a.source, &a.id).cmp(&(&b.source, &b.id)));
        Ok(docs)
    }

    fn chunks(&self, ids: &[String]) -> Result<Vec<ChunkWithDoc>> {
        let rows = self.rop(
            &[("ids", ids_lit(ids))],
            "UNWIND $ids AS id MATCH (c:Chunk {id: id})-[:PART_OF]->(d:Document) \
             RETURN c.id, c.doc_id, c.ordinal, c.text, c.tokens, c.char_start, c.char_end, c.page_first, \
             c.page_last, d.title, d.source, d.page_unit",
        )?;
        Ok(in_order(ids, rows, |r| ChunkWithDoc {
            chunk: chunk(r),
            doc_title: r[9].str(),
            doc_source: r[10].str(),
            doc_page_unit: r[11].str(),
        }))
    }

    fn entities(&self, ids: &[String]) -> Result<Vec<Entity>> {
        let rows = self.rop(&[("ids", ids_lit(ids))],
            "UNWIND $ids AS id MATCH (e:__Entity__ {id: id}) RETURN e.id, e.name, e.entity_type, e.description, e.importance")?;
        Ok(in_order(ids, rows, entity))
    }

    fn facts(&self, ids: &[String]) -> Result<Vec<Fact>> {
        let rows = self.rop(&[("ids", ids_lit(ids))],
            "UNWIND $ids AS id MATCH (f:Fact {id: id}) RETURN f.id, f.subject, f.predicate, f.object, f.subject_id, f.object_id")?;
        Ok(in_order(ids, rows, fact))
    }

    fn relations_of(&self, entity_ids: &[String]) -> Result<Vec<Relation>> {
        // Per entity: the relations it is the source of, then those it is the target of,
        // each in creation order (as the SQLite backend's two indexes give them).
        let mut cmds = Vec::new();
        for id in entity_ids {
            for k in ["ers", "ert"] {
                cmds.push(vec![b"ZRANGE".to_vec(), self.key(&format!("{k}:{id}")), b"0".to_vec(), b"-1".to_vec()]);
            }
        }
        let mut seen = std::collections::HashSet::new();
        let ids: Vec<String> = self
            .pipe(cmds)?
            .into_iter()
            .flat_map(Value::into_array)
            .filter_map(|v| v.as_str())
            .filter(|id| seen.insert(id.clone()))
            .collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = vec![b"HMGET".to_vec(), self.key(REL)];
        c.extend(ids.iter().map(|i| i.as_bytes().to_vec()));
        let v = self.pipe(vec![c])?.pop().map(Value::into_array).unwrap_or_default();
        Ok(v.iter().filter_map(|x| serde_json::from_str(&x.as_str()?).ok()).collect())
    }

    fn bm25(&self, query: &str, k: usize) -> Result<Vec<Scored>> {
        self.bm25_search(query, k)
    }

    fn vector_search(&self, kind: VectorKind, query: &[f32], k: usize) -> Result<Vec<Scored>> {
        self.vector_search_reranked(kind, query, k)
    }

    /// Many queries at once (entity resolution: hundreds per batch) run exactly over the
    /// cached matrix as blocked matrix products: one read instead of a round trip each.
    fn vector_search_many(&self, kind: VectorKind, queries: &[Vec<f32>], k: usize) -> Result<Vec<Vec<Scored>>> {
        Ok(self.matrix(kind)?.search_many(queries, k))
    }

    fn vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        self.stored_vectors(kind, ids)
    }

    fn missing_vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<String>> {
        let have: std::collections::HashSet<String> = self.vectors(kind, ids)?.into_iter().map(|(id, _)| id).collect();
        Ok(ids.iter().filter(|i| !have.contains(*i)).cloned().collect())
    }

    fn synonyms_dirty(&self) -> Result<bool> {
        Ok(self.meta_get("synonyms_dirty")?.as_deref() == Some("1"))
    }

    fn summary_tasks(&self, min_descriptions: usize) -> Result<Vec<SummaryTask>> {
        if min_descriptions == 0 {
            return Ok(Vec::new());
        }
        let mut ids: Vec<String> = self.ro("MATCH (e:__Entity__) RETURN e.id")?.iter().map(|r| r[0].str()).collect();
        ids.sort();
        let mut out = Vec::new();
        let sums: HashMap<String, (String, String)> = {
            let v = self.redis(&[b"HGETALL", &self.key(SUMMARIES)])?.into_array();
            v.chunks_exact(2)
                .filter_map(|kv| Some((kv[0].as_str()?, serde_json::from_str(&kv[1].as_str()?).ok()?)))
                .collect()
        };
        for part in ids.chunks(1000) {
            let refs: Vec<&str> = part.iter().map(String::as_str).collect();
            let rows = self.hvals_rows::<rhizome_core::MentionRecord>("es", &refs)?;
            let mut tasks = Vec::new();
            for (id, mut rows) in part.iter().zip(rows) {
                support::sort_mentions(&mut rows);
                let (descriptions, fingerprint) = support::descriptions(&rows);
                if descriptions.len() < min_descriptions || sums.get(id).is_some_and(|(f, _)| *f == fingerprint) {
                    continue;
                }
                tasks.push(SummaryTask { entity_id: id.clone(), name: String::new(), descriptions, fingerprint });
            }
            let names: HashMap<String, String> = self
                .entities(&tasks.iter().map(|t| t.entity_id.clone()).collect::<Vec<_>>())?
                .into_iter()
                .map(|e| (e.id, e.name))
                .collect();
            for mut t in tasks {
                t.name = names.get(&t.entity_id).cloned().unwrap_or_default();
                out.push(t);
            }
        }
        Ok(out)
    }

    fn extraction_failures(&self) -> Result<Vec<rhizome_core::ExtractionFailure>> {
        let mut rows = self.failure_rows()?;
        rows.sort_by_key(|(_, f)| f.seq);
        Ok(rows
            .into_iter()
            .map(|(chunk_id, f)| rhizome_core::ExtractionFailure {
                chunk_id,
                doc_id: f.doc_id,
                error: f.error,
                attempts: f.attempts,
            })
            .collect())
    }

    fn graph_data(&self) -> Result<GraphData> {
        self.graph_data_impl()
    }

    fn graph_version(&self) -> Result<u64> {
        Ok(self.stamp()?[0])
    }

    fn communities(&self) -> Result<Vec<rhizome_core::Community>> {
        self.communities_impl()
    }

    fn community(&self, id: &str) -> Result<Option<rhizome_core::Community>> {
        // The communities are one value, read once while the graph stays the same.
        Ok(self.communities_cached()?.iter().find(|c| c.id == id).cloned())
    }

    fn communities_version(&self) -> Result<Option<u64>> {
        Ok(self.meta_get("communities_version")?.and_then(|v| v.parse().ok()))
    }

    fn reports_version(&self) -> Result<Option<u64>> {
        Ok(self.meta_get("reports_version")?.and_then(|v| v.parse().ok()))
    }

    fn community_reports(&self) -> Result<Vec<rhizome_core::CommunityReport>> {
        self.reports_impl(None)
    }

    fn communities_of(&self, entity_ids: &[String]) -> Result<Vec<rhizome_core::Community>> {
        let want: std::collections::HashSet<&str> = entity_ids.iter().map(String::as_str).collect();
        Ok(self
            .communities_cached()?
            .iter()
            .filter(|c| c.entity_ids.iter().any(|e| want.contains(e.as_str())))
            .cloned()
            .collect())
    }

    fn community_reports_of(&self, community_ids: &[String]) -> Result<Vec<rhizome_core::CommunityReport>> {
        self.reports_impl(Some(community_ids))
    }

    fn community_report_count(&self) -> Result<u64> {
        Ok(self.redis(&[b"HLEN", &self.key(super::keys::REPORTS)])?.as_int().unwrap_or(0).max(0) as u64)
    }

    fn support_rows(&self, entity_ids: &[String], relation_ids: &[String]) -> Result<rhizome_core::SupportRows> {
        self.support_rows_of(entity_ids, relation_ids)
    }

    fn tagged_documents(&self, key: &str, from: &str, to: Option<&str>) -> Result<Vec<String>> {
        self.tagged(key, from, to)
    }

    fn document_names(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        self.names(prefix)
    }

    fn supported_by(&self, doc_ids: &[String]) -> Result<rhizome_core::DocSupport> {
        self.support_of(doc_ids)
    }

    fn covariates_of(&self, entity_ids: &[String]) -> Result<Vec<rhizome_core::Covariate>> {
        let want: std::collections::HashSet<&str> = entity_ids.iter().map(String::as_str).collect();
        let mut out: Vec<rhizome_core::Covariate> = Vec::new();
        for r in self.covariate_rows()?.iter() {
            let c = &r.covariate;
            let hit = want.contains(c.subject_id.as_str()) || c.object_id.as_deref().is_some_and(|o| want.contains(o));
            if hit && !out.iter().any(|o| o.id == c.id) {
                out.push(c.clone());
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    fn document_batch(&self, doc_id: &str) -> Result<Option<rhizome_core::WriteBatch>> {
        self.document_batch_impl(doc_id)
    }

    fn entity_summaries(&self) -> Result<Vec<(String, String, String)>> {
        let v = self.redis(&[b"HGETALL", &self.key(SUMMARIES)])?.into_array();
        let mut out: Vec<(String, String, String)> = v
            .chunks_exact(2)
            .filter_map(|kv| {
                let (fp, s): (String, String) = serde_json::from_str(&kv[1].as_str()?).ok()?;
                Some((kv[0].as_str()?, fp, s))
            })
            .collect();
        out.sort();
        Ok(out)
    }
}
