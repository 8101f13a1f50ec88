//! State without a natural graph form, in plain keys: communities and their reports,
//! a document read back as its batch (`rhizome copy`), and the LLM response cache.

use std::collections::{BTreeSet, HashSet};
use std::sync::Mutex;

use rhizome_core::llm::{ChatResponse, LlmCache};
use rhizome_core::{
    Community, CommunityReport, CovariateRecord, Error, ExtractionFailure, FactRecord, MentionRecord, RelationRecord,
    Result, VectorKind, WriteBatch,
};

use super::keys::{cmd, vec_key, COMMUNITIES, LLM, PARTIAL, REPORTS};
use super::rows::{chunk, document};
use super::support::{rows_of, Row};
use super::{FalkorStore, FalkorUrl, Value};
use crate::vectors::encode;

impl FalkorStore {
    /// All communities, by level then id (cached while the communities version holds:
    /// every replacement moves it).
    pub(crate) fn communities_cached(&self) -> Result<std::sync::Arc<Vec<Community>>> {
        if let Some(c) = self.fresh_cache()?.communities.clone() {
            return Ok(c);
        }
        let v = self.redis(&[b"GET", &self.key(COMMUNITIES)])?;
        let mut list: Vec<Community> = v.as_str().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
        list.sort_by(|a, b| (a.level, &a.id).cmp(&(b.level, &b.id)));
        let list = std::sync::Arc::new(list);
        self.fresh_cache()?.communities = Some(list.clone());
        Ok(list)
    }

    pub(crate) fn communities_impl(&self) -> Result<Vec<Community>> {
        Ok(self.communities_cached()?.as_ref().clone())
    }

    pub(crate) fn reports_impl(&self, only: Option<&[String]>) -> Result<Vec<CommunityReport>> {
        let values: Vec<Value> = match only {
            None => self.redis(&[b"HVALS", &self.key(REPORTS)])?.into_array(),
            Some([]) => Vec::new(),
            Some(ids) => {
                let mut c = vec![b"HMGET".to_vec(), self.key(REPORTS)];
                c.extend(ids.iter().map(|i| i.as_bytes().to_vec()));
                self.pipe(vec![c])?.pop().map(Value::into_array).unwrap_or_default()
            }
        };
        let mut out: Vec<CommunityReport> =
            values.iter().filter_map(|x| serde_json::from_str(&x.as_str()?).ok()).collect();
        out.sort_by(|a, b| (a.level, &a.community_id).cmp(&(b.level, &b.community_id)));
        out.dedup_by(|a, b| a.community_id == b.community_id);
        Ok(out)
    }

    pub(crate) fn replace_communities_impl(&self, list: &[Community], graph_version: u64) -> Result<()> {
        let current: HashSet<&str> = list.iter().map(|c| c.id.as_str()).collect();
        let have = self.redis(&[b"HKEYS", &self.key(REPORTS)])?.into_array();
        let mut cmds = vec![cmd([b"MULTI".to_vec()])];
        for id in have.iter().filter_map(Value::as_str).filter(|id| !current.contains(id.as_str())) {
            cmds.push(cmd([b"HDEL".to_vec(), self.key(REPORTS), id.clone().into_bytes()]));
            cmds.push(cmd([b"HDEL".to_vec(), self.key(&vec_key(VectorKind::Report)), id.into_bytes()]));
        }
        let body = serde_json::to_vec(list).map_err(|e| Error::Store(e.to_string()))?;
        cmds.push(cmd([b"SET".to_vec(), self.key(COMMUNITIES), body]));
        cmds.push(cmd([b"HINCRBY".to_vec(), self.key(super::keys::META), b"communities_gen".to_vec(), b"1".to_vec()]));
        cmds.push(cmd([
            b"HSET".to_vec(),
            self.key(super::keys::META),
            b"communities_version".to_vec(),
            graph_version.to_string().into_bytes(),
        ]));
        cmds.push(cmd([b"EXEC".to_vec()]));
        self.pipe(cmds).map(|_| ())
    }

