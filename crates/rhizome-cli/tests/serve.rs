//! `rhizome serve` end to end, over real HTTP on 127.0.0.1: upload, follow the job,
//! query every method (JSON and streamed), browse, delete, and the same index as
//! `rhizome index`; then keys, limits and bad input.

#[path = "serve_support/observability.rs"]
mod observability;
mod support;
#[path = "serve_support/workspaces.rs"]
mod workspaces;

use std::time::Duration;

use rhizome_engine::{MediaKind, Method};
use serde_json::{json, Value};
use support::server::{expect, expect_error, files_of, ok_json, sse, start, start_with_llm};
use support::{examples, rz, stats};

const QUESTION: &str = "Who shared the Nobel Prize in Physics with Aage Bohr?";

/// `rhizome index` of `files` into a new index: its `stats --json`.
fn cli_stats(files: &[(String, Vec<u8>)]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    for (name, bytes) in files {
        std::fs::write(docs.join(name), bytes).unwrap();
    }
    let index = dir.path().join("index");
    let mut c = rz(&index);
    c.arg("index").arg(&docs);
    support::ok(c);
    stats(&index)
}

fn sources(answer: &Value) -> Vec<String> {
    answer["contexts"].as_array().unwrap().iter().map(|c| c["source"].as_str().unwrap_or("").to_string()).collect()
}

