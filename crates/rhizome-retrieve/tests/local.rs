//! `local` (GraphRAG local search) over a small graph in a temporary SQLite store.

use std::sync::Arc;
use std::time::Duration;

use rhizome_core::llm::{ChatProvider, PromptLlm};
use rhizome_core::text::count_tokens;
use rhizome_core::*;
use rhizome_llm::prompt::Prompts;
use rhizome_llm::{BlockingLlm, OpenAiConfig, OpenAiProvider};
use rhizome_llm_testing::{last_user_text, MockOpenAi};
use rhizome_retrieve::{retriever, GraphCache, LocalConfig, Method, QueryEnv, Retrieval};
use rhizome_store::SqliteStore;

mod common;
use common::GraphChunk;

use rhizome_core::embed::WordHashEmbedder as WordEmbedder;

const LONG: &str = "Marie Curie won the Nobel Prize in Physics in 1903 together with Pierre Curie \
    and Henri Becquerel, for their joint research on the radiation phenomena discovered by \
    Becquerel, and she won the Nobel Prize in Chemistry in 1911 for the discovery of the \
    elements polonium and radium, the isolation of radium and the study of its compounds.";

/// (document, its chunks).
type Doc = (&'static str, Vec<GraphChunk>);

fn docs() -> Vec<Doc> {
    vec![
        (
            "curie",
            vec![
                (
                    "Marie Curie worked with Pierre Curie in Paris.",
                    vec!["Marie Curie", "Pierre Curie", "Paris"],
                    vec![("Marie Curie", "MARRIED", "Pierre Curie"), ("Marie Curie", "LIVED_IN", "Paris")],
                ),
                (LONG, vec!["Marie Curie", "Nobel Prize"], vec![("Marie Curie", "WON", "Nobel Prize")]),
            ],
        ),
        (
            "sorbonne",
            vec![(
                "Pierre Curie taught at the Sorbonne in Paris.",
                vec!["Pierre Curie", "Sorbonne", "Paris"],
                vec![
                    ("Pierre Curie", "TAUGHT_AT", "Sorbonne"),
                    ("Sorbonne", "LOCATED_IN", "Paris"),
                    ("Pierre Curie", "LIVED_IN", "Paris"),
                ],
            )],
        ),
        (
            "paris",
            vec![("Paris is the capital of France.", vec!["Paris", "France"], vec![("Paris", "CAPITAL_OF", "France")])],
        ),
    ]
}

fn store(dir: &std::path::Path) -> SqliteStore {
    let mut s = common::open_store(dir, &WordEmbedder);
    for (title, chunks) in docs() {
        let b = common::graph_document(&WordEmbedder, title, &chunks, |a, r, t| format!("{a} {r} {t} ({title})"));
        s.write_batch(&b).unwrap();
    }
    s
}

fn run(store: &SqliteStore, config: &Config, llm: Option<&dyn PromptLlm>, q: &str) -> Retrieval {
    let graph = GraphCache::new();
    let env = QueryEnv { store, embedder: &WordEmbedder, config, llm, graph: &graph };
    retriever(Method::Local).retrieve(&env, q).unwrap()
}

fn of_kind<'a>(r: &'a Retrieval, kind: &str) -> Vec<&'a str> {
    r.contexts.iter().filter(|c| c.kind == kind).map(|c| c.text.as_str()).collect()
}

