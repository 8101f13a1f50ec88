//! Chunk discovery by five paths and the ranking of the candidates.
//!
//! Paths: full text (store BM25 over the question), vector (chunk vectors), MENTIONED_IN
//! from the discovered entities, entity -> neighbour -> chunk, and substring (keywords
//! found verbatim in a candidate's title or text; the store has no substring index, so
//! this path scores the candidates of the other four).
//!
//! Ranking: every candidate gets its exact cosine with the question from one search over
//! the stored chunk vectors (no re-embedding: reading the stored vectors costs about a
//! millisecond where embedding 45 chunk texts costs hundreds), plus weighted evidence of
//! the other paths, each normalised to 0..1:
//! `cos + 0.1 bm25 + 0.1 mentions + 0.1 neighbours + 0.05 substring` (BM25 with basic's
//! weight; on the MuSiQue sample the result is flat for graph weights 0.05..0.15).

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use rhizome_core::{ChunkWithDoc, Result, Scored, VectorKind};

use super::entities::{walk, Found, Keyword};
use crate::{ms, Graph, MultipathConfig, QueryEnv, Retrieval};

/// The candidate paths, in the order of [`Ranked::features`] (after the cosine).
pub(super) const CHUNK_PATHS: [&str; 5] = ["vector", "fulltext", "mentioned_in", "neighbour", "substring"];

const W_BM25: f32 = 0.1;
const W_MENTION: f32 = 0.1;
const W_NEIGHBOUR: f32 = 0.1;
const W_SUBSTRING: f32 = 0.05;
/// Most chunk vectors scored exactly per query; beyond, a chunk gets the lowest cosine seen.
const COSINE_CAP: usize = 20_000;

/// A ranked chunk: its number, final score, cosine and path evidence.
#[derive(Debug, Clone)]
pub(super) struct Ranked {
    pub chunk: u32,
    pub score: f32,
    pub cosine: f32,
    /// bm25, mentioned_in, neighbour, substring (each 0..1).
    pub features: [f32; 4],
}

/// What the chunk paths find without the graph: the stored chunk vectors nearest the
/// question (every chunk's up to [`COSINE_CAP`], for exact cosines) and full text.
pub(super) struct Searched {
    pub dense: Vec<Scored>,
    pub sparse: Vec<Scored>,
}

/// The vector and full-text searches over the index's `n` chunks.
pub(super) fn search(env: &QueryEnv, question: &str, q: &[f32], n: usize, out: &mut Retrieval) -> Result<Searched> {
    let cfg = env.config.section::<MultipathConfig>();
    let cands = env.config.retrieval.candidates.max(cfg.chunk_top_k);
    let t = Instant::now();
    let dense = env.store.vector_search(VectorKind::Chunk, q, n.min(COSINE_CAP))?;
    out.timings_ms.insert("chunk_vector".into(), ms(t));
    let t = Instant::now();
    let sparse = env.store.bm25(question, cands)?;
    out.timings_ms.insert("chunk_fulltext".into(), ms(t));
    Ok(Searched { dense, sparse })
}

