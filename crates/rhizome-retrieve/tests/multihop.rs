//! `multihop` over a small Vietnamese graph in a temporary SQLite store, without an LLM
//! and with one (a loopback OpenAI-compatible server).

use rhizome_core::llm::PromptLlm;
use rhizome_core::*;
use rhizome_llm::BlockingLlm;
use rhizome_llm_testing::{last_user_text, Fault, MockOpenAi};
use rhizome_retrieve::{retriever, GraphCache, Method, MultihopConfig, QueryEnv, Retrieval};
use rhizome_store::SqliteStore;

mod common;

use rhizome_core::embed::WordHashEmbedder as WordEmbedder;

const EDGES: &[(&str, &str, &str)] = &[
    ("Aage Bohr", "đoạt giải", "Giải Nobel Vật lý 1975"),
    ("Aage Bohr", "đoạt giải", "Huy chương Rutherford"),
    ("Aage Bohr", "đoạt giải", "Huy chương H. C. Ørsted"),
    ("Aage Bohr", "là con trai của", "Niels Bohr"),
    ("Aage Bohr", "sinh tại", "Copenhagen"),
    ("Niels Bohr", "đoạt giải", "Giải Nobel Vật lý 1922"),
    ("Niels Bohr", "sinh tại", "Copenhagen"),
    ("Huy chương Rutherford", "được đặt theo tên", "Ernest Rutherford"),
    ("Ernest Rutherford", "sinh tại", "New Zealand"),
    ("Copenhagen", "là thủ đô của", "Đan Mạch"),
];

/// The edge list as one document without chunks (like `import edges-csv`), plus one
/// document whose chunk mentions Niels Bohr and Copenhagen (a relation with a chunk).
fn store(dir: &std::path::Path) -> SqliteStore {
    let emb = WordEmbedder;
    let mut s = common::open_store(dir, &emb);
    let text = EDGES.iter().map(|(a, r, b)| format!("{a},{r},{b}")).collect::<Vec<_>>().join("\n");
    s.write_batch(&common::edge_list(&emb, EDGES, &[], &text)).unwrap();
    let text = "Niels Bohr sinh tại Copenhagen năm 1885.";
    let mut b = common::one_chunk(&emb, "niels", "Niels Bohr", text, 8, &["Niels Bohr", "Copenhagen"]);
    let edge = ("Niels Bohr", "sinh tại", "Copenhagen");
    b.relations.push(common::relation(edge, text.into(), &b.documents[0].id, Some(&b.chunks[0].id)));
    s.write_batch(&b).unwrap();
    s
}

fn run(store: &SqliteStore, config: &Config, llm: Option<&dyn PromptLlm>, q: &str) -> Retrieval {
    let graph = GraphCache::new();
    let env = QueryEnv { store, embedder: &WordEmbedder, config, llm, graph: &graph };
    retriever(Method::Multihop).retrieve(&env, q).unwrap()
}

fn anchor_names(r: &Retrieval) -> Vec<String> {
    r.extra["anchors"]["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap().to_string()).collect()
}

fn texts(r: &Retrieval, kind: &str) -> Vec<String> {
    r.contexts.iter().filter(|c| c.kind == kind).map(|c| c.text.clone()).collect()
}

#[test]
fn award_edges_of_the_anchor_without_llm() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let mut cfg = Config::default();
    // Niels Bohr (one shared word of two: cosine 0.5) becomes a second anchor.
    cfg.section_mut::<MultihopConfig>().anchor_min_score = 0.45;
    let r = run(&s, &cfg, None, "Aage Bohr có những giải thưởng gì?");
    assert_eq!(anchor_names(&r), ["Aage Bohr", "Niels Bohr"]);
    assert_eq!(r.extra["anchors"]["question_entities"], serde_json::json!(["Aage Bohr"]));
    assert_eq!(r.extra["anchors"]["found_by"], "rules");
    assert!(r.notes.iter().any(|n| n.contains("no LLM configured")), "{:?}", r.notes);
    let edges = texts(&r, "edge");
    assert_eq!(edges.len(), cfg.section::<MultihopConfig>().neighbor_top_k);
    for award in ["Giải Nobel Vật lý 1975", "Huy chương Rutherford", "Huy chương H. C. Ørsted"] {
        assert!(edges.contains(&format!("Aage Bohr --đoạt giải--> {award}")), "{edges:?}");
    }
    // Several anchors (Aage Bohr, Niels Bohr share a word): paths between them.
    let paths = texts(&r, "path");
    assert!(!paths.is_empty() && paths.len() <= cfg.section::<MultihopConfig>().top_k_paths);
    assert_eq!(paths, r.paths);
    assert!(paths.contains(&"Aage Bohr -[là con trai của]-> Niels Bohr".to_string()), "{paths:?}");
    assert_eq!(r.contexts.iter().filter(|c| c.kind != "edge" && c.kind != "path").count(), 0);
    for stage in ["embed_query", "embed_entities", "anchors", "ego", "paths"] {
        assert!(r.timings_ms.contains_key(stage), "{stage} missing: {:?}", r.timings_ms);
    }
    // Edge-list relations have no chunk: the relation id is their source.
    let first = &r.contexts[0];
    assert!(first.source.starts_with("rel_"), "{first:?}");
    // Deterministic.
    let again = run(&s, &cfg, None, "Aage Bohr có những giải thưởng gì?");
    assert_eq!(again.contexts, r.contexts);
}

