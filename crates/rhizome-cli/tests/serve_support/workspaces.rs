//! Workspaces and keys with roles, end to end: two workspaces with different documents
//! behind one `rhizome serve`, keys made by `rhizome keys add` in the key file it reads,
//! and every route of the API document tried with every key: nothing of one workspace
//! (its documents, entities, answers, jobs, models) reaches another's keys, a read key
//! cannot write, keys are revoked without a restart, idle workspaces are closed.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::server::{expect, expect_error, form, ok_json, serve_cmd, start_cmd, Server};
use crate::support::{ok, rz};

/// Words only workspace A's documents hold, and only B's.
const A_DOC: &str = "Zorvath Quillmere founded the Ambermoor Observatory in Tromsø in 1911. \
    The Ambermoor Observatory measured the aurora for Zorvath Quillmere.";
const A_MARKS: &[&str] = &["Zorvath", "Quillmere", "Ambermoor"];
const B_DOC: &str = "Pellucid Vantor built the Corran Lighthouse at Skerryvale in 1870. \
    Pellucid Vantor kept the Corran Lighthouse lit for forty years.";
const B_MARKS: &[&str] = &["Pellucid", "Vantor", "Corran"];
/// A question about A's document that names none of its marks (an answer that echoes
/// the question must not count as a leak).
const QUESTION: &str = "Who founded the observatory in Tromsø in 1911?";