#[test]
fn serve_upload_query_browse_delete() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("index"), &[], &[]);
    assert_eq!(s.get_json("/health")["documents"], 0);
    assert_eq!(
        expect_error(s.post_json("/query", &json!({"question": QUESTION})), 404),
        "the index is empty: nothing has been indexed yet"
    );

    // Upload, and follow the job as server-sent events until it is done.
    let files = files_of(&examples());
    let job = s.upload(&files);
    let events = sse(s.get(&format!("/jobs/{job}/events")));
    let last = &events.last().expect("progress events").1;
    assert!(events.iter().all(|(e, _)| e == "progress"), "{events:?}");
    assert_eq!(last["state"], "done", "{last:#}");
    assert_eq!(last["outcome"]["report"]["documents_indexed"], 3);
    let polled = s.wait_job(job);
    assert_eq!(polled["errors"], json!([]));
    assert_eq!(s.get_json("/health")["documents"], 3);

    // The same files through `rhizome index`: the same graph.
    assert_eq!(s.get_json("/stats"), cli_stats(&files), "GET /stats vs rhizome index of the same files");

    // Every method answers, with its name.
    for m in Method::ALL {
        let a = ok_json(s.post_json("/query", &json!({"question": QUESTION, "method": m.as_str(), "top_k": 3})));
        assert_eq!(a["method"], m.as_str());
        assert!(!a["answer"].as_str().unwrap().trim().is_empty(), "{m}: {a:#}");
        if matches!(*m, Method::Basic | Method::Hippo | Method::Hybrid | Method::Auto) {
            assert!(a["answer"].as_str().unwrap().contains("Mottelson"), "{m}: {a:#}");
            assert!(sources(&a).contains(&"upload:copenhagen-physics.txt".to_string()), "{m}: {a:#}");
        }
    }
    // Per-question settings and a chat history.
    let a = ok_json(s.post_json("/query", &json!({
        "question": "Who was his father?", "method": "basic", "params": {"retrieval.top_k": 2, "hippo.damping": 0.6, "hippo.recognition_filter": false},
        "history": [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": "Ben Mottelson and James Rainwater [1]."}],
    })));
    assert_eq!(a["standalone_question"], "Who was Aage Bohr's father?", "{a:#}");
    assert!(a["answer"].as_str().unwrap().contains("Niels Bohr"), "{a:#}");
    let a = ok_json(s.post_json(
        "/query",
        &json!({
            "question": "And his son?", "method": "hippo",
            "history": [{"role": "user", "content": "When did Niels Bohr receive the Nobel Prize in Physics?"},
                {"role": "assistant", "content": "He received it in 1922 [1]."}],
        }),
    ));
    assert_eq!(a["standalone_question"], "And Niels Bohr's son?", "{a:#}");
    assert!(a["answer"].as_str().unwrap().contains("His son Aage Bohr"), "{a:#}");

    // Streamed: token events, then done with the whole response.
    let events = sse(s.post_json("/query", &json!({"question": QUESTION, "method": "hippo", "stream": true})));
    let (done, tokens) = events.split_last().unwrap();
    assert_eq!(done.0, "done", "{events:?}");
    assert!(!tokens.is_empty() && tokens.iter().all(|(e, _)| e == "token"), "{events:?}");
    let text: String = tokens.iter().map(|(_, v)| v["text"].as_str().unwrap()).collect();
    assert_eq!(text, done.1["answer"].as_str().unwrap());
    assert!(!done.1["contexts"].as_array().unwrap().is_empty());

    // Documents and the graph.
    let list = s.get_json("/documents?search=copenhagen");
    let long = expect_error(s.get(&format!("/documents?search={}", "%25a".repeat(1_001))), 400);
    assert!(long.starts_with("search: 2002 characters"), "{long}");
    assert_eq!(list["total"], 1);
    let id = list["documents"][0]["id"].as_str().unwrap().to_string();
    let doc = s.get_json(&format!("/documents/{id}"));
    assert_eq!(doc["document"]["title"], "copenhagen-physics");
    assert_eq!(doc["document"]["source"], "upload:copenhagen-physics.txt");
    assert!(doc["entities"].as_array().unwrap().iter().any(|e| e["name"] == "Aage Bohr"));
    let found = s.get_json("/graph/entities?q=aage&limit=5");
    assert_eq!(found[0]["name"], "Aage Bohr", "{found:#}");
    let ent = found[0]["id"].as_str().unwrap().to_string();
    let hood = s.get_json("/graph/neighbourhood?entity=Aage%20Bohr&depth=1&max_nodes=10");
    assert_eq!(hood["center"], ent.as_str());
    assert!(hood["nodes"].as_array().unwrap().len() > 1 && !hood["edges"].as_array().unwrap().is_empty());
    let detail = s.get_json(&format!("/graph/entities/{ent}"));
    assert!(!detail["mentions"].as_array().unwrap().is_empty());
    assert!(!s.get_json("/communities").as_array().unwrap().is_empty());
    assert!(!s.get_json("/communities?level=0").as_array().unwrap().is_empty());
    expect_error(s.get("/graph/entities/ent_nope"), 404);
    let api = s.get_json("/openapi.json");
    assert!(api["openapi"].as_str().unwrap().starts_with("3."));
    for p in [
        "/query",
        "/documents",
        "/documents/{id}",
        "/jobs/{id}/events",
        "/v1/chat/completions",
        "/api/chat",
        "/graph/neighbourhood",
    ] {
        assert!(api["paths"][p].is_object(), "{p} missing from /openapi.json");
    }
    // The answer's schema, whatever its name: the one /query's JSON response refers to.
    let answer = api["paths"]["/query"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        .as_str()
        .and_then(|r| r.rsplit('/').next())
        .expect("/query answers with a named schema");
    assert!(api["components"]["schemas"][answer]["properties"]["contexts"].is_object());
    let page = s.get("/docs");
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().unwrap().contains("/openapi.json"));

    // Delete: gone from answers, lists and stats, as if never indexed.
    let del = ok_json(s.delete("/documents/upload:copenhagen-physics.txt"));
    assert_eq!(del["deleted"]["documents"], 1, "{del:#}");
    expect_error(s.get(&format!("/documents/{id}")), 404);
    expect_error(s.delete(&format!("/documents/{id}")), 404);
    for m in ["basic", "hippo"] {
        let a = ok_json(s.post_json("/query", &json!({"question": QUESTION, "method": m})));
        assert!(!sources(&a).contains(&"upload:copenhagen-physics.txt".to_string()), "{m}: {a:#}");
        assert!(!a["answer"].as_str().unwrap().contains("Mottelson"), "{m}: {a:#}");
    }
    let rest: Vec<_> = files.iter().filter(|(n, _)| n != "copenhagen-physics.txt").cloned().collect();
    assert_eq!(s.get_json("/stats"), cli_stats(&rest), "after the delete vs never indexed");
    assert_eq!(s.get_json("/health")["documents"], 2);
    let jobs = s.get_json("/jobs");
    let kinds: Vec<(&str, &str)> =
        jobs.as_array().unwrap().iter().map(|j| (j["kind"].as_str().unwrap(), j["state"].as_str().unwrap())).collect();
    assert_eq!(kinds, [("delete", "failed"), ("delete", "done"), ("index", "done")], "newest first");
}

