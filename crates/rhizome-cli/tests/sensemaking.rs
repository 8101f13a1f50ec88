//! The corpus-wide methods over a Microsoft GraphRAG import (Operation Dulce): `global`,
//! `drift`, `local` and `tog` against the loopback OpenAI-compatible server, with their
//! work checked through the requests the server saw; and every method offline.

use std::path::{Path, PathBuf};
use std::process::Command;

use rhizome_llm_testing::{last_user_text, MockOpenAi};
use rhizome_retrieve::Method;
use serde_json::{json, Value};

fn fixture() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/graphrag_fixtures/operation_dulce");
    assert!(p.join("entities.parquet").exists(), "GraphRAG fixture missing at {}", p.display());
    p.canonicalize().unwrap()
}

fn rz(index: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    c.arg("--index").arg(index).env_remove("RHIZOME_INDEX").env_remove("RHIZOME_CONFIG");
    c
}

fn json_of(mut c: Command) -> Value {
    c.arg("--json");
    let out = c.output().expect("run rhizome");
    assert!(
        out.status.success(),
        "rhizome failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn imported() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.args(["import", "graphrag-parquet"]).arg(fixture());
    json_of(c);
    (tmp, idx)
}

/// Report numbers shown in a global map prompt.
fn report_numbers(text: &str) -> Vec<u64> {
    text.lines().filter_map(|l| l.strip_prefix("----- Report ")?.strip_suffix(" -----")?.parse().ok()).collect()
}

/// One scripted reply per prompt kind, told apart by the prompt's own wording.
fn reply(req: &Value) -> String {
    let u = last_user_text(req);
    if u.contains("Community reports (your share):") {
        let points: Vec<Value> = report_numbers(&u)
            .into_iter()
            .map(
                |n| json!({"description": format!("Point from report {n}"), "score": (n * 7) % 90 + 5, "reports": [n]}),
            )
            .collect();
        json!({ "points": points }).to_string()
    } else if u.contains("Points reported by the analysts") {
        "GLOBAL ANSWER [Reports 1]".into()
    } else if u.contains("Draft a report in the same shape") {
        "# Operation Dulce\n\nThe Paranormal Military Squad leads Operation Dulce at Dulce Base.".into()
    } else if u.contains("Answer the question as far as these reports allow") {
        json!({"intermediate_answer": "The squad leads it.", "score": 60,
               "follow_up_queries": ["Who is Alex Mercer?", "What is Dulce Base?"]})
        .to_string()
    } else if u.contains("Follow-up question:") {
        let f = u.split("Follow-up question:").nth(1).unwrap_or("").lines().next().unwrap_or("").trim().to_string();
        json!({"response": format!("Answer to {f}"), "score": 50,
               "follow_up_queries": [format!("What else about {f}")]})
        .to_string()
    } else if u.contains("Findings of the earlier steps") {
        "DRIFT ANSWER".into()
    } else if u.contains("Candidate relations of the current entity:") {
        json!({"1": 0.9, "2": 0.8, "3": 0.2, "4": 0.1}).to_string()
    } else if u.contains("\"sufficient\"") {
        json!({"sufficient": false, "answer": ""}).to_string()
    } else if u.contains("Knowledge graph paths:") {
        "TOG ANSWER [P1]".into()
    } else if u.contains("List the proper nouns") {
        "Alex Mercer".into()
    } else if u.contains("Contexts:") {
        "LOCAL ANSWER [1]".into()
    } else {
        "{}".into()
    }
}

fn with_llm(idx: &Path, server: &MockOpenAi) -> Command {
    let mut c = rz(idx);
    c.args(["--llm-provider", "openai", "--llm-model", "mock-model", "--llm-base-url"])
        .arg(server.base_url())
        .env("RHIZOME_LLM_API_KEY", "sk-loopback");
    c
}

fn user_texts(server: &MockOpenAi, marker: &str) -> Vec<String> {
    server.requests().iter().map(last_user_text).filter(|u| u.contains(marker)).collect()
}

#[test]
fn global_map_reduce_batches_points_and_reduces_once() {
    let (_tmp, idx) = imported();
    let server = MockOpenAi::with_responder(Box::new(reply)).unwrap();
    let mut c = with_llm(&idx, &server);
    c.args(["--set", "global.map_max_tokens=1200", "query", "--method", "global", "What are the main themes?"]);
    let r = json_of(c);
    assert_eq!(r["answer"], "GLOBAL ANSWER [Reports 1]", "{r:#}");
    let selected = r["extra"]["reports"]["selected"].as_u64().unwrap();
    // Level 2 is below the fixture's two levels: its 9 leaves (communities 1-6 at level
    // 0, and 7-9, the children of community 0, at level 1) cover the graph.
    assert_eq!(selected, 9, "the leaves of the two-level hierarchy: {r:#}");
    let maps = user_texts(&server, "Community reports (your share):");
    assert_eq!(maps.len() as u64, r["extra"]["map"]["batches"].as_u64().unwrap(), "{r:#}");
    assert!(maps.len() > 1, "a 1,200-token map budget splits the reports: {r:#}");
    for t in r["extra"]["map"]["batch_tokens"].as_array().unwrap() {
        assert!(t.as_u64().unwrap() <= 1200, "{r:#}");
    }
    let mut seen: Vec<u64> = maps.iter().flat_map(|m| report_numbers(m)).collect();
    seen.sort();
    assert_eq!(seen, (1..=selected).collect::<Vec<_>>(), "every report in exactly one batch");
    let reduces = user_texts(&server, "Points reported by the analysts");
    assert_eq!(reduces.len(), 1);
    let scores: Vec<u64> =
        reduces[0].lines().filter_map(|l| l.strip_prefix("Importance score: ")?.parse().ok()).collect();
    assert_eq!(scores.len() as u64, r["extra"]["map"]["points_kept"].as_u64().unwrap());
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "points sorted by score: {scores:?}");
    assert!(reduces[0].contains("----- Analyst "), "points labelled by analyst");
    assert!(r["contexts"].as_array().unwrap().iter().any(|c| c["kind"] == "report"), "cited reports: {r:#}");

    // A reduce budget that holds only a few points keeps the best ones.
    let mut c = with_llm(&idx, &server);
    c.args(["--set", "global.reduce_max_tokens=40", "query", "--method", "global", "What are the main themes?"]);
    let r = json_of(c);
    let kept = r["extra"]["map"]["points_kept"].as_u64().unwrap();
    assert!(kept >= 1 && kept < r["extra"]["map"]["points"].as_u64().unwrap(), "{r:#}");
}

