//! Hostile clients against a real `rhizome serve`: writes without a valid key
//! on every route of /openapi.json, huge request heads, slowloris, 10,000 idle
//! connections, the process's file-descriptor limit reached, and logs that must not show
//! a key or a document's text. After each attack the server is alive, answers others, and
//! the index is as it was.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::fixture::examples_copy;
use support::raw::{self, host_port, raise_nofile, rss_mib, send};
use support::server::{expect, expect_error, serve_cmd, start, start_cmd, Server};

const RW: &str = "rw-key-7f3a9c1e55d2";
const RO: &str = "ro-key-0b8e4d2a6c91";

/// What a write would change: stats, the documents, the jobs.
fn state(s: &Server) -> Value {
    json!({"stats": s.get_json("/stats"), "documents": s.get_json("/documents"), "jobs": s.get_json("/jobs")})
}

/// Methods that could write, against every path of /openapi.json (templates filled with
/// real ids) and a few that are not there: no key and wrong keys get 401; the read-only key
/// gets 403 for a write, and for other requests anything but success on a write method the
/// path does not take; nothing changes.
#[test]
fn writes_without_a_valid_key_are_refused_on_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(&examples_copy(dir.path()), &["--api-key", RW], &[("RHIZOME_API_KEYS", &format!("{RO}:ro"))]);
    s.key = Some(RW.into());
    let before = state(&s);
    let doc = before["documents"]["documents"][0]["id"].as_str().unwrap().to_string();
    let entity = s.get_json("/graph/entities?q=Bohr&limit=1")[0]["id"].as_str().unwrap().to_string();
    let api: Value = s.http.get(s.url("/openapi.json")).send().unwrap().json().unwrap();
    let mut paths: Vec<(String, Vec<String>)> = api["paths"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(p, ops)| (p.clone(), ops.as_object().unwrap().keys().cloned().collect()))
        .collect();
    assert!(paths.len() >= 15, "/openapi.json lists {} paths", paths.len());
    for extra in ["/", "/ui/app.js", "/no-such-path", "/documents/", "//documents", "/Documents"] {
        paths.push((extra.into(), vec!["get".into()]));
    }
    let upload = json!({"documents": [{"title": "intruder", "text": "An intruder wrote this sentence."}]});
    let mut cases = 0;
    for (template, documented) in &paths {
        let path = template
            .replace("/documents/{id}", &format!("/documents/{doc}"))
            .replace("/jobs/{id}", "/jobs/1")
            .replace("/graph/entities/{id}", &format!("/graph/entities/{entity}"))
            .replace("/workspaces/{name}", "/workspaces/default")
            .replace("/keys/{name}", "/keys/api-key-1");
        assert!(!path.contains('{'), "a path template not filled: {template}");
        for method in ["POST", "PUT", "PATCH", "DELETE"] {
            let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            let req = || s.http.request(m.clone(), s.url(&path)).json(&upload);
            let creds: [(&str, reqwest::blocking::RequestBuilder); 5] = [
                ("no key", req()),
                ("a wrong bearer key", req().bearer_auth("rw-key-7f3a9c1e55d3")),
                ("a wrong X-API-Key", req().header("X-API-Key", "wrong")),
                ("the key as Basic auth", req().header("Authorization", format!("Basic {RW}"))),
                ("an empty bearer", req().header("Authorization", "Bearer ")),
            ];
            for (what, r) in creds {
                let e = expect_error(r.send().unwrap(), 401);
                assert!(!e.contains(RW), "{method} {path} with {what}: the error shows the key: {e}");
                cases += 1;
            }
            let r = req().bearer_auth(RO).send().unwrap();
            let status = r.status().as_u16();
            let text = r.text().unwrap();
            // Workspaces and keys are changed by admin keys only.
            let admin = path.starts_with("/keys") || path.starts_with("/workspaces") || path == "/metrics";
            let is_write = (method == "POST" && (path == "/documents" || admin)) || method == "DELETE";
            let route = documented.contains(&method.to_lowercase());
            if is_write && (route || !admin) {
                assert_eq!(status, 403, "{method} {path} with the read-only key: {text}");
            } else if !route {
                assert!(
                    matches!(status, 404 | 405),
                    "{method} {path} (not an endpoint) with the read-only key: {status} {text}"
                );
            } else {
                // A read that happens to be a POST (query, chat): answered or refused, never a write.
                assert!(status != 401 && status != 403, "{method} {path}: the read-only key may read: {status} {text}");
            }
            cases += 1;
        }
    }
    assert_eq!(state(&s), before, "the index or the jobs changed after {cases} refused writes");
    eprintln!(
        "{cases} requests without a valid key (or with the read-only key) on {} paths: all refused, nothing changed",
        paths.len()
    );
}