/// The loader registry is the one list of file types: `GET /formats` is that list, an
/// upload of another type is refused quoting it, and a file of every extension it names
/// is accepted and indexed (documents, or the graph of an edge list).
#[test]
fn every_registered_file_type_uploads_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("index"), &[], &[]);
    let registry = rhizome_ingest::load::FORMATS;
    assert_eq!(s.get_json("/formats"), serde_json::to_value(registry).unwrap());

    let r = s
        .http
        .post(s.url("/documents"))
        .multipart(support::server::form(&[("paper.exe".into(), b"MZ".to_vec())]))
        .send()
        .unwrap();
    let e = expect_error(r, 415);
    assert!(e.contains(&rhizome_ingest::load::extension_list(registry)), "{e}");

    let mut files = Vec::new();
    let mut sources = Vec::new();
    for f in registry {
        for ext in f.extensions {
            let sentence = format!("Aage Bohr wrote the {ext} notes in Copenhagen.");
            let body = match f.kind {
                MediaKind::Text => sentence,
                MediaKind::Markdown => format!("# Notes {ext}\n\n*{sentence}*\n"),
                MediaKind::Html => {
                    format!("<html><head><title>Notes {ext}</title></head><body><p>{sentence}</p></body></html>")
                }
                MediaKind::JsonCorpus => json!([{"title": ext, "text": sentence}]).to_string(),
                MediaKind::JsonLinesCorpus => format!("{}\n", json!({"title": ext, "text": sentence})),
                MediaKind::Csv => format!("source,relation,target\nAage Bohr,wrote,{ext} notes\n"),
                // Binary formats are uploaded by tests/formats.rs, from generated files.
                _ => continue,
            };
            let name = format!("sample-{ext}.{ext}");
            let corpus = if f.kind.is_corpus() { "#0" } else { "" };
            sources.push(format!("upload:{name}{corpus}"));
            files.push((name, body.into_bytes()));
        }
    }
    let done = s.wait_job(s.upload(&files));
    assert_eq!(done["errors"], json!([]), "{done:#}");
    let list = s.get_json("/documents?limit=100");
    let mut listed: Vec<String> =
        list["documents"].as_array().unwrap().iter().map(|d| d["source"].as_str().unwrap().to_string()).collect();
    listed.sort();
    sources.sort();
    assert_eq!(listed, sources, "{done:#}");
}