#[test]
fn typed_without_diacritics_reaches_the_same_anchor() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let cfg = Config::default();
    for q in [
        "Aage Bohr đoạt những giải thưởng nào?",
        "Aage Bohr doat nhung giai thuong nao?",
        "aage bohr doat nhung giai thuong nao?",
    ] {
        let r = run(&s, &cfg, None, q);
        assert_eq!(anchor_names(&r)[0], "Aage Bohr", "{q}");
        assert!(texts(&r, "edge").iter().any(|e| e.starts_with("Aage Bohr --đoạt giải-->")), "{q}");
    }
}

#[test]
fn absent_subject_gets_no_evidence() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    for q in ["Ai là chủ tịch của Tập đoàn Vingroup?", "Who won the 1998 FIFA World Cup?"] {
        let r = run(&s, &Config::default(), None, q);
        assert!(r.contexts.is_empty(), "{q}: {:?}", r.contexts);
        assert!(r.paths.is_empty());
        assert!(r.notes.iter().any(|n| n.contains("not enough evidence")), "{q}: {:?}", r.notes);
        assert!(anchor_names(&r).is_empty());
    }
}

#[test]
fn paths_link_two_anchors_in_true_direction_with_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let mut cfg = Config::default();
    cfg.section_mut::<MultihopConfig>().anchor_per_entity = 1;
    let r = run(&s, &cfg, None, "Ernest Rutherford và Đan Mạch có liên quan gì?");
    assert_eq!(anchor_names(&r), ["Ernest Rutherford", "Đan Mạch"]);
    // Shortest links are 4 hops: none within max_hops 3.
    assert!(r.paths.is_empty(), "{:?}", r.paths);
    cfg.section_mut::<MultihopConfig>().max_hops = 4;
    let r = run(&s, &cfg, None, "Ernest Rutherford và Đan Mạch có liên quan gì?");
    assert!(
        r.paths.contains(
            &"Huy chương Rutherford -[được đặt theo tên]-> Ernest Rutherford ; \
        Aage Bohr -[đoạt giải]-> Huy chương Rutherford ; Aage Bohr -[sinh tại]-> Copenhagen ; \
        Copenhagen -[là thủ đô của]-> Đan Mạch"
                .to_string()
        ),
        "{:?}",
        r.paths
    );
    // A relation supported by a chunk has that chunk's document as its source.
    let r = run(&s, &cfg, None, "Niels Bohr sinh ra ở đâu?");
    let born = r.contexts.iter().find(|c| c.text == "Niels Bohr --sinh tại--> Copenhagen").unwrap();
    assert_eq!((born.source.as_str(), born.title.as_str()), ("niels.txt", "Niels Bohr"));
}

fn llm(server: &MockOpenAi, rt: &tokio::runtime::Runtime) -> BlockingLlm {
    rhizome_llm_testing::blocking_llm_with(
        server,
        rt.handle().clone(),
        rhizome_llm::prompt::Prompts::builtin_with(&rhizome_retrieve::prompts()),
    )
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
}

#[test]
fn llm_names_the_question_entities() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let server = MockOpenAi::with_responder(Box::new(|_| "Names: Aage Bohr, Niels Bohr".into())).unwrap();
    let rt = rt();
    let l = llm(&server, &rt);
    let q = "Aage Bohr có những giải thưởng gì?";
    let r = run(&s, &Config::default(), Some(&l), q);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let user = last_user_text(&reqs[0]);
    assert!(user.contains(&format!("Question: {q}\nNames:")), "{user}");
    assert!(user.contains("List the proper nouns"), "{user}");
    assert_eq!(reqs[0]["model"], "mock");
    // Niels Bohr is not in the question: dropped.
    assert_eq!(r.extra["anchors"]["question_entities"], serde_json::json!(["Aage Bohr"]));
    assert_eq!(r.extra["anchors"]["found_by"], "llm");
    assert!(r.notes.iter().all(|n| !n.contains("LLM")), "{:?}", r.notes);
    assert_eq!(anchor_names(&r)[0], "Aage Bohr");
    assert!(texts(&r, "edge").contains(&"Aage Bohr --đoạt giải--> Giải Nobel Vật lý 1975".to_string()));
}

#[test]
fn garbage_or_failed_llm_falls_back_to_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let rt = rt();
    let q = "Aage Bohr có những giải thưởng gì?";
    let server = MockOpenAi::with_responder(Box::new(|_| "I believe the answer is the Nobel Prize.".into())).unwrap();
    let r = run(&s, &Config::default(), Some(&llm(&server, &rt)), q);
    assert_eq!(server.request_count(), 1);
    assert_eq!(r.extra["anchors"]["found_by"], "rules");
    assert!(r.notes.iter().any(|n| n.contains("reply unusable")), "{:?}", r.notes);
    assert_eq!(anchor_names(&r)[0], "Aage Bohr");

    let server = MockOpenAi::with_responder(Box::new(|_| "Aage Bohr".into())).unwrap();
    server.push_faults([Fault::Status(401)]);
    let r = run(&s, &Config::default(), Some(&llm(&server, &rt)), q);
    assert!(r.notes.iter().any(|n| n.contains("call failed")), "{:?}", r.notes);
    assert_eq!(anchor_names(&r)[0], "Aage Bohr");

    // NONE: no names, so the whole question looks for anchors.
    let server = MockOpenAi::with_responder(Box::new(|_| "NONE".into())).unwrap();
    let r = run(&s, &Config::default(), Some(&llm(&server, &rt)), "Ai là chủ tịch của Tập đoàn Vingroup?");
    assert_eq!(r.extra["anchors"]["found_by"], "llm");
    assert!(r.contexts.is_empty());
}
