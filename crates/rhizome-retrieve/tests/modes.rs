//! The Neo4j-style modes over a small corpus of multi-chunk documents with SIMILAR_TO
//! edges, in a temporary SQLite store; with no LLM and with one configured.

use std::collections::HashSet;

use rhizome_core::ids::entity_id;
use rhizome_core::llm::PromptLlm;
use rhizome_core::text::bm25_terms;
use rhizome_core::*;
use rhizome_llm::BlockingLlm;
use rhizome_llm_testing::MockOpenAi;
use rhizome_retrieve::{retriever, GraphCache, Method, ModesConfig, QueryEnv, Retrieval};
use rhizome_store::SqliteStore;

mod common;

/// Bag of BM25 terms hashed into 256 dimensions.
struct TermEmbedder;

impl Embedder for TermEmbedder {
    fn model_id(&self) -> &str {
        "test-terms"
    }
    fn dim(&self) -> usize {
        256
    }
    fn embed(&self, texts: &[String], _kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 256];
                for w in bm25_terms(t) {
                    let h = w.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
                    v[(h % 256) as usize] += 1.0;
                }
                l2_normalize(&mut v);
                v
            })
            .collect())
    }
}

/// Documents as chunks in order (NEXT_CHUNK links them).
const DOCS: &[(&str, &[&str])] = &[
    (
        "Aage Bohr",
        &[
            "Aage Bohr was a Danish physicist born in Copenhagen.",
            "His thesis work was done at the institute of his father.",
            "Aage Bohr won the Nobel Prize with Ben Mottelson.",
        ],
    ),
    ("Niels Bohr", &["Niels Bohr founded an institute in Copenhagen.", "Niels Bohr won the Nobel Prize in 1922."]),
    ("Danube", &["The Danube flows through Vienna.", "The Danube reaches the Black Sea."]),
];

/// SIMILAR_TO edges: (document, chunk a, chunk b, cosine).
const SIMILAR: &[(usize, usize, usize, f32)] = &[(0, 0, 2, 0.9), (1, 0, 1, 0.85)];

const RELS: &[(&str, &str, &str)] = &[
    ("Aage Bohr", "won", "Nobel Prize"),
    ("Ben Mottelson", "shared prize with", "Aage Bohr"),
    ("Aage Bohr", "son of", "Niels Bohr"),
    ("Niels Bohr", "won", "Nobel Prize"),
    ("Niels Bohr", "founded institute in", "Copenhagen"),
    ("Danube", "flows through", "Vienna"),
];

fn store(dir: &std::path::Path) -> SqliteStore {
    let emb = TermEmbedder;
    let mut s = common::open_store(dir, &emb);
    let mut names: Vec<&str> = RELS.iter().flat_map(|r| [r.0, r.2]).collect();
    names.sort();
    names.dedup();
    let mut b = WriteBatch::default();
    let mut chunks: Vec<Vec<Chunk>> = Vec::new();
    for (title, texts) in DOCS {
        let body = texts.join(" ");
        let doc = common::text_document(title, &body);
        let mut cs = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            let c = common::chunk(&doc, i as u32, t, 10);
            for n in names.iter().filter(|n| t.contains(*n)) {
                b.mentions.push(common::mention(n, String::new(), &doc, Some(&c)));
            }
            b.vectors.push((VectorKind::Chunk, c.id.clone(), common::passage_vector(&emb, t)));
            cs.push(c);
        }
        b.chunks.extend(cs.iter().cloned());
        chunks.push(cs);
        b.documents.push(doc);
    }
    for &(d, x, y, cos) in SIMILAR {
        let (a, c) = (chunks[d][x].id.clone(), chunks[d][y].id.clone());
        b.similar.push(if a < c { (a, c, cos) } else { (c, a, cos) });
    }
    for n in &names {
        b.vectors.push((VectorKind::Entity, entity_id(n), common::passage_vector(&emb, n)));
    }
    for &(a, r, t) in RELS {
        let c = chunks
            .iter()
            .flatten()
            .find(|c| c.text.contains(a) && c.text.contains(t))
            .or_else(|| chunks.iter().flatten().find(|c| c.text.contains(a)))
            .unwrap();
        b.relations.push(common::relation((a, r, t), String::new(), &c.doc_id, Some(&c.id)));
    }
    s.write_batch(&b).unwrap();
    s
}

fn run(store: &SqliteStore, config: &Config, llm: Option<&dyn PromptLlm>, method: Method, q: &str) -> Retrieval {
    let graph = GraphCache::new();
    let env = QueryEnv { store, embedder: &TermEmbedder, config, llm, graph: &graph };
    retriever(method).retrieve(&env, q).unwrap()
}

