//! `tog` over small graphs in a temporary SQLite store: offline (semantic and BM25
//! pruning) and with an LLM (a loopback OpenAI-compatible server whose responder plays
//! the pruner, the judge and the answerer).

use rhizome_core::llm::PromptLlm;
use rhizome_core::*;
use rhizome_llm::prompt::Prompts;
use rhizome_llm::BlockingLlm;
use rhizome_llm_testing::{blocking_llm_with, last_user_text, MockOpenAi};
use rhizome_retrieve::{retriever, GraphCache, Method, QueryEnv, Retrieval, TogConfig, TogPruning};
use rhizome_store::SqliteStore;

mod common;
use serde_json::{json, Value};

use rhizome_core::embed::WordHashEmbedder as WordEmbedder;

/// A store holding `edges` (one document without chunks, like an edge-list import),
/// every entity named in `extra_entities` (with no relation), and one document
/// `ada.txt` whose chunk mentions Ada Lovelace and the Royal Medal.
fn store(dir: &std::path::Path, edges: &[(String, String, String)], extra_entities: &[&str]) -> SqliteStore {
    let emb = WordEmbedder;
    let mut s = common::open_store(dir, &emb);
    let text = edges.iter().map(|(a, r, b)| format!("{a},{r},{b}")).collect::<Vec<_>>().join("\n") + "\n.";
    let list: Vec<common::Edge> = edges.iter().map(|(a, r, t)| (a.as_str(), r.as_str(), t.as_str())).collect();
    s.write_batch(&common::edge_list(&emb, &list, extra_entities, &text)).unwrap();
    let medal = |n: &str| n == "Royal Medal";
    if list.iter().any(|e| medal(e.0) || medal(e.2)) || extra_entities.iter().any(|n| medal(n)) {
        let text = "Ada Lovelace received the Royal Medal for her notes.";
        let b = common::one_chunk(&emb, "ada", "Ada Lovelace", text, 10, &["Ada Lovelace", "Royal Medal"]);
        s.write_batch(&b).unwrap();
    }
    s
}

fn edges(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    list.iter().map(|(a, r, b)| (a.to_string(), r.to_string(), b.to_string())).collect()
}

fn ada() -> Vec<(String, String, String)> {
    edges(&[
        ("Ada Lovelace", "born in", "London"),
        ("Ada Lovelace", "won award", "Royal Medal"),
        ("Ada Lovelace", "daughter of", "Lord Byron"),
        ("Ada Lovelace", "worked with", "Charles Babbage"),
        ("Royal Medal", "awarded by", "Royal Society"),
        ("London", "capital of", "England"),
        ("Charles Babbage", "designed", "Analytical Engine"),
    ])
}

/// Two hubs, each linked to five children, each child to four parts: every node has
/// several neighbours.
fn hubs() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for h in ["Alpha", "Beta"] {
        for i in 1..=5 {
            out.push((format!("Hub {h}"), "links to".to_string(), format!("{h} Child {i}")));
            for j in 1..=4 {
                out.push((format!("{h} Child {i}"), "has part".to_string(), format!("{h} Part {i}{j}")));
            }
        }
    }
    out
}

fn run(store: &SqliteStore, config: &Config, llm: Option<&dyn PromptLlm>, q: &str) -> Retrieval {
    let graph = GraphCache::new();
    let env = QueryEnv { store, embedder: &WordEmbedder, config, llm, graph: &graph };
    retriever(Method::Tog).retrieve(&env, q).unwrap()
}

