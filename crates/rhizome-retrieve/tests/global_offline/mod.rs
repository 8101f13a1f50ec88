//! `global` without an LLM reads the report vectors nearest the question, never all of
//! them, and ranks the 100 nearest at the level as a ranking of the whole list would: over
//! a hierarchy of 636 reports (leaves at each level, ratings spread over 0-10), at several
//! levels, minimum ratings and numbers of reports shown.

use rhizome_core::community::reports_at_level;
use rhizome_core::embed::{dot, WordHashEmbedder as WordEmbedder};
use rhizome_core::*;
use rhizome_retrieve::{retriever, ContextKind, GlobalConfig, GraphCache, Method, QueryEnv};
use rhizome_store::SqliteStore;

use crate::common;

const WORDS: [&str; 24] = [
    "radium",
    "polonium",
    "physics",
    "chemistry",
    "Paris",
    "Warsaw",
    "Sorbonne",
    "Nobel",
    "prize",
    "laboratory",
    "isotope",
    "uranium",
    "lecture",
    "student",
    "husband",
    "daughter",
    "hospital",
    "war",
    "x-ray",
    "mobile",
    "institute",
    "funding",
    "America",
    "gram",
];

/// A word of [`WORDS`] picked by a small linear congruential sequence.
fn pick(seed: &mut u64) -> &'static str {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    WORDS[(*seed >> 33) as usize % WORDS.len()]
}

/// 636 communities: 60 at level 0, each split into 4 at level 1 except every fifth, and
/// each of those into 4 at level 2 except every third; reports with six words each.
fn store(dir: &std::path::Path) -> (SqliteStore, Vec<Community>, Vec<CommunityReport>) {
    let emb = WordEmbedder;
    let mut s = common::open_store(dir, &emb);
    let mut communities: Vec<Community> = Vec::new();
    let mut seed = 7u64;
    let next = |level: u32, parent: Option<String>, n: usize| -> Community {
        let id = format!("com_{level}_{n:03}");
        Community {
            id: id.clone(),
            level,
            parent,
            children: vec![],
            title: id,
            entity_ids: vec![],
            fingerprint: format!("fp{n}"),
        }
    };
    let mut n = 0;
    for i in 0..60 {
        let mut top = next(0, None, n);
        n += 1;
        if i % 5 != 0 {
            for j in 0..4 {
                let mut mid = next(1, Some(top.id.clone()), n);
                n += 1;
                if j % 3 != 0 {
                    for _ in 0..4 {
                        let leaf = next(2, Some(mid.id.clone()), n);
                        n += 1;
                        mid.children.push(leaf.id.clone());
                        communities.push(leaf);
                    }
                }
                top.children.push(mid.id.clone());
                communities.push(mid);
            }
        }
        communities.push(top);
    }
    let (mut reports, mut vectors) = (Vec::new(), Vec::new());
    for (i, c) in communities.iter().enumerate() {
        let words: Vec<&str> = (0..6).map(|_| pick(&mut seed)).collect();
        let r = CommunityReport {
            community_id: c.id.clone(),
            level: c.level,
            title: words[..2].join(" "),
            summary: words.join(" "),
            findings: vec![],
            rating: (i * 37 % 101) as f32 / 10.0,
            rating_explanation: String::new(),
            fingerprint: c.fingerprint.clone(),
            kind: ReportKind::Extractive,
        };
        vectors.push((c.id.clone(), emb.embed(&[r.search_text()], EmbedKind::Passage).unwrap().remove(0)));
        reports.push(r);
    }
    let version = s.graph_version().unwrap();
    s.replace_communities(&communities, version).unwrap();
    s.put_reports(&reports, &vectors).unwrap();
    (s, communities, reports)
}