#[test]
fn mixed_context_in_order_with_prioritised_relationships() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let mut cfg = Config::default();
    cfg.section_mut::<LocalConfig>().top_k_mapped_entities = 2;
    let r = run(&s, &cfg, None, "What did Marie Curie do?");
    let kinds: Vec<&str> = r.contexts.iter().map(|c| c.kind.as_str()).collect();
    let mut sorted = kinds.clone();
    sorted.sort_by_key(|k| ["entity", "relationship", "chunk"].iter().position(|x| x == k));
    assert_eq!(kinds, sorted, "entities, then relationships, then chunks");
    let ents = of_kind(&r, "entity");
    assert_eq!(ents.len(), 2);
    assert_eq!(ents[0], "Marie Curie (ENTITY): Marie Curie appears in curie");
    // Descriptions from two documents, one per line.
    assert!(ents[1].starts_with("Pierre Curie (ENTITY): ") && ents[1].contains("appears in sorbonne"), "{ents:?}");
    // In-network first; then Paris (linked to both selected entities); then the others.
    let rels = of_kind(&r, "relationship");
    assert_eq!(rels.len(), 5, "{rels:?}");
    assert!(rels[0].starts_with("Marie Curie --MARRIED--> Pierre Curie"), "{rels:?}");
    assert!(rels[1..3].iter().all(|x| x.contains("--LIVED_IN--> Paris")), "{rels:?}");
    assert!(rels[3..].iter().any(|x| x.contains("--WON--> Nobel Prize")), "{rels:?}");
    assert!(rels[3..].iter().any(|x| x.contains("--TAUGHT_AT--> Sorbonne")), "{rels:?}");
    // Chunks: Marie's first (the one holding most selected relationships first), then Pierre's.
    let chunks = of_kind(&r, "chunk");
    assert_eq!(
        chunks,
        ["Marie Curie worked with Pierre Curie in Paris.", LONG, "Pierre Curie taught at the Sorbonne in Paris."]
    );
    let rel_ctx = r.contexts.iter().find(|c| c.kind == "relationship").unwrap();
    assert_eq!(rel_ctx.source, "curie.txt");
    assert!(r.notes.iter().any(|n| n.contains("no community reports")), "{:?}", r.notes);
    assert!(r.notes.iter().any(|n| n.contains("no LLM configured")), "{:?}", r.notes);
    let b = &r.extra["budget"];
    let used: usize = r.contexts.iter().map(|c| count_tokens(&c.text)).sum();
    assert_eq!(b["used"], used);
    assert_eq!(b["max_tokens"], 8000);
    assert_eq!(b["communities"], 0);
    assert_eq!(b["allotted"]["entities_relationships"], 2666);
    for stage in ["embed_query", "embed_entities", "map_entities", "entities_relationships", "text_units"] {
        assert!(r.timings_ms.contains_key(stage), "{stage}: {:?}", r.timings_ms);
    }
    assert_eq!(run(&s, &cfg, None, "What did Marie Curie do?").contexts, r.contexts);
}

#[test]
fn tiny_budgets_are_never_exceeded() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let mut cut_seen = false;
    for budget in [0, 5, 20, 30, 45, 60, 80, 120, 200] {
        let mut cfg = Config::default();
        cfg.section_mut::<LocalConfig>().max_context_tokens = budget;
        let r = run(&s, &cfg, None, "What did Marie Curie win?");
        let used: usize = r.contexts.iter().map(|c| count_tokens(&c.text)).sum();
        assert!(used <= budget, "budget {budget}: used {used}: {:#?}", r.contexts);
        assert_eq!(r.extra["budget"]["used"], used);
        let sections = ["entities", "relationships", "text_units"];
        let parts: usize = sections.iter().map(|k| r.extra["budget"][k].as_u64().unwrap() as usize).sum();
        assert_eq!(parts, used);
        for c in r.contexts.iter().filter(|c| c.kind == "chunk") {
            if c.text != LONG && LONG.starts_with(&c.text) {
                cut_seen = true;
            }
        }
        // At 20 tokens the entity line (11) does not fit its third (6), but the mapped
        // entity's chunks still fill the rest.
        if budget == 20 {
            assert!(of_kind(&r, "entity").is_empty(), "{:?}", r.contexts);
            assert_eq!(of_kind(&r, "chunk")[0], "Marie Curie worked with Pierre Curie in Paris.");
        }
        // From 45 tokens on, a third (15) holds the first entity line (11 tokens).
        if budget >= 45 {
            assert!(of_kind(&r, "entity")[0].starts_with("Marie Curie (ENTITY)"), "budget {budget}");
        }
    }
    assert!(cut_seen, "some budget cuts the long chunk");
}

#[test]
fn local_asks_the_llm_for_question_entities() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let server = MockOpenAi::with_responder(Box::new(|_| "Pierre Curie".into())).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let p = OpenAiProvider::new(OpenAiConfig {
        base_url: server.base_url(),
        model: "mock".into(),
        api_key: None,
        azure_api_version: None,
        timeout: Duration::from_secs(5),
    })
    .unwrap();
    let llm = BlockingLlm {
        provider: Arc::new(p) as Arc<dyn ChatProvider>,
        prompts: Arc::new(Prompts::builtin_with(&rhizome_retrieve::prompts())),
        runtime: rt.handle().clone(),
        temperature: 0.0,
        max_tokens: 64,
    };
    let q = "Where did Pierre Curie teach?";
    let r = run(&s, &Config::default(), Some(&llm), q);
    assert!(last_user_text(&server.requests()[0]).contains(&format!("Question: {q}")));
    assert_eq!(r.extra["mapped_entities"]["found_by"], "llm");
    assert_eq!(r.extra["mapped_entities"]["entities"][0]["name"], "Pierre Curie");
    assert!(of_kind(&r, "entity")[0].starts_with("Pierre Curie (ENTITY): "));
    assert!(of_kind(&r, "relationship").iter().any(|x| x.starts_with("Pierre Curie --TAUGHT_AT--> Sorbonne")));
}
