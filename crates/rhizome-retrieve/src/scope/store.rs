//! [`ScopedStore`]: the index as a question in a [`Scope`] sees it. Reads of chunks,
//! entities, facts, relations, communities, reports and claims leave out what is out of
//! scope; searches rank within the scope (exactly, over the scope's own vectors, when it
//! is small; else over the whole index, asking for more until `k` in scope are found).
//! Everything else (counts, documents, metadata) is the index's own.

use std::collections::HashSet;

use rhizome_core::community::{Community, CommunityReport, Covariate};
use rhizome_core::{
    dot, ChunkWithDoc, DocSupport, Document, DocumentSummary, Entity, ExtractionFailure, Fact, GraphData, Relation,
    Result, Scored, Stats, StoreRead, SummaryTask, SupportRows, VectorKind, WriteBatch,
};

use super::Scope;

/// A scope this small or smaller, and a twentieth or less of the index, is searched
/// exactly over its own vectors (read once per scope); a larger one through the index's
/// own search, asking for more until enough are in scope (at a twentieth, about twenty
/// times `k`).
const EXACT_UP_TO: usize = 4096;
const EXACT_SHARE: usize = 20;

/// The index seen through a [`Scope`].
pub struct ScopedStore<'a> {
    pub inner: &'a dyn StoreRead,
    pub scope: &'a Scope,
}

impl ScopedStore<'_> {
    /// The ids of `kind` in scope (None: a kind the scope does not decide).
    fn allowed(&self, kind: VectorKind) -> Result<Option<&HashSet<String>>> {
        Ok(match kind {
            VectorKind::Chunk => Some(&self.scope.chunks),
            VectorKind::Entity => Some(&self.scope.entities),
            VectorKind::Fact => Some(&self.scope.facts),
            VectorKind::Report => Some(self.scope.communities(self.inner)?),
            VectorKind::Sentence => None,
        })
    }

    /// The best `k` of a ranking that `search(n)` gives `n` at a time, in scope only: asks
    /// for enough to hold `k` at the scope's share of the index, then for more while fewer
    /// than `k` are in scope and the ranking had more to give.
    fn within(
        &self,
        allowed: &HashSet<String>,
        k: usize,
        total: usize,
        search: &dyn Fn(usize) -> Result<Vec<Scored>>,
    ) -> Result<Vec<Scored>> {
        let mut n = first_ask(k, allowed.len(), total);
        loop {
            let got = search(n)?;
            let short = got.len() < n;
            let kept: Vec<Scored> = got.into_iter().filter(|s| allowed.contains(&s.id)).take(k).collect();
            if kept.len() >= k || short || n >= total {
                return Ok(kept);
            }
            n = n.saturating_mul(4).min(total.max(1));
        }
    }

    /// The best `k` of the scope's own vectors of `kind` for `query`, by cosine.
    fn exact(&self, kind: VectorKind, allowed: &HashSet<String>, query: &[f32], k: usize) -> Result<Vec<Scored>> {
        let vectors = self.scope.vectors_of(self.inner, kind, allowed)?;
        let mut scored: Vec<Scored> =
            vectors.iter().map(|(id, v)| Scored { score: dot(query, v), id: id.clone() }).collect();
        scored.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        scored.truncate(k);
        Ok(scored)
    }

    /// How many nodes of `kind` the whole index holds.
    fn count(&self, kind: VectorKind) -> Result<usize> {
        let label = match kind {
            VectorKind::Chunk => "Chunk",
            VectorKind::Entity => "Entity",
            VectorKind::Fact => "Fact",
            VectorKind::Report => "CommunityReport",
            VectorKind::Sentence => return Ok(usize::MAX),
        };
        Ok(self.scope.total(self.inner, label)? as usize)
    }
}

/// Those of `ids` in `scope`, in the order asked.
fn kept(ids: &[String], scope: &HashSet<String>) -> Vec<String> {
    ids.iter().filter(|i| scope.contains(*i)).cloned().collect()
}

/// How many of a ranking to ask for first: enough for `k` in scope at the scope's share
/// (`allowed` of `total`) of the index, twice over.
fn first_ask(k: usize, allowed: usize, total: usize) -> usize {
    let share = total.max(1).div_ceil(allowed.max(1));
    k.saturating_mul(share).saturating_mul(2).max(64).min(total.max(64))
}

