//! `basic`: dense vector search and BM25 over chunks, fused by reciprocal rank.

use std::collections::HashMap;
use std::time::Instant;

use rhizome_core::{Result, Scored, StoreRead, VectorKind};

use crate::{embed_question, timed};
use crate::{ms, Context, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

pub struct Basic;

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Basic,
    description: "Dense + BM25 chunk retrieval, fused",
    reads_graph: false,
    settings: &[],
    retriever: |_| Box::new(Basic),
    prompts: &[],
}];

impl Retriever for Basic {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        let cfg = &env.config.retrieval;
        let mut out = Retrieval::default();
        let q = embed_question(env, question, &mut out.timings_ms)?;

        let dense =
            timed(&mut out.timings_ms, "dense", || env.store.vector_search(VectorKind::Chunk, &q, cfg.candidates))?;
        let sparse = timed(&mut out.timings_ms, "bm25", || env.store.bm25(question, cfg.candidates))?;

        let t = Instant::now();
        let fused = match cfg.fusion.as_str() {
            "rrf" => rrf(&dense, &sparse, cfg.dense_weight, cfg.bm25_weight, cfg.rrf_k),
            _ => score_fusion(&dense, &sparse, cfg.dense_weight, cfg.bm25_weight),
        };
        let mut ranked: Vec<Scored> = fused.into_iter().map(|(id, score)| Scored { id, score }).collect();
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        ranked.truncate(cfg.top_k);
        out.contexts = chunk_contexts(env.store, &ranked)?;
        out.timings_ms.insert("fuse".into(), ms(t));
        Ok(out)
    }
}

/// The chunks of `ranked`, in its order and with its scores, as contexts (a chunk the
/// index no longer holds is skipped).
pub(crate) fn chunk_contexts(store: &dyn StoreRead, ranked: &[Scored]) -> Result<Vec<Context>> {
    let ids: Vec<String> = ranked.iter().map(|s| s.id.clone()).collect();
    let scores: HashMap<&str, f32> = ranked.iter().map(|s| (s.id.as_str(), s.score)).collect();
    let chunks = store.chunks(&ids)?;
    Ok(chunks
        .into_iter()
        .map(|c| {
            let score = scores[c.chunk.id.as_str()];
            Context::of_chunk(c, score)
        })
        .collect())
}

/// Weighted reciprocal-rank fusion.
pub(crate) fn rrf(dense: &[Scored], sparse: &[Scored], wd: f32, ws: f32, k: f32) -> HashMap<String, f32> {
    let mut fused: HashMap<String, f32> = HashMap::new();
    for (list, w) in [(dense, wd), (sparse, ws)] {
        for (rank, s) in list.iter().enumerate() {
            *fused.entry(s.id.clone()).or_default() += w / (k + rank as f32 + 1.0);
        }
    }
    fused
}

/// Score fusion: `wd * cosine + ws * bm25 / max(bm25)`. A candidate missing from the dense
/// list gets the lowest dense score seen (it ranked below every dense candidate).
pub(crate) fn score_fusion(dense: &[Scored], sparse: &[Scored], wd: f32, ws: f32) -> HashMap<String, f32> {
    let floor = dense.iter().map(|s| s.score).fold(f32::INFINITY, f32::min);
    let floor = if floor.is_finite() { floor } else { 0.0 };
    let max_bm25 = sparse.iter().map(|s| s.score).fold(0.0f32, f32::max);
    let mut fused: HashMap<String, f32> = HashMap::new();
    for s in dense {
        fused.insert(s.id.clone(), wd * s.score);
    }
    for s in sparse {
        let e = fused.entry(s.id.clone()).or_insert(wd * floor);
        if max_bm25 > 0.0 {
            *e += ws * s.score / max_bm25;
        }
    }
    fused
}