/// Rank candidate chunks of an index of `n` chunks; returns the best `cfg.chunk_top_k`
/// with their stored records.
#[allow(clippy::too_many_arguments)]
pub(super) fn rank(
    env: &QueryEnv,
    g: &Graph,
    n: usize,
    searched: &Searched,
    kws: &[Keyword],
    found: &[Found],
    out: &mut Retrieval,
) -> Result<(Vec<Ranked>, HashMap<u32, ChunkWithDoc>)> {
    let cfg = env.config.section::<MultipathConfig>();
    let cands = env.config.retrieval.candidates.max(cfg.chunk_top_k);

    let dense = &searched.dense;
    let mut cosine: HashMap<u32, f32> = HashMap::with_capacity(dense.len());
    let mut vector_path = Vec::new();
    for s in dense {
        if let Some(c) = g.chunk(&s.id) {
            cosine.insert(c, s.score);
            if vector_path.len() < cands {
                vector_path.push(c);
            }
        }
    }
    let floor = dense.last().map(|s| s.score).unwrap_or(0.0);

    let sparse = &searched.sparse;
    let max_bm25 = sparse.iter().map(|s| s.score).fold(0.0f32, f32::max);
    let bm25: HashMap<u32, f32> = sparse
        .iter()
        .filter_map(|s| g.chunk(&s.id).map(|c| (c, if max_bm25 > 0.0 { s.score / max_bm25 } else { 0.0 })))
        .collect();

    let t = Instant::now();
    let idf = |e: u32| idf_share(g.entity_chunks[e as usize].len(), n);
    let mut mention: HashMap<u32, f32> = HashMap::new();
    for f in found {
        let w = f.score * idf(f.entity);
        for &(c, _) in &g.entity_chunks[f.entity as usize] {
            *mention.entry(c).or_default() += w;
        }
    }
    let scores: HashMap<u32, f32> = found.iter().map(|f| (f.entity, f.score)).collect();
    let mut neighbour: HashMap<u32, f32> = HashMap::new();
    for f in found.iter().take(cfg.expand_entities) {
        for nb in walk(g, f.entity, &scores) {
            if nb.entity == f.entity {
                continue;
            }
            let w = f.score * idf(nb.entity);
            for &(c, _) in &g.entity_chunks[nb.entity as usize] {
                *neighbour.entry(c).or_default() += w;
            }
        }
    }
    let mention = normalised_top(mention, cands);
    let neighbour = normalised_top(neighbour, cands);
    out.timings_ms.insert("chunk_graph".into(), ms(t));

    // Stage 1: every candidate of the four discovery paths, without texts.
    let t = Instant::now();
    let mut cand: HashSet<u32> = vector_path.iter().copied().collect();
    cand.extend(bm25.keys().copied());
    cand.extend(mention.keys().copied());
    cand.extend(neighbour.keys().copied());
    let counts = [vector_path.len(), bm25.len(), mention.len(), neighbour.len()];
    // The weights are on MiniLM's cosine scale (see `Embedder::cosine_scale`).
    let scale = env.embedder.cosine_scale();
    let mut ranked: Vec<Ranked> = cand
        .into_iter()
        .map(|c| {
            let cos = cosine.get(&c).copied().unwrap_or(floor);
            let get = |m: &HashMap<u32, f32>| m.get(&c).copied().unwrap_or(0.0);
            let features = [get(&bm25), get(&mention), get(&neighbour), 0.0];
            let score = cos + scale * (W_BM25 * features[0] + W_MENTION * features[1] + W_NEIGHBOUR * features[2]);
            Ranked { chunk: c, score, cosine: cos, features }
        })
        .collect();
    sort(&mut ranked, g);
    // Stage 2: the best few get their texts read and the substring evidence.
    ranked.truncate((3 * cfg.chunk_top_k).max(env.config.retrieval.top_k));
    let ids: Vec<String> = ranked.iter().map(|r| g.chunk_ids[r.chunk as usize].clone()).collect();
    let records: HashMap<u32, ChunkWithDoc> =
        env.store.chunks(&ids)?.into_iter().filter_map(|c| g.chunk(&c.chunk.id).map(|i| (i, c))).collect();
    let total: f32 = kws.iter().map(|k| k.weight).sum();
    let lowered: Vec<(String, f32)> = kws.iter().map(|k| (k.text.to_lowercase(), k.weight)).collect();
    let mut substring_hits = 0;
    for r in &mut ranked {
        let Some(rec) = records.get(&r.chunk) else { continue };
        let hay = format!("{}\n{}", rec.doc_title, rec.chunk.text).to_lowercase();
        let got: f32 = lowered.iter().filter(|(k, _)| hay.contains(k.as_str())).map(|(_, w)| w).sum();
        if total > 0.0 && got > 0.0 {
            r.features[3] = got / total;
            r.score += scale * W_SUBSTRING * r.features[3];
            substring_hits += 1;
        }
    }
    sort(&mut ranked, g);
    ranked.truncate(cfg.chunk_top_k);
    out.timings_ms.insert("chunk_rank".into(), ms(t));
    let mut paths = serde_json::Map::new();
    for (name, count) in CHUNK_PATHS.iter().zip(counts.iter().chain(std::iter::once(&substring_hits))) {
        paths.insert(name.to_string(), (*count).into());
    }
    out.extra.insert("chunk_paths".into(), paths.into());
    Ok((ranked, records))
}

/// Best first; ties by chunk id.
fn sort(v: &mut [Ranked], g: &Graph) {
    v.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| g.chunk_ids[a.chunk as usize].cmp(&g.chunk_ids[b.chunk as usize]))
    });
}

/// How specific an entity mentioned in `df` of `n` chunks is: `ln(n / df) / ln(n)`,
/// 1 for an entity of one chunk, 0 for one in every chunk.
pub(crate) fn idf_share(df: usize, n: usize) -> f32 {
    if df == 0 || n <= 1 {
        return 1.0;
    }
    ((n as f32 / df as f32).ln() / (n as f32).ln()).clamp(0.0, 1.0)
}

/// The best `k` of `m` (ties by chunk number), divided by the best score.
fn normalised_top(m: HashMap<u32, f32>, k: usize) -> HashMap<u32, f32> {
    let v = super::names::top(m.into_iter().filter(|x| x.1 > 0.0).collect(), k);
    let max = v.first().map(|x| x.1).unwrap_or(1.0);
    v.into_iter().map(|(c, s)| (c, s / max)).collect()
}