    pub(crate) fn put_reports_impl(&self, list: &[CommunityReport], vectors: &[(String, Vec<f32>)]) -> Result<()> {
        let stored: HashSet<String> = self.communities_impl()?.into_iter().map(|c| c.id).collect();
        let mut cmds = vec![cmd([b"MULTI".to_vec()])];
        let mut kept = HashSet::new();
        for r in list.iter().filter(|r| stored.contains(&r.community_id)) {
            kept.insert(r.community_id.as_str());
            let body = serde_json::to_vec(r).map_err(|e| Error::Store(e.to_string()))?;
            cmds.push(cmd([b"HSET".to_vec(), self.key(REPORTS), r.community_id.clone().into_bytes(), body]));
        }
        for (id, v) in vectors.iter().filter(|(id, _)| kept.contains(id.as_str())) {
            cmds.push(cmd([
                b"HSET".to_vec(),
                self.key(&vec_key(VectorKind::Report)),
                id.clone().into_bytes(),
                encode(v),
            ]));
        }
        cmds.push(cmd([b"HINCRBY".to_vec(), self.key(super::keys::META), b"reports_gen".to_vec(), b"1".to_vec()]));
        cmds.push(cmd([b"EXEC".to_vec()]));
        self.pipe(cmds).map(|_| ())
    }

    pub(crate) fn document_batch_impl(&self, doc_id: &str) -> Result<Option<WriteBatch>> {
        let d = self.rop(
            &[("d", doc_id.into())],
            "MATCH (d:Document {id: $d}) RETURN d.id, d.source, d.title, d.text, d.pages, d.meta",
        )?;
        let Some(d) = d.first() else { return Ok(None) };
        let doc = document(d);
        let mut b = WriteBatch::default();
        b.chunks = self
            .rop(
                &[("d", doc_id.into())],
                "MATCH (c:Chunk {doc_id: $d}) RETURN c.id, c.doc_id, c.ordinal, c.text, c.tokens, c.char_start, \
                 c.char_end, c.page_first, c.page_last ORDER BY c.ordinal",
            )?
            .iter()
            .map(|r| chunk(r))
            .collect();
        let lr = |k: &str| cmd([b"LRANGE".to_vec(), self.key(&format!("{k}:{doc_id}")), b"0".to_vec(), b"-1".to_vec()]);
        let lists = self.pipe(vec![lr("dm"), lr("dr"), lr("df")])?;
        let ck = |c: &Option<String>| c.clone().unwrap_or_default();
        let mut m: Vec<Row<MentionRecord>> = rows_of(&lists[0]);
        m.sort_by(|a, b| {
            (ck(&a.rec.chunk_id), &a.rec.entity_id, &a.rec.name, a.seq).cmp(&(
                ck(&b.rec.chunk_id),
                &b.rec.entity_id,
                &b.rec.name,
                b.seq,
            ))
        });
        b.mentions = m.into_iter().map(|r| r.rec).collect();
        let mut r: Vec<Row<RelationRecord>> = rows_of(&lists[1]);
        r.sort_by(|a, b| {
            (ck(&a.rec.chunk_id), &a.rec.relation.id, a.seq).cmp(&(ck(&b.rec.chunk_id), &b.rec.relation.id, b.seq))
        });
        b.relations = r.into_iter().map(|r| r.rec).collect();
        let mut f: Vec<Row<FactRecord>> = rows_of(&lists[2]);
        f.sort_by(|a, b| {
            (ck(&a.rec.chunk_id), &a.rec.fact.id, a.seq).cmp(&(ck(&b.rec.chunk_id), &b.rec.fact.id, b.seq))
        });
        b.facts = f.into_iter().map(|r| r.rec).collect();
        b.similar = self
            .rop(&[("d", doc_id.into())],
                "MATCH (a:Chunk)-[s:SIMILAR_TO]->(b:Chunk) WHERE s.doc_id = $d RETURN a.id, b.id, s.score ORDER BY a.id, b.id")?
            .into_iter()
            .map(|r| (r[0].str(), r[1].str(), r[2].float() as f32))
            .collect();
        let mut covs: Vec<(i64, CovariateRecord)> = Vec::new();
        let v = self.redis(&[b"HVALS", &self.key(super::keys::COVARIATES)])?;
        for row in rows_of::<CovariateRecord>(&v) {
            if row.rec.doc_id == doc_id {
                covs.push((row.seq, row.rec));
            }
        }
        covs.sort_by(|a, b| {
            (&a.1.covariate.id, ck(&a.1.chunk_id), a.0).cmp(&(&b.1.covariate.id, ck(&b.1.chunk_id), b.0))
        });
        b.covariates = covs.into_iter().map(|(_, c)| c).collect();
        let mut fails: Vec<ExtractionFailure> = self
            .failure_rows()?
            .into_iter()
            .filter(|(_, f)| f.doc_id == doc_id)
            .map(|(chunk_id, f)| ExtractionFailure { chunk_id, doc_id: f.doc_id, error: f.error, attempts: f.attempts })
            .collect();
        fails.sort_by(|a, b| a.chunk_id.cmp(&b.chunk_id));
        b.failures = fails;
        if let Some(n) = self.redis(&[b"HGET", &self.key(PARTIAL), doc_id.as_bytes()])?.as_int() {
            b.doc_progress.push((doc_id.to_string(), Some(n.max(0) as u32)));
        }
        b.aliases = self.aliases_of(doc_id)?.into_iter().map(|n| (doc_id.to_string(), n)).collect();
        let chunk_ids: Vec<String> = b.chunks.iter().map(|c| c.id.clone()).collect();
        let entity_ids: Vec<String> =
            b.mentions.iter().map(|m| m.entity_id.clone()).collect::<BTreeSet<_>>().into_iter().collect();
        let fact_ids: Vec<String> =
            b.facts.iter().map(|f| f.fact.id.clone()).collect::<BTreeSet<_>>().into_iter().collect();
        // Sentence vectors chunk by chunk, each chunk's by id.
        let sets = self.pipe(
            chunk_ids.iter().map(|c| cmd([b"SMEMBERS".to_vec(), self.key(&super::keys::sentences_key(c))])).collect(),
        )?;
        let mut sentence_ids = Vec::new();
        for set in sets {
            let mut ids: Vec<String> = set.into_array().into_iter().filter_map(|x| x.as_str()).collect();
            ids.sort();
            sentence_ids.extend(ids);
        }
        for (kind, ids) in [
            (VectorKind::Chunk, chunk_ids),
            (VectorKind::Sentence, sentence_ids),
            (VectorKind::Entity, entity_ids),
            (VectorKind::Fact, fact_ids),
        ] {
            for (id, v) in rhizome_core::StoreRead::vectors(self, kind, &ids)? {
                b.vectors.push((kind, id, v));
            }
        }
        b.documents.push(doc);
        Ok(Some(b))
    }
}

