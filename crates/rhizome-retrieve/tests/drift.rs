//! `drift` (GraphRAG DRIFT search) over a small graph with community reports in a
//! temporary SQLite store, the LLM played by the loopback OpenAI server: the calls it saw
//! (HyDE, primer folds, follow-up rounds, reduce), the query-state graph, garbled replies,
//! the LLM-free path and an index without reports. The index and the LLM's side of the
//! requests are in `drift_support`. `global_offline`: global's LLM-free ranking, which
//! reads reports the same way (the report vectors nearest the question).

mod common;
mod drift_support;
mod global_offline;

use drift_support::replies::{follow_up_of, good_reply, kind, of_kind, prompt_text, titles_in, Kind};
use drift_support::store;
use rhizome_core::embed::WordHashEmbedder as WordEmbedder;
use rhizome_core::llm::PromptLlm;
use rhizome_core::*;
use rhizome_llm::prompt::Prompts;
use rhizome_llm_testing::{blocking_llm_with, MockOpenAi};
use rhizome_retrieve::{retriever, DriftConfig, GraphCache, Method, QueryEnv, Retrieval};
use rhizome_store::SqliteStore;
use serde_json::Value;

const QUESTION: &str = "What shaped the scientific life of Marie Curie?";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn config(top_k: usize, folds: usize, depth: usize, k: usize) -> Config {
    let mut cfg = Config::default();
    let d = cfg.section_mut::<DriftConfig>();
    d.primer_top_k = top_k;
    d.primer_folds = folds;
    d.n_depth = depth;
    d.drift_k_followups = k;
    d.local_max_tokens = 300;
    cfg
}

fn run(store: &SqliteStore, cfg: &Config, llm: Option<&dyn PromptLlm>) -> Retrieval {
    let graph = GraphCache::new();
    let env = QueryEnv { store, embedder: &WordEmbedder, config: cfg, llm, graph: &graph };
    retriever(Method::Drift).retrieve(&env, QUESTION).unwrap()
}

fn with_server(responder: fn(&Value) -> String, s: &SqliteStore, cfg: &Config) -> (Retrieval, MockOpenAi) {
    let server = MockOpenAi::with_responder(Box::new(responder)).unwrap();
    let rt = runtime();
    let llm = blocking_llm_with(&server, rt.handle().clone(), Prompts::builtin_with(&rhizome_retrieve::prompts()));
    let r = run(s, cfg, Some(&llm));
    (r, server)
}

fn nodes(r: &Retrieval) -> Vec<Value> {
    r.extra["query_graph"]["nodes"].as_array().unwrap().clone()
}

fn edges(r: &Retrieval) -> Vec<(u64, u64)> {
    r.extra["query_graph"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e[0].as_u64().unwrap(), e[1].as_u64().unwrap()))
        .collect()
}

fn has_note(r: &Retrieval, words: &[&str]) -> bool {
    r.notes.iter().any(|n| words.iter().all(|w| n.contains(w)))
}