fn add_key(index: &Path, name: &str, role: &str, workspaces: &str) -> String {
    let mut c = rz(index);
    c.args(["keys", "add", name, "--role", role]);
    if !workspaces.is_empty() {
        c.args(["--workspaces", workspaces]);
    }
    let out = ok(c);
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn send(
    s: &Server,
    key: Option<&str>,
    method: &str,
    path: &str,
    body: Option<&Value>,
    header_ws: Option<&str>,
) -> (u16, String) {
    let url = s.url(path);
    let mut r = match method {
        "get" => s.http.get(url),
        "post" => s.http.post(url),
        "delete" => s.http.delete(url),
        "put" => s.http.put(url),
        "patch" => s.http.patch(url),
        m => panic!("method {m}"),
    };
    if let Some(k) = key {
        r = r.bearer_auth(k);
    }
    if let Some(w) = header_ws {
        r = r.header("X-Rhizome-Workspace", w);
    }
    if let Some(b) = body {
        r = r.json(b);
    }
    let resp = r.timeout(Duration::from_secs(60)).send().unwrap();
    let status = resp.status().as_u16();
    (status, resp.text().unwrap_or_default())
}

fn upload(s: &Server, key: &str, prefix: &str, name: &str, text: &str) -> u64 {
    let files = vec![(name.to_string(), text.as_bytes().to_vec())];
    let r = s.http.post(s.url(&format!("{prefix}/documents"))).bearer_auth(key).multipart(form(&files)).send().unwrap();
    expect(r, 202)["job_id"].as_u64().unwrap()
}

fn wait_job(s: &Server, key: &str, prefix: &str, id: u64) {
    let t = Instant::now();
    loop {
        let (status, text) = send(s, Some(key), "get", &format!("{prefix}/jobs/{id}"), None, None);
        assert_eq!(status, 200, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        match v["state"].as_str() {
            Some("done") => return,
            Some("failed") => panic!("job failed: {v:#}"),
            _ => assert!(t.elapsed() < Duration::from_secs(300), "job not done: {v:#}"),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A request body for each POST route of the API document.
fn body_for(path: &str) -> Option<Value> {
    Some(match path {
        "/query" => json!({"question": QUESTION, "method": "local"}),
        "/v1/chat/completions" => {
            json!({"model": "rhizome-local", "messages": [{"role": "user", "content": QUESTION}]})
        }
        "/api/chat" => {
            json!({"model": "rhizome-local", "stream": false, "messages": [{"role": "user", "content": QUESTION}]})
        }
        "/documents" => json!({"documents": [{"title": "x", "text": "Intruder text."}]}),
        _ => return None,
    })
}

fn leaks(text: &str, marks: &[&str]) -> Option<String> {
    marks.iter().find(|m| text.contains(*m)).map(|m| m.to_string())
}

#[test]
fn workspaces_isolate_documents_answers_and_keys() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    std::fs::create_dir_all(&index).unwrap();
    let root = add_key(&index, "root", "admin", "");
    let a_write = add_key(&index, "a-writer", "write", "team-a");
    let a_read = add_key(&index, "a-reader", "read", "team-a");
    let b_write = add_key(&index, "b-writer", "write", "team-b");
    let b_admin = add_key(&index, "b-admin", "admin", "team-b");
    let keyfile = std::fs::read_to_string(index.join("keys.json")).unwrap();
    for k in [&root, &a_write, &a_read, &b_write, &b_admin] {
        assert!(!keyfile.contains(k.as_str()), "a key is kept only as its digest");
    }
    let log = dir.path().join("serve.log");
    let mut cmd = serve_cmd(&index, &["--workspace-idle", "2", "--log-format", "json"], &[]);
    cmd.stderr(std::fs::File::create(&log).unwrap());
    let s = start_cmd(cmd);
    assert!(ok_json(s.get("/health"))["key_required"].as_bool().unwrap());

    // Workspaces are made by admin keys that reach them.
    let mk = |key: &str, name: &str| send(&s, Some(key), "post", "/workspaces", Some(&json!({"name": name})), None);
    assert_eq!(mk(&a_write, "team-a").0, 403);
    assert_eq!(mk(&b_admin, "team-a").0, 403);
    assert_eq!(mk(&root, "team-a").0, 201);
    assert_eq!(mk(&b_admin, "team-b").0, 201);
    assert_eq!(mk(&b_admin, "team-b").0, 200, "made twice: it exists");
    let (st, text) = mk(&root, "Team A");
    assert!(st == 400 && text.contains("lowercase"), "{st} {text}");

    // Each workspace gets its documents: A by path, B by header.
    let ja = upload(&s, &a_write, "/w/team-a", "ambermoor.txt", A_DOC);
    let r = s
        .http
        .post(s.url("/documents"))
        .bearer_auth(&b_write)
        .header("X-Rhizome-Workspace", "team-b")
        .multipart(form(&[("corran.txt".to_string(), B_DOC.as_bytes().to_vec())]))
        .send()
        .unwrap();
    let jb = expect(r, 202)["job_id"].as_u64().unwrap();
    wait_job(&s, &a_write, "/w/team-a", ja);
    wait_job(&s, &b_write, "/w/team-b", jb);

    // A's ids, for every route that takes one.
    let get_a = |p: &str| -> Value {
        let (st, t) = send(&s, Some(&a_read), "get", &format!("/w/team-a{p}"), None, None);
        assert_eq!(st, 200, "{p}: {t}");
        serde_json::from_str(&t).unwrap()
    };
    let docs = get_a("/documents");
    assert_eq!(docs["total"], 1, "{docs}");
    let doc_id = docs["documents"][0]["id"].as_str().unwrap().to_string();
    let ents = get_a("/graph/entities?q=Zorv");
    let entity_id = ents
        .as_array()
        .and_then(|a| a.first())
        .or_else(|| ents["entities"].get(0))
        .map(|e| e["id"].as_str().unwrap().to_string())
        .unwrap_or_default();
    assert!(!entity_id.is_empty(), "an entity of A: {ents}");
    let answer = send(&s, Some(&a_read), "post", "/w/team-a/query", body_for("/query").as_ref(), None);
    assert!(answer.0 == 200 && answer.1.contains("Ambermoor"), "A's own key gets A's answer: {answer:?}");
    let params: BTreeMap<&str, String> =
        [("id", doc_id.clone()), ("doc", doc_id.clone()), ("entity", entity_id.clone()), ("job", ja.to_string())]
            .into_iter()
            .collect();

    // Every route of the API document, with every key that must not see A.
    let spec = ok_json(s.get("/openapi.json"));
    let mut tried = 0;
    for (path, item) in spec["paths"].as_object().unwrap() {
        if path.starts_with("/workspaces") || path.starts_with("/keys") || path == "/metrics" {
            continue;
        }
        let mut concrete = path.clone();
        concrete.push_str(match path.as_str() {
            "/graph/entities" => "?q=Zorv",
            "/graph/neighbourhood" => "?entity={entity}",
            _ => "",
        });
        for (name, value) in &params {
            concrete = concrete.replace(&format!("{{{name}}}"), value);
        }
        if concrete.contains('{') {
            // A parameter named otherwise: any of A's ids.
            let open = concrete.find('{').unwrap();
            let close = concrete[open..].find('}').unwrap() + open;
            concrete.replace_range(open..=close, &entity_id);
        }
        for method in item.as_object().unwrap().keys() {
            let body = if method == "post" { body_for(path) } else { None };
            for (who, key) in
                [("b-writer", Some(b_write.as_str())), ("b-admin", Some(b_admin.as_str())), ("no key", None)]
            {
                // A's workspace by path and by header: as if it did not exist (or 401).
                for (p, hdr) in [(format!("/w/team-a{concrete}"), None), (concrete.clone(), Some("team-a"))] {
                    let (st, text) = send(&s, key, method, &p, body.as_ref(), hdr);
                    assert!(st == 404 || (key.is_none() && st == 401), "{who} {method} {p} ({hdr:?}): {st} {text}");
                    assert_eq!(leaks(&text, A_MARKS), None, "{who} {method} {p}: {text}");
                    tried += 1;
                }
                // B's own workspace asked with A's ids: nothing of A.
                let (st, text) = send(&s, key, method, &format!("/w/team-b{concrete}"), body.as_ref(), None);
                assert_eq!(leaks(&text, A_MARKS), None, "{who} {method} /w/team-b{concrete}: {st} {text}");
                tried += 1;
            }
            // And the other way: A's keys never see B (reading: A's own document stays).
            let reads = method == "get" || (method == "post" && path != "/documents");
            for key in [&a_write, &a_read].into_iter().filter(|_| reads) {
                let (_, text) = send(&s, Some(key), method, &format!("/w/team-a{concrete}"), body.as_ref(), None);
                assert_eq!(leaks(&text, B_MARKS), None, "A's key {method} /w/team-a{concrete}: {text}");
                let (st, _) = send(&s, Some(key), method, &format!("/w/team-b{concrete}"), body.as_ref(), None);
                assert_eq!(st, 404, "A's key {method} /w/team-b{concrete}");
            }
        }
    }
    assert!(tried > 60, "routes tried: {tried}");
    // The MCP endpoint is a workspace's like any route.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    for (p, hdr) in [("/w/team-a/mcp", None), ("/mcp", Some("team-a"))] {
        let (st, text) = send(&s, Some(&b_write), "post", p, Some(&init), hdr);
        assert_eq!(st, 404, "{p}: {text}");
    }
    // Metrics name every workspace: an admin key for all of them reads them.
    assert_eq!(send(&s, Some(&b_admin), "get", "/metrics", None, None).0, 403);
    let (st, m) = send(&s, Some(&root), "get", "/metrics", None, None);
    assert!(st == 200 && m.contains("workspace=\"team-a\"") && m.contains("workspace=\"team-b\""), "{m}");
    assert_eq!(leaks(&m, A_MARKS), None);
    // The main index holds neither; a key of team-b only does not reach it.
    assert_eq!(send(&s, Some(&b_write), "get", "/documents", None, None).0, 404);
    let (st, text) = send(&s, Some(&root), "get", "/documents", None, None);
    assert!(st == 200 && leaks(&text, A_MARKS).is_none() && leaks(&text, B_MARKS).is_none(), "{text}");

    // A's document is still there, whatever B's keys tried (DELETE included).
    assert_eq!(get_a("/documents")["total"], 1);

    // A read key reads and cannot write.
    let r = s
        .http
        .post(s.url("/w/team-a/documents"))
        .bearer_auth(&a_read)
        .multipart(form(&[("x.txt".into(), b"x y z".to_vec())]))
        .send()
        .unwrap();
    assert!(expect_error(r, 403).contains("read-only"));
    assert_eq!(send(&s, Some(&a_read), "delete", &format!("/w/team-a/documents/{doc_id}"), None, None).0, 403);

    // Chat clients that can only pick a model: workspace x method in the lists, the
    // model routing the request.
    let models = |key: &str| -> Vec<String> {
        let (st, t) = send(&s, Some(key), "get", "/v1/models", None, None);
        assert_eq!(st, 200, "{t}");
        let v: Value = serde_json::from_str(&t).unwrap();
        v["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()).collect()
    };
    let all = models(&root);
    assert!(
        all.contains(&"rhizome-local".to_string())
            && all.contains(&"team-a/rhizome-local".to_string())
            && all.contains(&"team-b/rhizome-hippo".to_string()),
        "{all:?}"
    );
    let of_b = models(&b_write);
    assert!(!of_b.is_empty() && of_b.iter().all(|m| m.starts_with("team-b/")), "{of_b:?}");
    let tags = send(&s, Some(&b_write), "get", "/api/tags", None, None);
    assert!(tags.0 == 200 && !tags.1.contains("team-a/") && tags.1.contains("team-b/"), "{tags:?}");
    let chat = |key: &str, model: &str| {
        let q = json!({"model": model, "messages": [{"role": "user", "content": QUESTION}]});
        send(&s, Some(key), "post", "/v1/chat/completions", Some(&q), None)
    };
    let (st, text) = chat(&a_read, "team-a/rhizome-local");
    assert!(st == 200 && text.contains("Ambermoor"), "{st} {text}");
    let (st, text) = chat(&b_write, "team-a/rhizome-local");
    assert!(st == 404 && leaks(&text, A_MARKS).is_none(), "{st} {text}");
    let (st, text) = chat(&b_write, "team-b/rhizome-local");
    assert!(st == 200 && leaks(&text, A_MARKS).is_none(), "{st} {text}");

    // The listing shows only what a key reaches.
    let (_, t) = send(&s, Some(&b_write), "get", "/workspaces", None, None);
    assert!(t.contains("team-b") && !t.contains("team-a") && !t.contains("default"), "{t}");

    // A key revoked while the server runs is refused from the next request on.
    let mut c = rz(&index);
    c.args(["keys", "revoke", "b-writer"]);
    ok(c);
    let t = Instant::now();
    while send(&s, Some(&b_write), "get", "/w/team-b/stats", None, None).0 != 401 {
        assert!(t.elapsed() < Duration::from_secs(5), "a revoked key still works");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Keys made through the API work at once, and only where they reach.
    let (st, made) = send(
        &s,
        Some(&root),
        "post",
        "/keys",
        Some(&json!({"name": "b-reader", "role": "read", "workspaces": ["team-b"]})),
        None,
    );
    assert_eq!(st, 201, "{made}");
    let new_key = serde_json::from_str::<Value>(&made).unwrap()["key"].as_str().unwrap().to_string();
    assert_eq!(send(&s, Some(&new_key), "get", "/w/team-b/stats", None, None).0, 200);
    assert_eq!(send(&s, Some(&new_key), "get", "/w/team-a/stats", None, None).0, 404);
    assert_eq!(send(&s, Some(&b_admin), "get", "/keys", None, None).0, 403, "keys need an admin of every workspace");
    let (_, listed) = send(&s, Some(&root), "get", "/keys", None, None);
    assert!(listed.contains("b-reader") && !listed.contains(&new_key) && !listed.contains("sha256"), "{listed}");

    // An idle workspace is closed (its memory released) and opens again on demand.
    let t = Instant::now();
    loop {
        let (_, t2) = send(&s, Some(&root), "get", "/workspaces", None, None);
        let v: Value = serde_json::from_str(&t2).unwrap();
        let a = v["workspaces"].as_array().unwrap().iter().find(|w| w["name"] == "team-a").cloned().unwrap();
        if a["open"] == false {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "team-a still open: {v}");
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(get_a("/documents")["total"], 1);

    // Every refusal is in the log with the key's name, never a key.
    let text = std::fs::read_to_string(&log).unwrap();
    let refusals: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["fields"]["message"].as_str().is_some_and(|m| m.starts_with("refused")))
        .collect();
    for name in ["b-writer", "b-admin", "a-reader", "a-writer"] {
        assert!(refusals.iter().any(|v| v["fields"]["key"] == name), "no refusal logged for {name}: {text}");
    }
    for k in [&root, &a_write, &a_read, &b_write, &b_admin, &new_key] {
        assert!(!text.contains(k.as_str()), "a key in the log");
    }

    // Deleting a workspace: admin only; then it is gone.
    assert_eq!(send(&s, Some(&a_write), "delete", "/workspaces/team-a", None, None).0, 403);
    assert_eq!(send(&s, Some(&root), "delete", "/workspaces/team-a", None, None).0, 200);
    assert_eq!(send(&s, Some(&a_read), "get", "/w/team-a/documents", None, None).0, 404);
    assert!(!index.join("workspaces/team-a").exists());
}

#[test]
fn directory_workspaces_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("index");
    crate::support::workspaces_on(&index.display().to_string(), tmp.path());
    assert!(!index.join("workspaces/team-a").exists());
}