#[test]
fn serve_keys_limits_and_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let rw = "rw-key-0123456789";
    let ro = "ro-key-0123456789";
    let mut s = start(
        &dir.path().join("index"),
        &["--api-key", rw, "--max-upload-mb", "1"],
        &[("RHIZOME_API_KEYS", &format!("{ro}:ro"))],
    );

    // Keys: none, wrong, read-only, right.
    assert_eq!(s.get_json("/health")["status"], "ok");
    assert!(expect_error(s.get("/stats"), 401).contains("no API key"));
    s.key = Some("wrong-key-0123456789".into());
    assert!(expect_error(s.get("/stats"), 401).contains("wrong API key"));
    let r = s.http.get(s.url("/stats")).header("X-API-Key", ro).send().unwrap();
    ok_json(r);
    s.key = Some(ro.into());
    let doc = vec![("note.txt".to_string(), b"Zorblax Quentin founded the Glimmer Foundation in Oslo.".to_vec())];
    let r = s.http.post(s.url("/documents")).bearer_auth(ro).multipart(support::server::form(&doc)).send().unwrap();
    assert!(expect_error(r, 403).contains("read-only"));
    expect_error(s.delete("/documents/upload:note.txt"), 403);
    s.key = Some(rw.into());

    // A file name that tries to leave the upload folder is a label, nothing more.
    let outside = dir.path().join("etc/x.txt");
    let escape = format!("{}/../../etc/x.txt", dir.path().display());
    let job = s.upload(&[
        ("../../etc/x.txt".to_string(), b"Zorblax Quentin founded the Glimmer Foundation in Oslo.".to_vec()),
        (escape, b"Quentin Zorblax later moved the Glimmer Foundation to Bergen.".to_vec()),
    ]);
    s.wait_job(job);
    s.key = Some(ro.into());
    assert_eq!(
        ok_json(s.post_json("/query", &json!({"question": "Who founded the Glimmer Foundation?"})))["method"],
        "auto"
    );
    s.key = Some(rw.into());
    assert!(!outside.exists() && !std::path::Path::new("/etc/x.txt").exists());
    let list = s.get_json("/documents");
    let labels: Vec<&str> =
        list["documents"].as_array().unwrap().iter().map(|d| d["source"].as_str().unwrap()).collect();
    assert_eq!(labels, ["upload:x.txt", "upload:x.txt"], "{list:#}");

    // Uploads: too large, wrong type, not a file; texts as JSON.
    let big = vec![("big.txt".to_string(), "Aage Bohr. ".repeat(200_000).into_bytes())];
    let r = s.http.post(s.url("/documents")).bearer_auth(rw).multipart(support::server::form(&big)).send().unwrap();
    assert!(expect_error(r, 413).contains("files"));
    let exe = vec![("tool.exe".to_string(), b"MZ".to_vec())];
    let r = s.http.post(s.url("/documents")).bearer_auth(rw).multipart(support::server::form(&exe)).send().unwrap();
    assert!(expect_error(r, 415).contains("tool.exe"));
    let r = s
        .http
        .post(s.url("/documents"))
        .bearer_auth(rw)
        .body("plain")
        .header("content-type", "text/plain")
        .send()
        .unwrap();
    expect_error(r, 415);
    let job = expect(
        s.post_json(
            "/documents",
            &json!({"documents": [{"title": "Glimmer", "text": "The Glimmer Foundation runs a museum in Bergen."}]}),
        ),
        202,
    );
    let done = s.wait_job(job["job_id"].as_u64().unwrap());
    assert_eq!(done["outcome"]["report"]["documents_indexed"], 1);

    // Malformed bodies and parameters: 400 naming the field.
    let bad = |body: Value, field: &str| {
        let e = expect_error(s.post_json("/query", &body), 400);
        assert!(e.contains(field), "{body} -> {e}");
    };
    bad(json!({"question": 5}), "question");
    bad(json!({"questio": "x"}), "questio");
    bad(json!({"question": "  "}), "question");
    bad(json!({"question": "x", "method": "fastest"}), "method");
    bad(json!({"question": "x", "params": {"hippo.damping": 7}}), "hippo.damping");
    bad(json!({"question": "x", "params": {"hippo.dampin": 0.5}}), "hippo.dampin");
    bad(json!({"question": "x", "params": {"retrieval.top_k": [1]}}), "params.retrieval.top_k");
    bad(json!({"question": "x", "history": [{"role": "robot", "content": "hi"}]}), "history[0].role");
    let e = expect_error(s.post_json("/documents", &json!({"documents": [{"title": "a"}]})), 400);
    assert!(e.contains("text"), "{e}");
    let e = expect_error(s.post_json("/documents", &json!({"documents": [{"title": "a", "text": " "}]})), 400);
    assert!(e.contains("documents[0].text"), "{e}");
    let r = s
        .http
        .post(s.url("/query"))
        .bearer_auth(rw)
        .header("content-type", "application/json")
        .body("{\"question\": ")
        .send()
        .unwrap();
    expect_error(r, 400);
    assert!(expect_error(s.get("/graph/neighbourhood?entity=Oslo&depth=9"), 400).contains("depth"));
    assert!(expect_error(s.get("/documents?limit=abc"), 400).contains("limit"));
    expect_error(s.get("/nowhere"), 404);
    expect_error(s.get("/jobs/999"), 404);
    expect_error(
        s.post_json(
            "/v1/chat/completions",
            &json!({"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}),
        ),
        404,
    );
    expect_error(s.post_json("/api/chat", &json!({"model": "rhizome", "messages": []})), 400);

    // Listening beyond loopback needs a key.
    let out = rz(&dir.path().join("index"))
        .args(["serve", "--addr", "0.0.0.0:0"])
        .env_remove("RHIZOME_API_KEYS")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to listen on 0.0.0.0:0 without an API key"));
    drop(s);
    std::thread::sleep(Duration::from_millis(10));
}

/// With an LLM configured (a loopback OpenAI-compatible mock), the answer streams token by
/// token: over `POST /query` as `token` events and over the OpenAI endpoint as chunks.
#[test]
fn serve_streams_llm_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let (_llm, s) =
        start_with_llm(&dir.path().join("index"), "Ben Mottelson and James Rainwater shared it with him [1].");
    let job = s.upload(&files_of(&examples()));
    s.wait_job(job);
    let events = sse(s.post_json("/query", &json!({"question": QUESTION, "method": "basic", "stream": true})));
    let (done, tokens) = events.split_last().unwrap();
    assert_eq!(done.0, "done", "{events:?}");
    assert_eq!(done.1["answer_kind"], "llm");
    assert!(tokens.len() >= 5, "the answer came in {} piece(s): {events:?}", tokens.len());
    let text: String = tokens.iter().map(|(_, v)| v["text"].as_str().unwrap()).collect();
    assert_eq!(text, "Ben Mottelson and James Rainwater shared it with him [1].");
    assert_eq!(done.1["answer"], text.as_str());

    // Another question: a cached answer would arrive whole.
    let chunks = sse(s.post_json(
        "/v1/chat/completions",
        &json!({
            "model": "rhizome-basic", "stream": true,
            "messages": [{"role": "user", "content": "Who shared the 1975 Nobel Prize in Physics with Aage Bohr?"}],
        }),
    ));
    assert_eq!(chunks.last().unwrap().1, "[DONE]");
    let deltas: Vec<&str> = chunks
        .iter()
        .filter_map(|(_, c)| c["choices"][0]["delta"]["content"].as_str())
        .filter(|d| !d.is_empty())
        .collect();
    assert!(deltas.len() >= 6, "{chunks:?}");
    let reply = deltas.concat();
    assert!(
        reply.starts_with("Ben Mottelson and James Rainwater shared it with him [1].\n\nSources:\n[1] "),
        "{reply}"
    );
    assert_eq!(chunks[chunks.len() - 2].1["choices"][0]["finish_reason"], "stop");
}