#[test]
fn drift_builds_a_query_graph_from_primer_folds_and_local_rounds() {
    let (_tmp, idx) = imported();
    let server = MockOpenAi::with_responder(Box::new(reply)).unwrap();
    let mut c = with_llm(&idx, &server);
    c.args(["query", "--method", "drift", "How does the squad prepare for Operation Dulce?"]);
    let r = json_of(c);
    assert_eq!(r["answer"], "DRIFT ANSWER", "{r:#}");
    assert_eq!(user_texts(&server, "Draft a report in the same shape").len(), 1);
    assert_eq!(user_texts(&server, "Answer the question as far as these reports allow").len(), 3, "primer_folds = 3");
    let locals = user_texts(&server, "Follow-up question:");
    assert!(!locals.is_empty() && locals.len() <= 2 * 3, "n_depth 2 x drift_k_followups 3: {}", locals.len());
    assert_eq!(user_texts(&server, "Findings of the earlier steps").len(), 1);
    let g = &r["extra"]["query_graph"];
    let nodes = g["nodes"].as_array().unwrap();
    let edges = g["edges"].as_array().unwrap();
    assert_eq!(nodes.len(), 1 + locals.len(), "root + one node per answered follow-up: {g:#}");
    assert_eq!(edges.len(), nodes.len() - 1, "a tree: {g:#}");
    assert!(nodes.iter().all(|n| n["depth"].as_u64().unwrap() <= 2), "{g:#}");
    let ids: Vec<&Value> = nodes.iter().map(|n| &n["id"]).collect();
    for e in edges {
        assert!(ids.contains(&&e[0]) && ids.contains(&&e[1]), "edge between known nodes: {g:#}");
    }
    assert!(r["extra"]["llm"]["calls"].as_u64().unwrap() >= 6, "{r:#}");
}

#[test]
fn local_uses_reports_and_claims_and_tog_keeps_its_beam() {
    let (_tmp, idx) = imported();
    let server = MockOpenAi::with_responder(Box::new(reply)).unwrap();
    let mut c = with_llm(&idx, &server);
    c.args(["query", "--method", "local", "What is Alex Mercer's role in Operation Dulce?"]);
    let r = json_of(c);
    assert_eq!(r["answer_kind"], "llm", "{r:#}");
    let kinds: Vec<&str> = r["contexts"].as_array().unwrap().iter().map(|c| c["kind"].as_str().unwrap()).collect();
    for k in ["report", "entity", "relationship", "claim", "chunk"] {
        assert!(kinds.contains(&k), "local context has {k}: {kinds:?}");
    }
    assert!(r["extra"]["budget"]["communities"].as_u64().unwrap() > 0, "{r:#}");

    let before = server.request_count();
    let mut c = with_llm(&idx, &server);
    c.args([
        "--set",
        "tog.width=2",
        "--set",
        "tog.depth=2",
        "--set",
        "tog.num_retain_entity=2",
        "query",
        "--method",
        "tog",
        "Who does Alex Mercer work with at Dulce Base?",
    ]);
    let r = json_of(c);
    assert_eq!(r["answer"], "TOG ANSWER [P1]", "{r:#}");
    let reqs: Vec<String> = server.requests()[before..].iter().map(last_user_text).collect();
    let prunes = reqs.iter().filter(|u| u.contains("Candidate relations of the current entity:")).count();
    let depths = r["extra"]["depths"].as_array().unwrap();
    assert!(!depths.is_empty() && depths.len() <= 2, "{r:#}");
    assert!(prunes <= 2 * depths.len(), "at most width prune calls per depth: {prunes}");
    for d in depths {
        assert!(d["kept"].as_array().unwrap().len() <= 2, "beam width 2: {d:#}");
    }
    let answers: Vec<&String> =
        reqs.iter().filter(|u| u.contains("Knowledge graph paths:") && !u.contains("\"sufficient\"")).collect();
    assert_eq!(answers.len(), 1);
    assert!(answers[0].contains("[P1]") && !answers[0].contains("[P3]"), "at most width paths: {}", answers[0]);
    assert!(r["paths"].as_array().unwrap().len() <= 2, "{r:#}");
}

#[test]
fn every_method_answers_offline_and_says_what_it_skipped() {
    let (_tmp, idx) = imported();
    let q = "What is the Paranormal Military Squad doing at Dulce Base?";
    for m in Method::ALL {
        let mut c = rz(&idx);
        c.args(["query", "--method", m.as_str(), q]);
        let r = json_of(c);
        assert!(!r["contexts"].as_array().unwrap().is_empty(), "{m} offline: {r:#}");
        assert_eq!(r["answer_kind"], "extractive", "{m}: {r:#}");
        if [Method::Global, Method::Drift, Method::Tog, Method::Local].contains(m) {
            let notes = r["notes"].to_string().to_lowercase();
            assert!(notes.contains("no llm"), "{m} says what it skipped: {r:#}");
        }
    }
}