#[test]
fn primer_rounds_and_reduce_as_the_server_saw_them() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let cfg = config(5, 3, 2, 2);
    let (r, server) = with_server(good_reply, &s, &cfg);

    // HyDE: one call, templated on the highest-rated of the reports nearest the question
    // (Nobel Prizes, 9.5) only.
    let hyde = of_kind(&server, Kind::Hyde);
    assert_eq!(hyde.len(), 1);
    assert!(hyde[0].contains("# Nobel Prizes\n\nMarie Curie won two Nobel Prizes") && hyde[0].contains(QUESTION));
    assert_eq!(titles_in(&hyde[0]), ["Nobel Prizes"]);

    // The primer reports come first, by cosine; the folds hold them round-robin by rank.
    let reports: Vec<_> = r.contexts.iter().take_while(|c| c.kind == "report").collect();
    assert_eq!(reports.len(), 5);
    assert!(reports.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(reports.iter().all(|c| c.id.starts_with("com_") && c.text.starts_with(&format!("# {}", c.title))));
    let primer = of_kind(&server, Kind::Primer);
    assert_eq!(primer.len(), 3);
    for fold in 0..3 {
        let want: Vec<&str> = (fold..5).step_by(3).map(|i| reports[i].title.as_str()).collect();
        let got = primer.iter().map(|p| titles_in(p)).find(|t| t.first() == want.first()).expect("fold sent");
        assert_eq!(got, want, "fold {fold}");
    }

    // Round 1: all primer follow-ups score as the root (mean 56.7): the first two by text.
    // Round 2: the child of the 95-scored answer, then the best remaining root follow-up.
    // The calls of one round run concurrently, so the server may see them in either order.
    let mut asked: Vec<String> = of_kind(&server, Kind::Local).iter().map(|t| follow_up_of(t)).collect();
    assert_eq!(asked.len(), 4);
    asked[..2].sort();
    asked[2..].sort();
    assert_eq!(
        asked,
        [
            "How does Curie family research relate to Marie Curie?",
            "How does Nobel Prizes relate to Marie Curie?",
            "How does Paris and France relate to Marie Curie?",
            "What else about Curie family research?",
        ]
    );
    for t in of_kind(&server, Kind::Local) {
        assert!(t.contains(&format!("Overall question: {QUESTION}")) && t.contains("[1] ("), "local context: {t}");
    }

    // The query graph: root + 4 answered follow-ups, edges parent -> child.
    let ns = nodes(&r);
    assert_eq!(ns.len(), 5);
    assert_eq!(edges(&r), [(0, 1), (0, 2), (1, 3), (0, 4)]);
    assert!(ns.iter().all(|n| n["depth"].as_u64().unwrap() <= 2));
    assert_eq!(ns.iter().map(|n| n["depth"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1, 1, 2, 1]);
    assert_eq!(ns[0]["query"], QUESTION);
    assert!((ns[0]["score"].as_f64().unwrap() - 170.0 / 3.0).abs() < 1e-3);
    assert!(ns[0]["answer"].as_str().unwrap().starts_with("Primer on "));
    assert_eq!(ns[3]["answer"], "Answer to: What else about Curie family research?");
    // The shared follow-up was proposed by every fold in different case: queued once.
    let pending = r.extra["unanswered_follow_ups"].as_array().unwrap();
    let shared =
        pending.iter().filter(|p| p["query"].as_str().unwrap().to_lowercase().contains("where did marie curie"));
    assert_eq!(shared.count(), 1);

    // Reduce: one call over every answer, best score first.
    let reduce = of_kind(&server, Kind::Reduce);
    assert_eq!(reduce.len(), 1);
    let pos = |needle: &str| reduce[0].find(needle).unwrap_or_else(|| panic!("{needle} not in reduce"));
    let order = [
        pos("Answer: Answer to: How does Curie family"),
        pos("Answer: Answer to: What else about Curie"),
        pos("Answer: Primer on"),
        pos("Answer: Answer to: How does Nobel"),
        pos("Answer: Answer to: How does Paris"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(reduce[0].contains("Form of the answer: multiple paragraphs"));
    assert_eq!(r.answer.as_deref(), Some("FINAL ANSWER"));

    // Contexts after the reports: the local searches', distinct.
    let rest = &r.contexts[5..];
    assert!(rest.iter().any(|c| c.kind == "chunk") && rest.iter().all(|c| c.kind != "report"));
    let mut keys: Vec<(&str, &str)> = r.contexts.iter().map(|c| (c.kind.as_str(), c.id.as_str())).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), r.contexts.len());

    // Every call the server saw is counted (HyDE, 3 folds, 4 follow-ups, 4 local-search
    // entity calls, reduce).
    let llm = &r.extra["llm"];
    assert_eq!(llm["calls"].as_u64().unwrap() as usize, server.requests().len());
    assert_eq!(llm["calls"], 13);
    assert_eq!(llm["by_prompt"]["drift_local"], 4);
    assert!(llm["prompt_tokens"].as_u64().unwrap() > 100 && llm["completion_tokens"].as_u64().unwrap() > 20);
    for stage in ["hyde", "primer_reports", "primer", "local_1", "follow_ups_1", "local_2", "follow_ups_2", "reduce"] {
        assert!(r.timings_ms.contains_key(stage), "{stage}: {:?}", r.timings_ms);
    }

    // Same inputs, same search.
    let (again, _server) = with_server(good_reply, &s, &cfg);
    assert_eq!(again.contexts, r.contexts);
    assert_eq!(again.extra["query_graph"], r.extra["query_graph"]);
}

/// The fold reading "Nobel Prizes" and the follow-up about the Curie family get garbage;
/// another fold answers in a chatty code fence with its score as text.
fn partly_garbled(req: &Value) -> String {
    let t = prompt_text(req);
    match kind(req) {
        Kind::Primer if t.contains("# Nobel Prizes") => "I would rather not {answer: this".into(),
        Kind::Primer if t.contains("# Radioactive elements") => format!(
            "Here you go:\n```json\n{}\n```",
            good_reply(req).replace(r#""score":60"#, r#""score":"60/100""#).replace(r#""score":50"#, r#""score":"50""#)
        ),
        Kind::Local if follow_up_of(&t).contains("Curie family") => r#"{"score": 99, "follow_up_queries": []}"#.into(),
        _ => good_reply(req),
    }
}

#[test]
fn garbled_replies_are_dropped_with_notes() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let cfg = config(5, 3, 2, 2);
    let (r, server) = with_server(partly_garbled, &s, &cfg);
    assert!(has_note(&r, &["primer fold", "dropped", "no JSON object"]), "{:#?}", r.notes);
    assert!(has_note(&r, &["Curie family", "dropped", "no `response`"]), "{:#?}", r.notes);
    let ns = nodes(&r);
    // The dropped fold's follow-ups (about Nobel Prizes) were never proposed.
    assert!(of_kind(&server, Kind::Local).iter().all(|t| !t.contains("Follow-up question: How does Nobel")));
    // Root + answered follow-ups only; the dropped one is no node.
    let answered = of_kind(&server, Kind::Local).len() - 1;
    assert_eq!(ns.len(), 1 + answered);
    assert!(ns.iter().all(|n| !n["query"].as_str().unwrap().contains("Curie family")));
    assert_eq!(edges(&r).len(), answered);
    // The two folds left: the root's score is their mean.
    let root_score = ns[0]["score"].as_f64().unwrap();
    assert!(root_score > 40.0 && root_score < 70.0, "{root_score}");
    assert_eq!(r.answer.as_deref(), Some("FINAL ANSWER"));
    assert_eq!(r.extra["primer_folds"].as_array().unwrap().iter().filter(|f| f.get("dropped").is_some()).count(), 1);
}

/// Nothing usable: an empty HyDE draft, garbage everywhere else.
fn all_garbled(req: &Value) -> String {
    match kind(req) {
        Kind::Hyde => "   ".into(),
        Kind::Other => "Marie Curie".into(),
        _ => "```json\n[1, 2, 3]\n```".into(),
    }
}

#[test]
fn nothing_usable_never_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let cfg = config(4, 2, 2, 3);
    let (r, server) = with_server(all_garbled, &s, &cfg);
    assert!(has_note(&r, &["HyDE", "question itself"]), "{:#?}", r.notes);
    assert!(has_note(&r, &["every primer fold was dropped"]), "{:#?}", r.notes);
    assert!(has_note(&r, &["reduce skipped"]), "{:#?}", r.notes);
    // The question itself was followed up once, and dropped: no answer anywhere.
    let asked: Vec<String> = of_kind(&server, Kind::Local).iter().map(|t| follow_up_of(t)).collect();
    assert_eq!(asked, [QUESTION]);
    assert_eq!(nodes(&r).len(), 1);
    assert!(nodes(&r)[0]["answer"].is_null());
    assert!(of_kind(&server, Kind::Reduce).is_empty());
    assert_eq!(r.answer, None);
    // Only the primer's reports remain as contexts.
    assert_eq!(r.contexts.len(), 4);
    assert!(r.contexts.iter().all(|c| c.kind == "report"));
}