/// The `k` best (community id, score) of the 100 reports at `level` rated `min_rating` or
/// more nearest `q` (or `4 k`, if more): 0.7 x cosine min-max normalised among them +
/// 0.3 x rating / 10.
fn whole_ranking(
    communities: &[Community],
    reports: &[CommunityReport],
    q: &[f32],
    level: u32,
    min_rating: f32,
    k: usize,
) -> Vec<(String, f32)> {
    let emb = WordEmbedder;
    let mut at: Vec<(&CommunityReport, f32)> = reports_at_level(communities, reports, level)
        .into_iter()
        .filter(|r| r.rating >= min_rating)
        .map(|r| (r, dot(q, &emb.embed(&[r.search_text()], EmbedKind::Passage).unwrap()[0])))
        .collect();
    at.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.community_id.cmp(&b.0.community_id)));
    at.truncate(100.max(4 * k));
    let (lo, hi) = at.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), a| (l.min(a.1), h.max(a.1)));
    let mut scored: Vec<(String, f32)> = at
        .iter()
        .map(|(r, cos)| {
            let rel = if hi > lo { (cos - lo) / (hi - lo) } else { 1.0 };
            (r.community_id.clone(), 0.7 * rel + 0.3 * (r.rating / 10.0).clamp(0.0, 1.0))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(k);
    scored
}

#[test]
fn offline_global_reads_the_nearest_reports_and_ranks_them_as_the_whole_list_would() {
    let tmp = tempfile::tempdir().unwrap();
    let (s, communities, reports) = store(tmp.path());
    let graph = GraphCache::new();
    let questions = ["radium and polonium in Paris", "Nobel prize for chemistry", "mobile x-ray war hospital"];
    let mut read_fewer = 0;
    for (level, min_rating, k) in [(0, 0.0, 5), (1, 0.0, 5), (2, 0.0, 5), (2, 6.0, 3), (7, 0.0, 20), (2, 0.0, 40)] {
        let mut cfg = Config::default();
        let g = cfg.section_mut::<GlobalConfig>();
        g.community_level = level;
        g.min_rating = min_rating;
        g.offline_reports = k;
        let env = QueryEnv { store: &s, embedder: &WordEmbedder, config: &cfg, llm: None, graph: &graph };
        for question in questions {
            let r = retriever(Method::Global).retrieve(&env, question).unwrap();
            let q = WordEmbedder.embed(&[question.to_string()], EmbedKind::Query).unwrap().remove(0);
            let want = whole_ranking(&communities, &reports, &q, level, min_rating, k);
            let got: Vec<(String, f32)> = r.contexts.iter().map(|c| (c.id.clone(), c.score)).collect();
            let case =
                format!("level {level}, min rating {min_rating}, {k} shown, {question:?}: {got:?} against {want:?}");
            assert_eq!(got.len(), want.len(), "{case}");
            for ((gid, gs), (wid, ws)) in got.iter().zip(&want) {
                // The same scores in the same order; the same reports unless two tie.
                assert!((gs - ws).abs() < 1e-5, "{case}");
                assert!(gid == wid || want.iter().filter(|w| (w.1 - gs).abs() < 1e-5).count() > 1, "{case}");
            }
            let read = r.extra["reports"]["read"].as_u64().unwrap() as usize;
            if read < reports.len() {
                read_fewer += 1;
            }
        }
    }
    assert!(read_fewer >= 6, "most questions read fewer report vectors than the index holds ({read_fewer})");
}

#[test]
fn an_index_without_reports_falls_back_to_basic_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let s = crate::drift_support::store(tmp.path(), false);
    let cfg = Config::default();
    let graph = GraphCache::new();
    let env = QueryEnv { store: &s, embedder: &WordEmbedder, config: &cfg, llm: None, graph: &graph };
    let r = retriever(Method::Global).retrieve(&env, "Where did Marie Curie work?").unwrap();
    assert!(r.notes.iter().any(|n| n.contains("global fell back to basic")), "{:?}", r.notes);
    assert!(!r.contexts.is_empty() && r.contexts.iter().all(|c| c.kind == ContextKind::Chunk), "{:?}", r.contexts);
}