impl StoreRead for ScopedStore<'_> {
    fn stats(&self) -> Result<Stats> {
        self.inner.stats()
    }
    fn embedding_model(&self) -> Result<Option<String>> {
        self.inner.embedding_model()
    }
    fn meta(&self, key: &str) -> Result<Option<String>> {
        self.inner.meta(key)
    }
    fn has_document(&self, doc_id: &str) -> Result<bool> {
        self.inner.has_document(doc_id)
    }
    fn documents(&self, search: Option<&str>, offset: usize, limit: usize) -> Result<Vec<DocumentSummary>> {
        self.inner.documents(search, offset, limit)
    }
    fn document_count(&self, search: Option<&str>) -> Result<u64> {
        self.inner.document_count(search)
    }
    fn partial_documents(&self) -> Result<Vec<(String, u32)>> {
        self.inner.partial_documents()
    }
    fn find_document(&self, id_or_source: &str) -> Result<Option<Document>> {
        self.inner.find_document(id_or_source)
    }
    fn document_with_digest(&self, digest: &str) -> Result<Option<String>> {
        self.inner.document_with_digest(digest)
    }
    fn document_sources(&self, doc_id: &str) -> Result<Vec<String>> {
        self.inner.document_sources(doc_id)
    }
    fn documents_from_source(&self, source: &str) -> Result<Vec<Document>> {
        self.inner.documents_from_source(source)
    }
    fn chunks(&self, ids: &[String]) -> Result<Vec<ChunkWithDoc>> {
        let ids = kept(ids, &self.scope.chunks);
        self.inner.chunks(&ids)
    }
    fn entities(&self, ids: &[String]) -> Result<Vec<Entity>> {
        let ids = kept(ids, &self.scope.entities);
        let mut found = self.inner.entities(&ids)?;
        let views = || self.scope.entity_views.lock().unwrap_or_else(|p| p.into_inner());
        let unread: Vec<String> = {
            let seen = views();
            found.iter().filter(|e| !seen.contains_key(&e.id)).map(|e| e.id.clone()).collect()
        };
        if !unread.is_empty() {
            // Read without the lock: another question in this scope may read meanwhile.
            let (rows, _) = self.inner.support_rows(&unread, &[])?;
            views().extend(super::views::entities(rows, &self.scope.docs));
        }
        let views = views();
        for e in &mut found {
            if let Some(Some(d)) = views.get(&e.id) {
                e.description = d.clone();
            }
        }
        Ok(found)
    }
    fn facts(&self, ids: &[String]) -> Result<Vec<Fact>> {
        let ids = kept(ids, &self.scope.facts);
        self.inner.facts(&ids)
    }
    fn relations_of(&self, entity_ids: &[String]) -> Result<Vec<Relation>> {
        let ids = kept(entity_ids, &self.scope.entities);
        let mut found: Vec<Relation> =
            self.inner.relations_of(&ids)?.into_iter().filter(|r| self.scope.relations.contains(&r.id)).collect();
        for r in &mut found {
            if let Some((w, d)) = self.scope.relation_views.get(&r.id) {
                r.weight = *w;
                r.description = d.clone();
            }
        }
        Ok(found)
    }
    fn support_rows(&self, entity_ids: &[String], relation_ids: &[String]) -> Result<SupportRows> {
        let (mut m, mut r) = self.inner.support_rows(entity_ids, relation_ids)?;
        m.retain(|x| self.scope.docs.contains(&x.doc_id));
        r.retain(|x| self.scope.docs.contains(&x.doc_id));
        Ok((m, r))
    }
    fn tagged_documents(&self, key: &str, from: &str, to: Option<&str>) -> Result<Vec<String>> {
        self.inner.tagged_documents(key, from, to)
    }
    fn document_names(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        self.inner.document_names(prefix)
    }
    fn supported_by(&self, doc_ids: &[String]) -> Result<DocSupport> {
        let docs: Vec<String> = doc_ids.iter().filter(|d| self.scope.docs.contains(*d)).cloned().collect();
        let s = self.inner.supported_by(&docs)?;
        let (e, r, f) = (&self.scope.entities, &self.scope.relations, &self.scope.facts);
        Ok(DocSupport {
            entities: s.entities.into_iter().filter(|x| e.contains(x)).collect(),
            relations: s.relations.into_iter().filter(|x| r.contains(x)).collect(),
            facts: s.facts.into_iter().filter(|x| f.contains(x)).collect(),
            claims: s.claims.into_iter().filter(|x| self.scope.claims.contains(x)).collect(),
        })
    }
    fn bm25(&self, query: &str, k: usize) -> Result<Vec<Scored>> {
        let total = self.count(VectorKind::Chunk)?;
        self.within(&self.scope.chunks, k, total, &|n| self.inner.bm25(query, n))
    }
    fn vector_search(&self, kind: VectorKind, query: &[f32], k: usize) -> Result<Vec<Scored>> {
        let Some(allowed) = self.allowed(kind)? else { return self.inner.vector_search(kind, query, k) };
        let total = self.count(kind)?;
        if allowed.len() <= EXACT_UP_TO && allowed.len().saturating_mul(EXACT_SHARE) <= total {
            return self.exact(kind, allowed, query, k);
        }
        self.within(allowed, k, total, &|n| self.inner.vector_search(kind, query, n))
    }
    fn vector_search_many(&self, kind: VectorKind, queries: &[Vec<f32>], k: usize) -> Result<Vec<Vec<Scored>>> {
        let Some(allowed) = self.allowed(kind)? else { return self.inner.vector_search_many(kind, queries, k) };
        let total = self.count(kind)?;
        if allowed.len() <= EXACT_UP_TO && allowed.len().saturating_mul(EXACT_SHARE) <= total {
            return queries.iter().map(|q| self.exact(kind, allowed, q, k)).collect();
        }
        // One pass of the index's own batched search for every query; a query that
        // finds fewer than `k` in scope asks again on its own.
        let n = first_ask(k, allowed.len(), total);
        let found = self.inner.vector_search_many(kind, queries, n)?;
        found
            .into_iter()
            .zip(queries)
            .map(|(got, q)| {
                let short = got.len() < n;
                let kept: Vec<Scored> = got.into_iter().filter(|s| allowed.contains(&s.id)).take(k).collect();
                if kept.len() >= k || short || n >= total {
                    Ok(kept)
                } else {
                    self.within(allowed, k, total, &|m| self.inner.vector_search(kind, q, m))
                }
            })
            .collect()
    }
    fn vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        self.inner.vectors(kind, ids)
    }
    fn missing_vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<String>> {
        self.inner.missing_vectors(kind, ids)
    }
    fn synonyms_dirty(&self) -> Result<bool> {
        self.inner.synonyms_dirty()
    }
    fn summary_tasks(&self, min_descriptions: usize) -> Result<Vec<SummaryTask>> {
        self.inner.summary_tasks(min_descriptions)
    }
    fn extraction_failures(&self) -> Result<Vec<ExtractionFailure>> {
        self.inner.extraction_failures()
    }
    fn graph_data(&self) -> Result<GraphData> {
        self.scope.graph_data(self.inner)
    }
    fn graph_version(&self) -> Result<u64> {
        Ok(self.scope.version)
    }
    fn freshness(&self) -> Result<(u64, u64)> {
        Ok((self.scope.version, self.inner.freshness()?.1))
    }
    fn communities(&self) -> Result<Vec<Community>> {
        let ok = self.scope.communities(self.inner)?;
        let all = self.inner.communities()?.into_iter();
        Ok(all.filter(|c| ok.contains(&c.id)).map(|c| self.scope.restrict(c)).collect())
    }
    fn community(&self, id: &str) -> Result<Option<Community>> {
        let ok = self.scope.communities(self.inner)?;
        Ok(if ok.contains(id) { self.inner.community(id)?.map(|c| self.scope.restrict(c)) } else { None })
    }
    fn communities_version(&self) -> Result<Option<u64>> {
        self.inner.communities_version()
    }
    fn reports_version(&self) -> Result<Option<u64>> {
        self.inner.reports_version()
    }
    fn community_reports(&self) -> Result<Vec<CommunityReport>> {
        Ok(self.scope.reports(self)?.to_vec())
    }
    fn communities_of(&self, entity_ids: &[String]) -> Result<Vec<Community>> {
        let ids = kept(entity_ids, &self.scope.entities);
        Ok(self.inner.communities_of(&ids)?.into_iter().map(|c| self.scope.restrict(c)).collect())
    }
    fn community_reports_of(&self, community_ids: &[String]) -> Result<Vec<CommunityReport>> {
        let wanted: HashSet<&str> = community_ids.iter().map(String::as_str).collect();
        let all = self.scope.reports(self)?;
        let mut out: Vec<CommunityReport> =
            all.iter().filter(|r| wanted.contains(r.community_id.as_str())).cloned().collect();
        // In the order asked, as the index's own read gives them.
        let at: std::collections::HashMap<&str, usize> =
            community_ids.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
        out.sort_by_key(|r| at.get(r.community_id.as_str()).copied().unwrap_or(usize::MAX));
        Ok(out)
    }
    fn community_report_count(&self) -> Result<u64> {
        if let Some(n) = self.scope.report_count.get() {
            return Ok(*n);
        }
        let n = self.community_reports()?.len() as u64;
        Ok(*self.scope.report_count.get_or_init(|| n))
    }
    fn covariates_of(&self, entity_ids: &[String]) -> Result<Vec<Covariate>> {
        let e = &self.scope.entities;
        let ids = kept(entity_ids, e);
        Ok(self
            .inner
            .covariates_of(&ids)?
            .into_iter()
            .filter(|c| self.scope.claims.contains(&c.id))
            .filter(|c| e.contains(&c.subject_id) && c.object_id.as_ref().is_none_or(|o| e.contains(o)))
            .collect())
    }
    fn document_batch(&self, doc_id: &str) -> Result<Option<WriteBatch>> {
        self.inner.document_batch(doc_id)
    }
    fn entity_summaries(&self) -> Result<Vec<(String, String, String)>> {
        self.inner.entity_summaries()
    }
}
