//! Search in the FalkorDB store: the exact vectors and BM25 document lengths (cached per
//! connection while the versions hold), vector search on HNSW candidates re-ranked exactly,
//! and BM25 over Rhizome's own postings.

use std::sync::Arc;

use rhizome_core::{Result, Scored, VectorKind};

use super::keys::{vec_key, BM25_ID, BM25_LEN};
use super::{FalkorStore, Lit, Value};
use crate::vectors::{decode, VectorMatrix};

impl FalkorStore {
    /// All vectors of `kind`, ordered by id (cached while the versions hold).
    pub(crate) fn matrix(&self, kind: VectorKind) -> Result<Arc<VectorMatrix>> {
        if let Some(m) = self.fresh_cache()?.matrices.get(&kind) {
            return Ok(m.clone());
        }
        let v = self.redis(&[b"HGETALL", &self.key(&vec_key(kind))])?.into_array();
        let mut rows: Vec<(String, Vec<f32>)> = v
            .chunks_exact(2)
            .filter_map(|kv| match &kv[1] {
                Value::Bytes(b) => Some((kv[0].as_str()?, decode(b))),
                _ => None,
            })
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        let mut m = VectorMatrix::default();
        for (id, v) in rows {
            m.push(id, &v);
        }
        let m = Arc::new(m);
        self.fresh_cache()?.matrices.insert(kind, m.clone());
        Ok(m)
    }

    /// BM25 document lengths (cached while the versions hold).
    pub(super) fn lengths(&self) -> Result<Arc<crate::bm25::DocLengths>> {
        if let Some(l) = self.fresh_cache()?.bm25.clone() {
            return Ok(l);
        }
        let v = self.redis(&[b"HGETALL", &self.key(BM25_LEN)])?.into_array();
        let len = v.chunks_exact(2).filter_map(|kv| Some((kv[0].as_int()?, kv[1].as_int()?.max(0) as u32))).collect();
        let l = Arc::new(crate::bm25::DocLengths::from_map(len));
        self.fresh_cache()?.bm25 = Some(l.clone());
        Ok(l)
    }

    /// BM25 with the SQLite backend's term rules and scoring, over the postings kept in keys.
    pub(super) fn bm25_search(&self, query: &str, k: usize) -> Result<Vec<Scored>> {
        let lengths = self.lengths()?;
        let terms = crate::bm25::query_terms(query);
        let replies =
            self.pipe(terms.iter().map(|t| vec![b"HGETALL".to_vec(), self.key(&format!("bm25:t:{t}"))]).collect())?;
        let postings: Vec<Vec<(i64, u32)>> = replies
            .into_iter()
            .map(|v| {
                v.into_array()
                    .chunks_exact(2)
                    .filter_map(|kv| Some((kv[0].as_int()?, kv[1].as_int()?.max(0) as u32)))
                    .collect()
            })
            .collect();
        let hits = crate::bm25::rank(&lengths, &postings, k);
        if hits.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = vec![b"HMGET".to_vec(), self.key(BM25_ID)];
        c.extend(hits.iter().map(|(q, _)| q.to_string().into_bytes()));
        let ids = self.pipe(vec![c])?.pop().map(Value::into_array).unwrap_or_default();
        Ok(hits.into_iter().zip(ids).filter_map(|((_, score), id)| Some(Scored { id: id.as_str()?, score })).collect())
    }

    /// The `k` nearest of `kind`: HNSW candidates re-ranked exactly, or an exact search.
    pub(super) fn vector_search_reranked(&self, kind: VectorKind, query: &[f32], k: usize) -> Result<Vec<Scored>> {
        let m = self.matrix(kind)?;
        let label = match kind {
            VectorKind::Chunk => "Chunk",
            VectorKind::Entity => "__Entity__",
            VectorKind::Fact => "Fact",
            VectorKind::Report | VectorKind::Sentence => return Ok(m.search(query, k)),
        };
        // Small sets, or a query of another dimension: exact search is cheaper (and exact).
        let want = (k * 4).max(k + 64);
        if k == 0 || query.len() != m.dim || want >= m.len() {
            return Ok(m.search(query, k));
        }
        // HNSW candidates, re-ranked exactly by cosine with the stored vectors (ties by id),
        // so that results equal the exact search whenever the candidates hold the true top k.
        let rows = self.rop(
            &[("q", Lit::Floats(query.to_vec()))],
            &format!(
                "CALL db.idx.vector.queryNodes('{label}', 'embedding', {want}, vecf32($q)) YIELD node RETURN node.id"
            ),
        )?;
        let mut scored: Vec<(f32, usize)> = rows
            .iter()
            .filter_map(|r| m.ids.binary_search(&r[0].str()).ok())
            .map(|i| (rhizome_core::dot(m.row(i), query), i))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.dedup_by(|a, b| a.1 == b.1);
        scored.truncate(k);
        Ok(scored.into_iter().map(|(s, i)| Scored { id: m.ids[i].clone(), score: s }).collect())
    }

    /// The stored vectors of `ids` (those that have one), in the order asked.
    pub(super) fn stored_vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = vec![b"HMGET".to_vec(), self.key(&vec_key(kind))];
        c.extend(ids.iter().map(|i| i.as_bytes().to_vec()));
        let v = self.pipe(vec![c])?.pop().map(Value::into_array).unwrap_or_default();
        Ok(ids
            .iter()
            .zip(v)
            .filter_map(|(id, x)| match x {
                Value::Bytes(b) => Some((id.clone(), decode(&b))),
                _ => None,
            })
            .collect())
    }
}