/// A 1 MB header, a 1 MB request line and 10,000 headers: 431/414/400 or the connection
/// closed, never an answer from a handler; the server lives and answers.
#[test]
fn huge_request_heads_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(&examples_copy(dir.path()), &[], &[]);
    let addr = host_port(&s.base);
    let big = "a".repeat(1 << 20);
    let many: String = (0..10_000).map(|i| format!("X-H{i}: v\r\n")).collect();
    let rss0 = rss_mib(s.pid());
    for (what, req) in [
        ("a 1 MB header", format!("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n")),
        ("a 1 MB path", format!("GET /{big} HTTP/1.1\r\nHost: x\r\n\r\n")),
        ("10,000 headers", format!("GET /health HTTP/1.1\r\nHost: x\r\n{many}\r\n")),
        (
            "a 1 MB Authorization header",
            format!("GET /stats HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {big}\r\n\r\n"),
        ),
    ] {
        for _ in 0..20 {
            let r = send(&addr, req.as_bytes());
            assert!(matches!(r.status, None | Some(400 | 413 | 414 | 431)), "{what}: {:?}", r.text.get(..200));
        }
        assert!(s.alive(), "the server died on {what}");
        assert_eq!(s.get_json("/health")["status"], "ok", "after {what}");
    }
    eprintln!("huge heads x 80: server RSS {rss0:.0} -> {:.0} MiB", rss_mib(s.pid()));
}

/// Connections that send their headers a byte at a time are closed once the header
/// timeout passes, while other clients are answered all along.
#[test]
fn slowloris_connections_are_timed_out_and_others_served() {
    const SLOW: usize = 300;
    raise_nofile();
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(&examples_copy(dir.path()), &["--header-timeout", "2"], &[]);
    let addr = host_port(&s.base);
    let mut conns: Vec<Option<TcpStream>> = (0..SLOW)
        .map(|_| {
            let mut c = TcpStream::connect(&addr).unwrap();
            c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n").unwrap();
            Some(c)
        })
        .collect();
    let t = Instant::now();
    let mut ms = Vec::new();
    let mut closed_at = Vec::new();
    while t.elapsed() < Duration::from_secs(20) && conns.iter().any(Option::is_some) {
        // One more byte on every open slow connection; a failed write: the server closed it.
        for c in conns.iter_mut() {
            if let Some(stream) = c {
                if stream.write_all(b"X").is_err() {
                    closed_at.push(t.elapsed().as_secs_f64());
                    *c = None;
                }
            }
        }
        let q = Instant::now();
        assert_eq!(s.get_json("/health")["status"], "ok");
        let r = s.post_json("/query", &json!({"question": "Who founded the Copenhagen institute?", "method": "basic"}));
        assert_eq!(r.status().as_u16(), 200, "a query while {SLOW} slow clients hold connections");
        ms.push(q.elapsed().as_secs_f64() * 1e3);
        std::thread::sleep(Duration::from_millis(300));
    }
    let open = conns.iter().filter(|c| c.is_some()).count();
    assert_eq!(open, 0, "{open} of {SLOW} slow connections still open after 20 s with --header-timeout 2");
    assert!(s.alive());
    ms.sort_by(f64::total_cmp);
    eprintln!(
        "slowloris: {SLOW} connections closed by the server between {:.1} and {:.1} s; {} health+query rounds meanwhile, p50 {:.1} ms, max {:.1} ms",
        closed_at.iter().cloned().fold(f64::INFINITY, f64::min),
        closed_at.iter().cloned().fold(0.0, f64::max),
        ms.len(),
        ms[ms.len() / 2],
        ms[ms.len() - 1]
    );
}

/// 10,000 idle connections open at once (fewer if the hard limit on open files is lower):
/// the server answers others meanwhile and its memory stays bounded.
#[test]
fn ten_thousand_idle_connections() {
    let limit = raise_nofile();
    let n = 10_000.min(limit.saturating_sub(500) as usize);
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(&examples_copy(dir.path()), &[], &[]);
    let addr = host_port(&s.base);
    assert_eq!(s.get_json("/health")["status"], "ok");
    let rss0 = rss_mib(s.pid());
    let t = Instant::now();
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        conns.push(TcpStream::connect(&addr).unwrap_or_else(|e| panic!("connection {i}: {e}")));
    }
    let opened = t.elapsed().as_secs_f64();
    // Half of them send half a request and stop.
    for c in conns.iter_mut().step_by(2) {
        let _ = c.write_all(b"POST /query HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n");
    }
    for _ in 0..5 {
        assert_eq!(s.get_json("/health")["status"], "ok", "/health with {n} idle connections open");
        let r = s.post_json("/query", &json!({"question": "What is a knowledge graph?", "method": "hippo"}));
        assert_eq!(r.status().as_u16(), 200);
    }
    let rss1 = rss_mib(s.pid());
    assert!(s.alive());
    drop(conns);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(s.get_json("/health")["status"], "ok");
    eprintln!(
        "{n} idle connections opened in {opened:.1} s (file limit {limit}); server RSS {rss0:.0} -> {rss1:.0} MiB with them open ({:.1} KiB each), {:.0} MiB after",
        (rss1 - rss0) * 1024.0 / n as f64,
        rss_mib(s.pid())
    );
    assert!(rss1 - rss0 < 400.0, "10,000 idle connections took {:.0} MiB", rss1 - rss0);
}