fn config(width: usize, depth: usize, retain: usize, pruning: TogPruning) -> Config {
    let mut c = Config::default();
    let t = c.section_mut::<TogConfig>();
    t.width = width;
    t.depth = depth;
    t.num_retain_entity = retain;
    t.pruning = pruning;
    c
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn llm(server: &MockOpenAi, rt: &tokio::runtime::Runtime) -> BlockingLlm {
    blocking_llm_with(server, rt.handle().clone(), Prompts::builtin_with(&rhizome_retrieve::prompts()))
}

fn kind(text: &str) -> &'static str {
    if text.contains("List the proper nouns") || text.contains("Names:") {
        "names"
    } else if text.contains("Candidate relations") {
        "prune"
    } else if text.contains("Source passages") {
        "answer"
    } else if text.contains("\"sufficient\"") {
        "check"
    } else {
        "other"
    }
}

/// Prune reply: candidate k scores 1/k (the first listed is best).
fn rate_in_order(text: &str) -> String {
    let n = text.lines().filter(|l| l.split_once(". ").is_some_and(|(k, _)| k.parse::<usize>().is_ok())).count();
    let scores: serde_json::Map<String, Value> = (1..=n).map(|k| (k.to_string(), json!(1.0 / k as f64))).collect();
    Value::Object(scores).to_string()
}

fn user_texts(server: &MockOpenAi, wanted: &str) -> Vec<String> {
    server.requests().iter().map(last_user_text).filter(|t| kind(t) == wanted).collect()
}

fn depth_kept(r: &Retrieval) -> Vec<Vec<String>> {
    r.extra["depths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kept"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect())
        .collect()
}

#[test]
fn semantic_and_bm25_pick_the_relevant_relation_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), &ada(), &[]);
    for pruning in [TogPruning::Semantic, TogPruning::Bm25, TogPruning::Auto] {
        let cfg = config(1, 1, 1, pruning);
        let r = run(&s, &cfg, None, "Which award did Ada Lovelace win?");
        assert_eq!(r.paths.len(), 1, "{pruning:?}");
        assert!(r.paths[0].starts_with("Ada Lovelace -[won award]-> Royal Medal (score"), "{pruning:?}: {:?}", r.paths);
        let r = run(&s, &cfg, None, "Where was Ada Lovelace born?");
        assert!(r.paths[0].starts_with("Ada Lovelace -[born in]-> London (score"), "{pruning:?}: {:?}", r.paths);
    }
    let r = run(&s, &config(1, 1, 1, TogPruning::Auto), None, "Which award did Ada Lovelace win?");
    assert_eq!(r.extra["pruning"], "semantic");
    assert!(r.notes.iter().any(|n| n.contains("pruned by semantic")), "{:?}", r.notes);

    // Deeper: the award path goes on to who awards it; one path, then its chunk.
    let cfg = config(1, 2, 1, TogPruning::Bm25);
    let r = run(&s, &cfg, None, "Which award did Ada Lovelace win?");
    assert_eq!(r.extra["pruning"], "bm25");
    assert_eq!(r.paths.len(), 1);
    assert!(
        r.paths[0].starts_with("Ada Lovelace -[won award]-> Royal Medal ; Royal Medal -[awarded by]-> Royal Society"),
        "{:?}",
        r.paths
    );
    assert_eq!(r.extra["start_entities"][0]["name"], "Ada Lovelace");
    assert_eq!(r.extra["stopped_early"], false);
    assert_eq!(r.extra["llm_calls"], 0);
    assert_eq!(r.extra["depths"].as_array().unwrap().len(), 2);
    assert!(r.answer.is_none());
    assert!(r.notes.iter().any(|n| n.contains("no early-termination check")), "{:?}", r.notes);
    assert!(r.notes.iter().any(|n| n.contains("writes no answer")), "{:?}", r.notes);
    assert_eq!(r.contexts[0].kind, "path");
    assert_eq!(
        r.contexts[0].text,
        "Ada Lovelace -[won award]-> Royal Medal ; Royal Medal -[awarded by]-> Royal Society"
    );
    assert_eq!(r.contexts[0].source, "ada.txt ; ".to_string() + r.contexts[0].id.split(',').nth(1).unwrap());
    let chunk = &r.contexts[1];
    assert_eq!(
        (chunk.kind.as_str(), chunk.source.as_str(), chunk.title.as_str()),
        ("chunk", "ada.txt", "Ada Lovelace")
    );
    assert!(chunk.text.contains("received the Royal Medal"));
    for stage in ["graph", "embed_query", "start_entities", "explore", "prune", "sources"] {
        assert!(r.timings_ms.contains_key(stage), "{stage}: {:?}", r.timings_ms);
    }
    // Deterministic.
    assert_eq!(run(&s, &cfg, None, "Which award did Ada Lovelace win?").contexts, r.contexts);
}