fn of_kind<'a>(r: &'a Retrieval, kind: &str) -> Vec<&'a str> {
    r.contexts.iter().filter(|c| c.kind == kind).map(|c| c.text.as_str()).collect()
}

const Q: &str = "Aage Bohr won the Nobel Prize with whom?";
const MODES: [Method; 4] = [Method::ChunkOnly, Method::EntityOnly, Method::Hybrid, Method::GraphEnhanced];

#[test]
fn chunk_only_is_basic() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    for fusion in ["score", "rrf"] {
        let mut cfg = Config::default();
        cfg.retrieval.fusion = fusion.into();
        let a = run(&s, &cfg, None, Method::ChunkOnly, Q);
        let b = run(&s, &cfg, None, Method::Basic, Q);
        assert_eq!(a.contexts, b.contexts, "{fusion}");
        assert_eq!(a.contexts[0].text, DOCS[0].1[2]);
    }
}

#[test]
fn entity_only_gives_entities_relationships_and_their_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let cfg = Config::default();
    let r = run(&s, &cfg, None, Method::EntityOnly, "Tell me about Ben Mottelson");
    assert_eq!(r.extra["entities"][0]["name"], "Ben Mottelson");
    // The only chunk naming him comes first.
    assert_eq!(r.contexts[0].kind, "chunk");
    assert_eq!(r.contexts[0].text, DOCS[0].1[2]);
    assert!(of_kind(&r, "relationship").contains(&"Ben Mottelson --shared prize with--> Aage Bohr"));
    let ents = of_kind(&r, "entity");
    assert!(ents.len() <= 10 && ents[0].starts_with("Ben Mottelson (ENTITY)"), "{ents:?}");
    // Every chunk context mentions one of the found entities.
    let names: Vec<String> =
        r.extra["entities"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_string()).collect();
    for c in of_kind(&r, "chunk") {
        assert!(names.iter().any(|n| c.contains(n.as_str())), "{c}");
    }
    for stage in ["embed_query", "entities", "relationships", "entity_chunks", "fetch"] {
        assert!(r.timings_ms.contains_key(stage), "{stage}: {:?}", r.timings_ms);
    }
}

#[test]
fn hybrid_fuses_both_sides() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let cfg = Config::default();
    let r = run(&s, &cfg, None, Method::Hybrid, Q);
    let chunks = of_kind(&r, "chunk");
    assert_eq!(chunks.len(), cfg.retrieval.top_k);
    assert_eq!(chunks[0], DOCS[0].1[2]);
    assert!(!of_kind(&r, "entity").is_empty() && !of_kind(&r, "relationship").is_empty());
    // The entity side adds to the chunk side's score.
    let basic = run(&s, &cfg, None, Method::ChunkOnly, Q);
    assert!(r.contexts[0].score > basic.contexts[0].score);
    for stage in ["dense", "bm25", "entities", "fuse"] {
        assert!(r.timings_ms.contains_key(stage), "{stage}");
    }
}