/// The server at its limit on open files (512): accepting fails for a while, the server
/// survives it, reaps the idle connections at the header timeout and answers again while
/// the attacker still holds its sockets.
#[test]
fn the_file_descriptor_limit_is_survived() {
    raise_nofile();
    let dir = tempfile::tempdir().unwrap();
    let mut c = serve_cmd(&examples_copy(dir.path()), &["--header-timeout", "2"], &[]);
    // SAFETY: setrlimit in the child between fork and exec; no allocation.
    unsafe {
        c.pre_exec(|| {
            let r = libc::rlimit { rlim_cur: 512, rlim_max: 512 };
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
            Ok(())
        });
    }
    let mut s = start_cmd(c);
    let addr = host_port(&s.base);
    let held: Vec<TcpStream> = (0..1200).filter_map(|_| TcpStream::connect(&addr).ok()).collect();
    std::thread::sleep(Duration::from_secs(1));
    assert!(s.alive(), "the server died at its file limit");
    let t = Instant::now();
    let answered = loop {
        let r = s.http.get(s.url("/health")).timeout(Duration::from_secs(5)).send();
        if let Ok(r) = r {
            if r.status().as_u16() == 200 {
                break t.elapsed().as_secs_f64();
            }
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no answer within 60 s while 1,200 idle connections are held");
        assert!(s.alive(), "the server died at its file limit");
    };
    let r = s.post_json("/query", &json!({"question": "What is a rhizome?", "method": "basic"}));
    assert_eq!(r.status().as_u16(), 200);
    eprintln!("{} idle connections held against a 512-file server: answered again after {answered:.1} s", held.len());
    drop(held);
}

fn read_log(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
}

/// The server's stderr, through uploads, queries, a deletion, wrong keys and bad requests,
/// never shows a key (right or wrong) or a word of the uploaded text, at the default log
/// level and with RUST_LOG=trace.
#[test]
fn logs_show_no_key_and_no_document_text() {
    for env in [&[][..], &[("RUST_LOG", "trace"), ("RUST_BACKTRACE", "1")][..]] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("stderr.log");
        let ro = format!("{RO}:ro");
        let mut env = env.to_vec();
        env.push(("RHIZOME_API_KEYS", &ro));
        let mut c = serve_cmd(&examples_copy(dir.path()), &["--api-key", RW, "--max-upload-mb", "1"], &env);
        c.stderr(std::fs::File::create(&log).unwrap());
        let mut s = start_cmd(c);
        s.key = Some(RW.into());
        let secret = "Quuxbridge Vantorel invented the glimmerphone";
        let r = s.post_json(
            "/documents",
            &json!({"documents": [{"title": "Vantorel", "text": format!("{secret} in 1911.")}]}),
        );
        let job = support::server::expect(r, 202)["job_id"].as_u64().unwrap();
        s.wait_job(job);
        let r = s.post_json("/query", &json!({"question": "Who invented the glimmerphone?", "method": "basic"}));
        assert!(r.text().unwrap().contains("Vantorel"));
        s.get("/documents/upload:Vantorel");
        let wrong = "wrong-key-Zq81Lm0pX";
        for k in [wrong, RO] {
            s.http.delete(s.url("/documents/upload:Vantorel")).bearer_auth(k).send().unwrap();
            s.http.post(s.url("/documents")).header("X-API-Key", k).body(secret).send().unwrap();
        }
        // Bad requests quoting the text: a bad method, a bad body, an oversized one.
        s.post_json("/query", &json!({"question": secret, "method": "no-such-method"}));
        s.http
            .post(s.url("/query"))
            .bearer_auth(RW)
            .header("content-type", "application/json")
            .body(format!("{{\"question\": \"{secret}"))
            .send()
            .unwrap();
        s.http
            .post(s.url("/documents"))
            .bearer_auth(RW)
            .header("content-type", "application/json")
            .body(format!("{secret} ").repeat(60_000))
            .send()
            .unwrap();
        assert_eq!(s.delete("/documents/upload:Vantorel").status().as_u16(), 200);
        s.terminate(Duration::from_secs(60));
        let text = read_log(&log);
        for (what, needle) in [
            ("the read-write key", RW),
            ("the read-only key", RO),
            ("a wrong key", wrong),
            ("the document's text", "Quuxbridge"),
            ("the document's text", "glimmerphone"),
        ] {
            assert!(!text.contains(needle), "the server log ({env:?}) shows {what}:\n{text}");
        }
        assert!(text.contains("rhizome serve"), "the log was captured: {text}");
    }
}