#[test]
fn beam_limits_seen_by_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), &hubs(), &[]);
    let server = MockOpenAi::with_responder(Box::new(|req: &Value| {
        let text = last_user_text(req);
        match kind(&text) {
            "names" => "Names: Hub Alpha, Hub Beta".into(),
            "prune" => rate_in_order(&text),
            "check" => r#"{"sufficient": false, "answer": ""}"#.into(),
            _ => "Hub Alpha links to Alpha Child 1 [P1].".into(),
        }
    }))
    .unwrap();
    let rt = rt();
    let l = llm(&server, &rt);
    let cfg = config(2, 2, 2, TogPruning::Llm);
    let r = run(&s, &cfg, Some(&l), "What do Hub Alpha and Hub Beta link to?");
    assert_eq!(r.extra["pruning"], "llm");
    let mut starts: Vec<&str> =
        r.extra["start_entities"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    starts.sort();
    assert_eq!(starts, ["Hub Alpha", "Hub Beta"]);

    let prunes = user_texts(&server, "prune");
    let (d1, d2): (Vec<&String>, Vec<&String>) = prunes.iter().partition(|t| t.contains("Reached by: (start entity)"));
    assert!(!d1.is_empty() && d1.len() <= 2, "{d1:?}");
    assert!(!d2.is_empty() && d2.len() <= 2, "{d2:?}");
    for t in &prunes {
        let entity = t.split("Current entity: ").nth(1).unwrap().lines().next().unwrap();
        let cands: Vec<&str> =
            t.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit()) && l.contains(". ")).collect();
        assert!(cands.len() >= 4, "{t}");
        assert!(cands.iter().all(|c| c.contains(entity)), "{t}");
        assert!(t.contains("-[has part]->") || t.contains("-[links to]->"), "{t}");
    }
    // Depth 2 goes on from children, never back to the hub.
    for t in &d2 {
        assert!(t.contains("Reached by: Hub "), "{t}");
        assert!(!t.contains(". Hub "), "{t}");
    }
    let kept = depth_kept(&r);
    assert_eq!(kept.len(), 2);
    assert!(kept.iter().all(|k| !k.is_empty() && k.len() <= 2), "{kept:?}");
    assert_eq!(r.paths, kept[1]);
    assert!(r.paths.iter().all(|p| p.matches(" ; ").count() == 1), "{:?}", r.paths);

    // One check after depth 1 (none after the last), one answer listing at most 2 paths.
    assert_eq!(user_texts(&server, "check").len(), 1);
    let answers = user_texts(&server, "answer");
    assert_eq!(answers.len(), 1);
    assert!(answers[0].contains("[P1]") && !answers[0].contains("[P3]"), "{}", answers[0]);
    assert_eq!(r.answer.as_deref(), Some("Hub Alpha links to Alpha Child 1 [P1]."));
    assert_eq!(r.extra["llm_calls"].as_u64().unwrap() as usize, server.requests().len());
    assert_eq!(r.extra["stopped_early"], false);
    assert!(r.contexts.iter().filter(|c| c.kind == "path").count() <= 2);
}

