//! `rhizome` with an OpenAI-compatible LLM: the loopback server (real HTTP) scripts
//! answers and failures; the binary indexes, caches, accounts and answers.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rhizome_llm_testing::{Fault, MockOpenAi};
use serde_json::Value;

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/docs")
}

fn rz(index: &Path, server: &MockOpenAi) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    c.arg("--index")
        .arg(index)
        .args(["--llm-provider", "openai", "--llm-model", "mock-model", "--llm-base-url"])
        .arg(server.base_url())
        .args(["--set", "llm.retry_base_ms=10", "--set", "llm.timeout_s=1", "--set", "llm.concurrency=1"])
        .env_remove("RHIZOME_INDEX")
        .env_remove("RHIZOME_CONFIG")
        .env("RHIZOME_LLM_API_KEY", "sk-loopback");
    c
}

fn run_json(mut c: Command) -> Value {
    c.arg("--json");
    let out: Output = c.output().unwrap();
    assert!(
        out.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn llm_extraction_survives_failures_and_never_pays_twice() {
    let server = MockOpenAi::start().unwrap();
    server.push_faults([
        Fault::RateLimited { retry_after_s: 0 },
        Fault::ServerError,
        Fault::Slow(std::time::Duration::from_millis(2500)),
        Fault::Malformed,
        Fault::Truncated,
        Fault::Chatty,
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");

    // Dry run first: it estimates and spends nothing.
    let mut c = rz(&idx, &server);
    c.args(["index", "--extractor", "llm", "--dry-run"]).arg(docs());
    let plan = run_json(c);
    assert_eq!(plan["documents_new"], 3);
    assert_eq!(plan["llm"]["calls"], plan["chunks"]);
    assert!(plan["llm"]["estimated_prompt_tokens"].as_u64().unwrap() > 500, "{plan}");
    assert_eq!(server.request_count(), 0);

    let mut c = rz(&idx, &server);
    c.args(["index", "--extractor", "llm"]).arg(docs());
    let first = run_json(c);
    assert_eq!(first["report"]["documents_indexed"], 3, "{first}");
    let usage = &first["llm_usage"]["extract"];
    assert_eq!(usage["failed_calls"], 0, "all faults were retried: {first}");
    assert!(usage["calls"].as_u64().unwrap() >= 3);
    assert!(usage["prompt_tokens"].as_u64().unwrap() > 0);
    let stats = &first["stats"];
    assert!(stats["nodes"]["Entity"].as_u64().unwrap() >= 5, "{stats}");
    assert!(stats["nodes"]["Fact"].as_u64().unwrap() >= 2, "{stats}");
    assert!(stats["edges"]["RELATED"].as_u64().unwrap() >= 2, "{stats}");
    let calls_after_first = server.request_count();
    // One community-report call per community (this responder's replies are extraction
    // JSON, not reports: extractive reports stand in, and count as failures).
    let com = &first["communities"];
    let report_calls = com["reports_llm"].as_u64().unwrap() + com["llm_failures"].as_u64().unwrap();
    assert_eq!(report_calls, com["communities"].as_u64().unwrap(), "{first}");
    // One description per document (this responder's replies are extraction JSON, not
    // descriptions: extractive ones stand in, and count as failures).
    assert_eq!(first["described"], serde_json::json!({"described": 3, "by_llm": 0, "llm_failures": 3}), "{first}");
    // 3 chunks + 4 faulted attempts (the truncated and chatty answers are parsed, not
    // retried), then the 3 descriptions and the reports.
    assert_eq!(calls_after_first as u64, 3 + 4 + 3 + report_calls, "requests seen");
    // The extractor's importance judgements (0.5 from this responder) are stored and reach
    // the community reports' material.
    let reports: Vec<String> = server
        .requests()
        .iter()
        .map(rhizome_llm_testing::last_user_text)
        .filter(|u| u.contains("Write a report about this community"))
        .collect();
    assert!(!reports.is_empty() && reports.iter().all(|u| u.contains("importance 0.5")), "{reports:#?}");

    // Same input again: nothing new to do, zero calls.
    let mut c = rz(&idx, &server);
    c.args(["index", "--extractor", "llm"]).arg(docs());
    run_json(c);
    assert_eq!(server.request_count(), calls_after_first);

    // Delete everything and index again: every response comes from the cache.
    for f in ["copenhagen-physics.txt", "knowledge-graphs.html", "rhizome-plants.md"] {
        let mut c = rz(&idx, &server);
        c.arg("delete").arg(docs().join(f));
        run_json(c);
    }
    let mut c = rz(&idx, &server);
    c.args(["index", "--extractor", "llm"]).arg(docs());
    let again = run_json(c);
    assert_eq!(server.request_count(), calls_after_first, "zero LLM calls on re-index");
    assert_eq!(again["llm_usage"]["extract"]["cached_calls"], 3);
    assert_eq!(again["stats"], first["stats"]);
}

#[test]
fn a_chunk_whose_calls_keep_failing_is_kept_and_reported() {
    let server = MockOpenAi::start().unwrap();
    server.push_faults([Fault::ServerError; 3]);
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx, &server);
    c.args(["index", "--extractor", "llm", "--set", "llm.max_retries=2"]).arg(docs().join("rhizome-plants.md"));
    c.arg("--json");
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("extraction failed for chunk") && err.contains("gave up after 3 attempts"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stats"]["nodes"]["Chunk"], 1, "the chunk is kept");
    assert_eq!(v["llm_usage"]["extract"]["failed_calls"], 1);
    assert_eq!(v["report"]["extraction_failures"], 1);
    assert_eq!(v["failed_chunks_pending"].as_array().unwrap().len(), 1);
    assert_eq!(v["stats"]["nodes"]["Entity"], 0, "no graph for the failed chunk yet");

    // The endpoint is healthy again: the next run, on any input, extracts the failed chunk.
    let mut c = rz(&idx, &server);
    c.args(["index", "--extractor", "llm"]).arg(docs().join("rhizome-plants.md"));
    let again = run_json(c);
    assert_eq!(again["report"]["failures_retried"], 1);
    assert_eq!(again["report"]["failures_recovered"], 1);
    assert_eq!(again["report"]["documents_indexed"], 0, "the document itself was already there");
    assert!(again["failed_chunks_pending"].as_array().unwrap().is_empty());
    assert!(again["stats"]["nodes"]["Entity"].as_u64().unwrap() > 0, "{again}");
}

#[test]
fn near_duplicate_entities_merge_into_one() {
    // Two chunks name the same organisation two ways; the second is merged into the first.
    let server = MockOpenAi::with_responder(Box::new(|req: &Value| {
        let text = rhizome_llm_testing::last_user_text(req);
        if text.contains("Congress passed") {
            r#"{"entities": [{"name": "United States Congress", "type": "ORGANIZATION", "description": "The legislature."}], "relations": [], "facts": []}"#.into()
        } else {
            r#"{"entities": [{"name": "U.S. Congress", "type": "ORGANIZATION", "description": "Passed the act."}, {"name": "August 19", "type": "DATE", "description": "A day."}, {"name": "August 29", "type": "DATE", "description": "Another day."}], "relations": [], "facts": []}"#.into()
        }
    }))
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (idx, dir) = (tmp.path().join("idx"), tmp.path().join("docs"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "Congress passed the act in 1791.").unwrap();
    std::fs::write(dir.join("b.txt"), "The U.S. Congress met on August 19 and August 29.").unwrap();
    let mut c = rz(&idx, &server);
    c.args(["index", "--extractor", "llm"]).arg(dir.join("a.txt"));
    run_json(c);
    let mut c = rz(&idx, &server);
    c.args(["index", "--extractor", "llm"]).arg(dir.join("b.txt"));
    let v = run_json(c);
    assert_eq!(v["report"]["entities_merged"], 1, "{v}");
    assert_eq!(v["stats"]["nodes"]["Entity"], 3, "Congress once, both dates kept: {v}");
}

#[test]
fn answers_with_the_llm_and_citations() {
    let server = MockOpenAi::with_responder(Box::new(|req: &Value| {
        let text = rhizome_llm_testing::last_user_text(req);
        assert!(text.contains("[1]"), "contexts are numbered");
        "Ben Mottelson and James Rainwater shared it with him [1].".to_string()
    }))
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    c.arg("--index").arg(&idx).arg("index").arg(docs()).env_remove("RHIZOME_INDEX");
    assert!(c.output().unwrap().status.success());
    let mut c = rz(&idx, &server);
    c.args(["query", "Who shared the Nobel Prize in Physics with Aage Bohr?"]);
    let r = run_json(c);
    assert_eq!(r["answer_kind"], "llm");
    assert!(r["answer"].as_str().unwrap().contains("[1]"));
    let prompt = server.requests()[0].to_string();
    assert!(prompt.contains("Aage Bohr") && prompt.contains("insufficient"), "answer prompt: {prompt}");
}

#[test]
fn entities_described_in_several_chunks_get_one_llm_summary() {
    let server = MockOpenAi::with_responder(Box::new(|req: &Value| {
        let text = rhizome_llm_testing::last_user_text(req);
        if text.contains("Combined description") {
            return "Ada Lovelace was a mathematician who wrote about the Analytical Engine.".into();
        }
        let doc = text.rsplit_once("Text:").map(|x| x.1.to_string()).unwrap_or(text);
        let n = doc.len();
        serde_json::json!({"entities": [
            {"name": "Ada Lovelace", "type": "PERSON", "description": format!("Seen in a text of {n} characters."), "importance": 1.0}
        ], "relations": [], "facts": []}).to_string()
    }))
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::create_dir_all(&input).unwrap();
    std::fs::write(input.join("a.txt"), "Ada Lovelace wrote notes on the Analytical Engine.").unwrap();
    std::fs::write(input.join("b.txt"), "In 1843 Ada Lovelace published the first algorithm for a machine.").unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx, &server);
    c.args(["index", "--extractor", "llm", "--set", "llm.summarize_min_descriptions=2"]).arg(&input);
    let r = run_json(c);
    assert_eq!(r["report"]["entities_summarized"], 1, "{r}");
    assert_eq!(r["llm_usage"]["summarize"]["calls"], 1, "{r}");
    let summary_req = server.requests().into_iter().find(|r| r.to_string().contains("Combined description")).unwrap();
    assert!(summary_req.to_string().contains("Seen in a text of"), "both descriptions are given: {summary_req}");
}

/// The describing prompt's user message starts so.
const DESCRIBE: &str = "Describe the document below";

#[test]
fn documents_are_described_by_the_llm_once_and_unreadable_replies_are_counted() {
    let server = MockOpenAi::with_responder(Box::new(|req: &Value| {
        let text = rhizome_llm_testing::last_user_text(req);
        if !text.contains(DESCRIBE) {
            return rhizome_llm_testing::extraction_reply(&text);
        }
        let reply = if text.contains("knowledge graph") {
            return "I would rather not describe this document.".into();
        } else if text.contains("rhizome") {
            // A type not in the list and hashtags written as hashtags.
            serde_json::json!({"summary": "Rhizomes are stems that grow underground.", "type": "botany",
                "hashtags": ["#rhizome", "Ginger"]})
        } else if text.contains("OpenAI") || text.contains("AI") {
            serde_json::json!({"summary": "这篇文章介绍人工智能领域的投资。", "type": "article",
                "hashtags": ["人工智能", "OpenAI"]})
        } else {
            serde_json::json!({"summary": "Niels Bohr founded an institute in Copenhagen in 1921.", "type": "Article",
                "hashtags": ["Niels Bohr", "Copenhagen"]})
        };
        format!("Here is the entry:\n```json\n{reply}\n```")
    }))
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx, &server);
    c.arg("index").arg(docs());
    let r = run_json(c);
    assert_eq!(r["described"], serde_json::json!({"described": 3, "by_llm": 2, "llm_failures": 1}), "{r:#}");
    assert_eq!(r["llm_usage"]["describe"]["calls"], 3, "one call per document: {r:#}");
    let describe_calls = || server.requests().iter().filter(|q| q.to_string().contains(DESCRIBE)).count();
    assert_eq!(describe_calls(), 3);

    let mut c = rz(&idx, &server);
    c.arg("documents");
    let listed = run_json(c);
    let meta = |file: &str| {
        let d = listed["documents"].as_array().unwrap().iter().find(|d| d["source"].as_str().unwrap().ends_with(file));
        d.unwrap_or_else(|| panic!("{file}: {listed:#}"))["meta"].clone()
    };
    let bohr = meta("copenhagen-physics.txt");
    assert_eq!(bohr["summary"], "Niels Bohr founded an institute in Copenhagen in 1921.");
    assert_eq!((bohr["type"].as_str(), bohr["described_by"].as_str()), (Some("article"), Some("llm")), "{bohr:#}");
    assert_eq!(bohr["hashtags"], serde_json::json!(["Niels Bohr", "Copenhagen"]));
    let plants = meta("rhizome-plants.md");
    assert_eq!(plants["hashtags"], serde_json::json!(["rhizome", "Ginger"]), "{plants:#}");
    assert!(
        plants["type"].is_string() && plants["type"] != "botany",
        "a type outside the list is not taken: {plants:#}"
    );
    let graphs = meta("knowledge-graphs.html");
    assert_eq!(graphs["described_by"], "extractive", "an unreadable reply: described without the LLM: {graphs:#}");
    assert!(graphs["summary"].as_str().unwrap().contains("knowledge graph"), "{graphs:#}");

    // Described once: indexing again asks nothing; describing everything again is answered
    // from the cache.
    let mut c = rz(&idx, &server);
    c.arg("index").arg(docs());
    assert_eq!(run_json(c)["described"]["described"], 0);
    let mut c = rz(&idx, &server);
    c.args(["describe", "--force"]);
    assert_eq!(run_json(c)["by_llm"], 2);
    assert_eq!(describe_calls(), 3, "every reply came from the cache");

    // Chinese documents: the LLM's Chinese summary and hashtags are kept as written.
    let zh = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/zh_openai");
    let zidx = tmp.path().join("zh");
    let mut c = rz(&zidx, &server);
    c.arg("index").arg(&zh);
    assert_eq!(run_json(c)["described"]["by_llm"], 3);
    let mut c = rz(&zidx, &server);
    c.arg("documents");
    for d in run_json(c)["documents"].as_array().unwrap() {
        assert_eq!(d["meta"]["summary"], "这篇文章介绍人工智能领域的投资。", "{d:#}");
        assert_eq!(d["meta"]["hashtags"], serde_json::json!(["人工智能", "OpenAI"]), "{d:#}");
    }
}

/// The claims prompt's user message says so.
const CLAIMS: &str = "list its claims about these entities";

#[test]
fn claims_are_extracted_stored_used_by_local_and_deleted_with_their_document() {
    let server = MockOpenAi::with_responder(Box::new(|req: &Value| {
        let text = rhizome_llm_testing::last_user_text(req);
        if !text.contains(CLAIMS) {
            let doc = text.rsplit_once("Text:").map(|x| x.1.to_string()).unwrap_or(text);
            return rhizome_llm_testing::extraction_reply(&doc);
        }
        if text.contains("Bohr founded") {
            let claims = serde_json::json!({"claims": [
                {"subject": "Niels", "object": "Copenhagen", "type": "founding", "status": "TRUE",
                 "start_date": "1921", "end_date": null,
                 "description": "Niels Bohr founded the Institute for Theoretical Physics in Copenhagen in 1921.",
                 "source_text": "Niels Bohr founded the Institute for Theoretical Physics"},
                {"subject": "Mottelson", "type": "award", "status": "confirmed",
                 "description": "Ben Mottelson shared the Nobel Prize in Physics in 1975."},
                {"subject": "Einstein", "type": "visit", "description": "A subject the text never names."}
            ]});
            return format!("Claims found:\n```json\n{claims}\n```");
        }
        if text.contains("knowledge graph") {
            return "I found no claims worth listing.".into();
        }
        // A reply cut in the middle: read as far as it goes.
        r#"{"claims": [{"subject": "Rhizomes", "descrip"#.into()
    }))
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let claims_on = ["--extractor", "llm", "--set", "extract.claims=true"];

    // Claims need the LLM extractor: said before anything is written.
    let mut c = rz(&idx, &server);
    c.args(["index", "--set", "extract.claims=true"]).arg(docs());
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("extract.claims") && err.contains("--extractor llm"), "{err}");
    assert!(!idx.join("rhizome.db").exists() || server.request_count() == 0);

    let mut c = rz(&idx, &server);
    c.arg("index").args(claims_on).arg(docs());
    let r = run_json(c);
    let report = &r["report"];
    assert_eq!(report["claims"], 2, "the made-up subject is dropped: {r:#}");
    assert_eq!(report["claim_replies_unreadable"], 1, "the prose reply is counted: {r:#}");
    assert_eq!(report["extraction_failures"], 0, "an unreadable claims reply fails no chunk: {r:#}");
    assert_eq!(r["stats"]["nodes"]["Covariate"], 2, "{r:#}");
    assert_eq!(r["llm_usage"]["claims"]["calls"], 3, "one claims call per chunk: {r:#}");

    // `local` puts them in its context.
    let mut c = rz(&idx, &server);
    c.args(["query", "--method", "local", "What did Niels Bohr found in Copenhagen?"]);
    let q = run_json(c);
    let contexts = q["contexts"].as_array().unwrap();
    let claim = contexts.iter().find(|c| c["kind"] == "claim").unwrap_or_else(|| panic!("no claim: {q:#}"));
    assert!(claim["text"].as_str().unwrap().contains("[FOUNDING · TRUE] Niels Bohr founded"), "{claim:#}");

    // Indexing again asks nothing and writes nothing twice.
    let calls = server.request_count();
    let mut c = rz(&idx, &server);
    c.arg("index").args(claims_on).arg(docs());
    assert_eq!(run_json(c)["stats"]["nodes"]["Covariate"], 2);
    assert_eq!(server.request_count(), calls);

    // Deleting the document deletes its claims.
    let mut c = rz(&idx, &server);
    c.arg("delete").arg(docs().join("copenhagen-physics.txt"));
    run_json(c);
    let mut c = rz(&idx, &server);
    c.arg("stats");
    let stats = run_json(c);
    assert_eq!(stats["nodes"].get("Covariate").and_then(Value::as_u64).unwrap_or(0), 0, "{stats:#}");
}