/// The hostile raw requests of [`raw`] come back as JSON errors where a handler answered.
#[test]
fn a_garbage_request_line_gets_400_and_the_server_lives() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(&examples_copy(dir.path()), &[], &[]);
    let addr = host_port(&s.base);
    for req in [
        &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"[..],
        b"GET\r\n\r\n",
        b"BREW /pot HTCPCP/1.0\r\n\r\n",
        b"\0\0\0\0\r\n\r\n",
        b"POST /query HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        b"POST /query HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello",
    ] {
        let r = raw::send(&addr, req);
        assert!(matches!(r.status, None | Some(400..=499)), "{:?}: {:?}", String::from_utf8_lossy(req), r.text);
    }
    assert!(s.alive());
    assert_eq!(s.get_json("/health")["status"], "ok");
}

/// Edges a probe of the API found: a page past the end of the documents is empty however
/// large its offset; chat messages with an unknown role or content that is not text are
/// refused naming the message; settings a request may not change are refused naming them;
/// the `Bearer` scheme is matched in any case; and a reply stays small when the request's
/// question, model or method is huge.
#[test]
fn probe_edges_are_answered_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(&examples_copy(dir.path()), &["--api-key", RW], &[]);
    s.key = Some(RW.into());
    let total = s.get_json("/documents")["total"].as_u64().unwrap();
    assert!(total > 0);
    for offset in [total.to_string(), (1u64 << 63).to_string(), u64::MAX.to_string()] {
        let page = s.get_json(&format!("/documents?offset={offset}"));
        assert_eq!(page["documents"].as_array().map(Vec::len), Some(0), "offset {offset}: {page}");
    }

    let chat = |body: Value| s.post_json("/v1/chat/completions", &body);
    let ollama = |body: Value| s.post_json("/api/chat", &body);
    let e =
        expect_error(chat(json!({"model": "rhizome-basic", "messages": [{"role": "hacker", "content": "Who?"}]})), 400);
    assert!(e.contains("messages[0].role") && e.contains("hacker"), "{e}");
    let e = expect_error(ollama(json!({"model": "rhizome-basic", "messages": [{"role": "user", "content": 42}]})), 400);
    assert!(e.contains("messages[0].content"), "{e}");
    let e =
        expect_error(chat(json!({"model": "rhizome-basic", "messages": [{"role": "user", "content": {"a": 1}}]})), 400);
    assert!(e.contains("messages[0].content"), "{e}");
    // What clients really send still works: text parts, tool messages left out.
    let ok = expect(
        chat(json!({"model": "rhizome-basic", "messages": [
        {"role": "tool", "content": "ignored"},
        {"role": "user", "content": [{"type": "text", "text": "Who won the Nobel Prize?"}]}]})),
        200,
    );
    assert!(ok["choices"][0]["message"]["content"].as_str().is_some_and(|c| !c.is_empty()), "{ok}");

    for key in ["llm.provider", "llm.base_url", "store.url", "embed.model"] {
        let e = expect_error(
            s.post_json("/query", &json!({"question": "Who?", "method": "basic", "params": {key: "x"}})),
            400,
        );
        assert!(e.contains(key) && e.contains("cannot be set per request") && e.contains("retrieval.*"), "{e}");
    }

    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let r = s.http.get(s.url("/stats")).header("Authorization", format!("{scheme} {RW}")).send().unwrap();
        assert_eq!(r.status().as_u16(), 200, "{scheme}");
    }

    let big = "x".repeat(1 << 20);
    for (what, r) in [
        ("question", s.post_json("/query", &json!({"question": big, "method": "basic"}))),
        ("method", s.post_json("/query", &json!({"question": "Who?", "method": big}))),
        ("model", chat(json!({"model": big, "messages": [{"role": "user", "content": "Who?"}]}))),
        ("chat question", chat(json!({"model": "rhizome-basic", "messages": [{"role": "user", "content": big}]}))),
        ("param", s.post_json("/query", &json!({"question": "Who?", "params": {big.clone(): 1}}))),
    ] {
        let status = r.status().as_u16();
        let body = r.text().unwrap();
        assert!(matches!(status, 400 | 404 | 413), "a huge {what}: {status}");
        assert!(body.len() < 2048, "a huge {what}: a reply of {} bytes", body.len());
    }
    assert!(s.alive());
}