#[test]
fn a_sufficient_check_stops_the_exploration() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), &hubs(), &[]);
    let server = MockOpenAi::with_responder(Box::new(|req: &Value| {
        let text = last_user_text(req);
        match kind(&text) {
            "names" => "Names: Hub Alpha".into(),
            "prune" => rate_in_order(&text),
            "check" => r#"```json
{"sufficient": true, "answer": "Alpha Child 1"}
```"#
                .into(),
            _ => "Alpha Child 1 [P1].".into(),
        }
    }))
    .unwrap();
    let rt = rt();
    let cfg = config(2, 3, 2, TogPruning::Auto);
    let r = run(&s, &cfg, Some(&llm(&server, &rt)), "What does Hub Alpha link to?");
    let prunes = user_texts(&server, "prune");
    assert!(!prunes.is_empty());
    assert!(prunes.iter().all(|t| t.contains("Reached by: (start entity)")), "{prunes:?}");
    assert_eq!(user_texts(&server, "check").len(), 1);
    assert_eq!(r.extra["stopped_early"], true);
    let depths = r.extra["depths"].as_array().unwrap();
    assert_eq!(depths.len(), 1);
    assert_eq!(depths[0]["check_answer"], "Alpha Child 1");
    assert_eq!(r.answer.as_deref(), Some("Alpha Child 1 [P1]."));
    assert!(r.paths.iter().all(|p| p.matches(" ; ").count() == 0), "{:?}", r.paths);
}

#[test]
fn garbled_prune_replies_fall_back_to_semantic() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), &ada(), &[]);
    let server = MockOpenAi::with_responder(Box::new(|req: &Value| {
        let text = last_user_text(req);
        match kind(&text) {
            "names" => "Names: Ada Lovelace".into(),
            "prune" => "The award one looks best to me!".into(),
            "check" => "not sure".into(),
            _ => "The provided evidence is insufficient to answer this question.".into(),
        }
    }))
    .unwrap();
    let rt = rt();
    let mut cfg = config(1, 2, 1, TogPruning::Llm);
    cfg.section_mut::<TogConfig>().early_stop = true;
    let r = run(&s, &cfg, Some(&llm(&server, &rt)), "Which award did Ada Lovelace win?");
    assert_eq!(r.extra["pruning"], "llm");
    assert_eq!(user_texts(&server, "prune").len(), 2);
    let fallbacks = r.notes.iter().filter(|n| n.contains("tog_prune") && n.contains("scored semantic instead")).count();
    assert_eq!(fallbacks, 2, "{:?}", r.notes);
    assert!(r.notes.iter().any(|n| n.contains("tog_check") && n.contains("unusable")), "{:?}", r.notes);
    assert!(r.paths[0].starts_with("Ada Lovelace -[won award]-> Royal Medal ; "), "{:?}", r.paths);
    assert_eq!(r.answer.as_deref(), Some("The provided evidence is insufficient to answer this question."));
}

#[test]
fn no_entities_or_no_edges_is_an_empty_retrieval() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = store(tmp.path(), &[], &[]);
    let tmp2 = tempfile::tempdir().unwrap();
    let lonely = store(tmp2.path(), &[], &["Ada Lovelace", "London"]);
    for s in [&empty, &lonely] {
        let r = run(s, &Config::default(), None, "Which award did Ada Lovelace win?");
        assert!(r.contexts.is_empty() && r.paths.is_empty() && r.answer.is_none());
        assert!(r.notes.iter().any(|n| n.contains("no entity with relations")), "{:?}", r.notes);
        assert_eq!(r.extra["start_entities"], json!([]));
    }
    // With an LLM: only the question-entity call, no pruning nor answer.
    let server = MockOpenAi::with_responder(Box::new(|_| "Names: Ada Lovelace".into())).unwrap();
    let rt = rt();
    let r = run(&lonely, &Config::default(), Some(&llm(&server, &rt)), "Which award did Ada Lovelace win?");
    assert!(r.contexts.is_empty() && r.answer.is_none());
    assert_eq!(server.requests().len(), 1);
    assert_eq!(r.extra["llm_calls"], 1);
}