#[test]
fn fewer_reports_than_folds_no_rounds_and_a_tight_reduce() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let cfg = config(2, 3, 0, 3);
    let (r, server) = with_server(good_reply, &s, &cfg);
    let primer = of_kind(&server, Kind::Primer);
    assert_eq!(primer.len(), 2);
    assert!(primer.iter().all(|p| titles_in(p).len() == 1));
    assert!(of_kind(&server, Kind::Local).is_empty());
    assert_eq!(nodes(&r).len(), 1);
    let reduce = of_kind(&server, Kind::Reduce);
    assert_eq!(reduce.len(), 1);
    assert!(reduce[0].contains("Answer: Primer on"));

    let mut tight = cfg.clone();
    tight.section_mut::<DriftConfig>().reduce_max_tokens = 5;
    let (r, server) = with_server(good_reply, &s, &tight);
    assert!(of_kind(&server, Kind::Reduce).is_empty());
    assert!(has_note(&r, &["reduce", "left out"]) && has_note(&r, &["reduce skipped"]), "{:#?}", r.notes);
    assert_eq!(r.answer, None);
}

#[test]
fn offline_gives_reports_and_one_local_search() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let cfg = config(3, 3, 2, 3);
    let r = run(&s, &cfg, None);
    let kinds: Vec<&str> = r.contexts.iter().map(|c| c.kind.as_str()).collect();
    assert_eq!(&kinds[..3], ["report"; 3]);
    assert!(kinds[3..].iter().all(|k| *k != "report") && kinds.contains(&"chunk"), "{kinds:?}");
    for skipped in ["HyDE", "fold", "follow-up", "reduce"] {
        assert!(has_note(&r, &["no LLM", skipped]), "{skipped}: {:#?}", r.notes);
    }
    assert_eq!(r.answer, None);
    assert!(!r.extra.contains_key("llm"));
    let ns = nodes(&r);
    assert_eq!(ns.len(), 2);
    assert_eq!((ns[0]["query"].as_str(), ns[1]["query"].as_str()), (Some(QUESTION), Some(QUESTION)));
    assert_eq!(ns[1]["depth"], 1);
    assert_eq!(edges(&r), [(0, 1)]);
    assert_eq!(run(&s, &cfg, None).contexts, r.contexts);
}

#[test]
fn an_index_without_reports_falls_back_to_local_search() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), false);
    let cfg = config(5, 3, 2, 3);
    let offline = run(&s, &cfg, None);
    let (online, server) = with_server(good_reply, &s, &cfg);
    for r in [&offline, &online] {
        assert!(has_note(r, &["no community reports", "local search"]), "{:#?}", r.notes);
        assert!(!r.contexts.is_empty() && r.contexts.iter().all(|c| c.kind != "report"));
        assert_eq!(nodes(r).len(), 2);
        assert_eq!(edges(r), [(0, 1)]);
        assert_eq!(r.answer, None);
    }
    // No DRIFT prompt was sent; only the local search's own entity call.
    assert!(server.requests().iter().all(|q| kind(q) == Kind::Other));
    assert_eq!(online.extra["llm"]["calls"].as_u64().unwrap() as usize, server.requests().len());
}