#[test]
fn graph_enhanced_expands_through_similar_and_next_chunk() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let mut cfg = Config::default();
    cfg.retrieval.top_k = 1;
    cfg.section_mut::<ModesConfig>().seed_chunks = 1;
    let r = run(&s, &cfg, None, Method::GraphEnhanced, Q);
    let seed = r.extra["seed_chunks"][0].as_str().unwrap().to_string();
    assert_eq!(r.contexts[0].id, seed);
    assert_eq!(r.contexts[0].text, DOCS[0].1[2]);
    let expanded = r.extra["expanded"].as_array().unwrap();
    let via: Vec<(&str, &str, u64)> = expanded
        .iter()
        .map(|e| (e["via"].as_str().unwrap(), e["parent"].as_str().unwrap(), e["depth"].as_u64().unwrap()))
        .collect();
    // Chunk 0 over the SIMILAR_TO edge (0.9), chunk 1 as the previous chunk (0.8).
    assert_eq!(via, [("SIMILAR_TO", seed.as_str(), 1), ("NEXT_CHUNK", seed.as_str(), 1)]);
    assert!(expanded.iter().all(|e| e["seed"] == seed.as_str()));
    let chunks = of_kind(&r, "chunk");
    assert_eq!(chunks, [DOCS[0].1[2], DOCS[0].1[0], DOCS[0].1[1]]);
    let scores: Vec<f32> = r.contexts.iter().filter(|c| c.kind == "chunk").map(|c| c.score).collect();
    assert!((scores[1] - scores[0] * 0.9).abs() < 1e-5 && (scores[2] - scores[0] * 0.8).abs() < 1e-5, "{scores:?}");
    // Multi-hop entity paths between the question's and the seed chunk's entities.
    assert!(!r.paths.is_empty());
    assert_eq!(of_kind(&r, "path"), r.paths.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(r.paths.iter().any(|p| p.contains("Ben Mottelson -[shared prize with]-> Aage Bohr")), "{:?}", r.paths);
    let kinds: Vec<&str> = r.contexts.iter().map(|c| c.kind.as_str()).collect();
    let mut order = kinds.clone();
    order.dedup();
    assert_eq!(order, ["chunk", "path", "entity", "relationship"]);
    for stage in ["expand", "paths"] {
        assert!(r.timings_ms.contains_key(stage), "{stage}");
    }

    // Caps: one added chunk; no expansion at depth 0.
    cfg.section_mut::<ModesConfig>().max_chunks = 1;
    let r = run(&s, &cfg, None, Method::GraphEnhanced, Q);
    assert_eq!(of_kind(&r, "chunk"), [DOCS[0].1[2], DOCS[0].1[0]]);
    cfg.section_mut::<ModesConfig>().max_depth = 0;
    let r = run(&s, &cfg, None, Method::GraphEnhanced, Q);
    assert_eq!(of_kind(&r, "chunk"), [DOCS[0].1[2]]);
    assert!(r.extra["expanded"].as_array().unwrap().is_empty());

    // Depth 2 reaches the far end of a document; seeds from two documents.
    let mut cfg = Config::default();
    cfg.retrieval.top_k = 2;
    cfg.section_mut::<ModesConfig>().seed_chunks = 2;
    let r = run(&s, &cfg, None, Method::GraphEnhanced, "Who won the Nobel Prize?");
    let docs: HashSet<&str> = r.contexts.iter().filter(|c| c.kind == "chunk").map(|c| c.title.as_str()).collect();
    assert!(docs.contains("Aage Bohr") && docs.contains("Niels Bohr"), "{docs:?}");
    assert!(r.extra["expanded"].as_array().unwrap().len() <= cfg.section::<ModesConfig>().max_chunks);
}

fn llm(server: &MockOpenAi, rt: &tokio::runtime::Runtime) -> BlockingLlm {
    rhizome_llm_testing::blocking_llm_with(
        server,
        rt.handle().clone(),
        rhizome_llm::prompt::Prompts::builtin_with(&rhizome_retrieve::prompts()),
    )
}

#[test]
fn every_mode_runs_with_and_without_llm_deterministically() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let cfg = Config::default();
    let server = MockOpenAi::start().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let l = llm(&server, &rt);
    for m in MODES {
        for q in [Q, "Sam Altman领导的公司有什么投资？", "Aage Bohr có những giải thưởng gì?", ""] {
            let a = run(&s, &cfg, None, m, q);
            let b = run(&s, &cfg, Some(&l), m, q);
            assert_eq!(a.contexts, b.contexts, "{m} {q}");
            assert_eq!(a.contexts, run(&s, &cfg, None, m, q).contexts, "{m} {q}: deterministic");
            assert!(a.timings_ms.contains_key("embed_query"));
        }
    }
    // The modes need no LLM calls.
    assert_eq!(server.request_count(), 0);
}

#[test]
fn without_the_whole_graph_every_mode_gives_the_same_contexts() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let mut configs = vec![Config::default()];
    let mut one = Config::default();
    one.retrieval.top_k = 1;
    one.section_mut::<ModesConfig>().seed_chunks = 1;
    configs.push(one);
    let mut rrf = Config::default();
    rrf.retrieval.top_k = 2;
    rrf.retrieval.fusion = "rrf".into();
    rrf.section_mut::<ModesConfig>().seed_chunks = 2;
    configs.push(rrf);
    for cfg in &configs {
        let mut around = cfg.clone();
        around.retrieval.whole_graph_up_to = 0;
        for m in MODES {
            for q in [Q, "Who won the Nobel Prize?", "Tell me about Ben Mottelson", "The Danube in Vienna", ""] {
                let (a, b) = (run(&s, cfg, None, m, q), run(&s, &around, None, m, q));
                assert_eq!(a.contexts, b.contexts, "{m} {q}");
                assert_eq!((&a.paths, &a.extra), (&b.paths, &b.extra), "{m} {q}");
                let read = b.notes.iter().any(|n| n.contains("read the neighbourhood"));
                assert_eq!(read, m != Method::ChunkOnly, "{m} {q}: {:?}", b.notes);
                assert!(!a.notes.iter().any(|n| n.contains("neighbourhood")), "{m} {q}: {:?}", a.notes);
            }
        }
    }
}