/// The LLM response cache of a FalkorDB store: the hash `rhizome:{graph}:llm` (key ->
/// JSON response), on its own connection.
pub struct FalkorLlmCache {
    store: Mutex<FalkorStore>,
}

impl FalkorLlmCache {
    pub fn open(url: &FalkorUrl) -> Result<FalkorLlmCache> {
        Ok(FalkorLlmCache { store: Mutex::new(FalkorStore::connect(url)?) })
    }
}

impl LlmCache for FalkorLlmCache {
    fn get(&self, key: &str) -> Result<Option<ChatResponse>> {
        let s = self.store.lock().map_err(|_| Error::Store("cache lock poisoned".into()))?;
        let v = s.redis(&[b"HGET", &s.key(LLM), key.as_bytes()])?;
        Ok(v.as_str().and_then(|t| serde_json::from_str(&t).ok()))
    }

    fn put(&self, key: &str, provider: &str, response: &ChatResponse) -> Result<()> {
        let s = self.store.lock().map_err(|_| Error::Store("cache lock poisoned".into()))?;
        let _ = provider;
        let body = serde_json::to_vec(response).map_err(|e| Error::Store(e.to_string()))?;
        s.redis(&[b"HSET", &s.key(LLM), key.as_bytes(), &body]).map(|_| ())
    }
}
