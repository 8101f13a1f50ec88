//! Target: the HTTP server. Two real servers (`rhizome_server::Server`) over one small
//! MiniLM index in a temporary folder, listening on 127.0.0.1: one open (no keys, as on
//! loopback) and one with a read-write and a read-only key. Each input is a raw HTTP
//! request (request line, headers, body: JSON bodies of every route, multipart uploads,
//! query strings, path parameters), sent over a fresh connection; only its framing is
//! made consistent (Content-Length, Connection: close), so extractors and handlers see
//! the hostile bytes.
//!
//! Input layout: one flag byte (bit 0: the keyed server; bit 1: send the read-write key;
//! bit 2: send the read-only key), then the request. Broken promises: no answer, a 500,
//! the server gone, or a write (anything but GET/HEAD and the query and chat routes)
//! answered 2xx by the keyed server without the read-write key.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rhizome_core::{ids, Config, Document};
use rhizome_engine::{Engine, IndexInput, NoProgress, WriteOptions};
use rhizome_server::{parse_keys, Server, ServerOptions};

use crate::Target;

const RW_KEY: &str = "fuzz-rw-key-0123456789";
const RO_KEY: &str = "fuzz-ro-key-0123456789";
/// How long a request may go without any answer. A deletion waits for the write queue,
/// which may hold uploads being indexed (up to 64 jobs): on a loaded machine that takes
/// seconds, so the bound is generous; a handler that never answers still fails it.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);
/// How long the write jobs an accepted request started may take (an upload of up to
/// 64 KiB of documents, indexed with MiniLM).
const JOBS_WITHIN: Duration = Duration::from_secs(30);

struct Servers {
    open: SocketAddr,
    keyed: SocketAddr,
    doc_ids: Vec<String>,
    _runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
}

const DOCS: [(&str, &str); 3] = [
    (
        "Aage Bohr",
        "Aage Bohr was a Danish physicist. He won the Nobel Prize in Physics in 1975. He was born in Copenhagen.",
    ),
    ("Đà Nẵng", "Đà Nẵng là một thành phố ở miền Trung Việt Nam. Thành phố nằm gần Huế."),
    ("OpenAI", "微软于2019年向OpenAI投资了10亿美元。Sam Altman领导OpenAI。"),
];

fn start() -> Result<Servers, String> {
    let dir = tempfile::Builder::new().prefix("rhizome-fuzz-http-").tempdir().map_err(|e| e.to_string())?;
    let index = dir.path().join("index");
    let config =
        Config::load(None, Vec::new(), &["embed.model=all-MiniLM-L6-v2".to_string()]).map_err(|e| e.to_string())?;
    let url = index.to_str().ok_or("temporary folder is not UTF-8")?.to_string();
    let engine = Arc::new(Engine::open(&url, config, WriteOptions::default()).map_err(|e| e.to_string())?);
    let docs: Vec<Document> = DOCS
        .iter()
        .map(|(t, x)| Document {
            id: ids::document_id(t, x),
            source: format!("upload:{t}"),
            title: t.to_string(),
            text: x.to_string(),
            pages: None,
            meta: Default::default(),
        })
        .collect();
    let doc_ids = docs.iter().map(|d| d.id.clone()).collect();
    engine
        .index(IndexInput::Documents(docs), &NoProgress, &AtomicBool::new(false))
        .map_err(|e| format!("indexing the fuzz index: {e}"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (open, keyed) = runtime.block_on(async {
        let mut addrs = Vec::new();
        for keyed in [false, true] {
            let mut opts = ServerOptions::new("127.0.0.1:0".parse().unwrap());
            if keyed {
                opts.keys =
                    parse_keys(&[RW_KEY.to_string(), format!("{RO_KEY}:ro")], None).map_err(|e| e.to_string())?;
            }
            // Small enough that a fuzzer-made body can pass the limit.
            opts.max_body_bytes = 1 << 20;
            let server = Server::bind(engine.clone(), opts).await.map_err(|e| e.to_string())?;
            addrs.push(server.local_addr().map_err(|e| e.to_string())?);
            tokio::spawn(server.run(std::future::pending()));
        }
        Ok::<_, String>((addrs[0], addrs[1]))
    })?;
    Ok(Servers { open, keyed, doc_ids, _runtime: runtime, dir })
}

/// The two servers, started on first use.
static SERVERS: OnceLock<Result<Servers, String>> = OnceLock::new();

/// Remove the servers' temporary folder (their index): the servers live in a static and
/// are never dropped, so the folder would outlive the process. Call it last.
pub fn remove_temp_dir() {
    if let Some(Ok(s)) = SERVERS.get() {
        let _ = std::fs::remove_dir_all(s.dir.path());
    }
}

fn servers() -> Result<&'static Servers, String> {
    SERVERS.get_or_init(start).as_ref().map_err(|e| format!("starting the fuzz servers: {e}"))
}

const DICT: &[&str] = &[
    "GET ",
    "POST ",
    "DELETE ",
    "PUT ",
    "HEAD ",
    "OPTIONS ",
    " HTTP/1.1\r\n",
    " HTTP/1.0\r\n",
    "\r\n",
    "\r\n\r\n",
    "/documents",
    "/documents/",
    "/query",
    "/jobs/",
    "/events",
    "/graph/entities",
    "/graph/neighbourhood",
    "/communities",
    "/v1/chat/completions",
    "/api/chat",
    "/stats",
    "/health",
    "/methods",
    "/openapi.json",
    "?",
    "&",
    "=",
    "%",
    "%00",
    "%ff",
    "%2F",
    "..",
    "//",
    "offset=",
    "limit=",
    "search=",
    "q=",
    "entity=",
    "depth=",
    "max_nodes=",
    "level=",
    "max_mentions=",
    "18446744073709551616",
    "-1",
    "Content-Type: application/json\r\n",
    "Content-Type: multipart/form-data; boundary=XyZ\r\n",
    "Content-Type: text/plain\r\n",
    "--XyZ\r\n",
    "--XyZ--\r\n",
    "Content-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n",
    "filename=\"\"",
    "filename=\"x.pdf\"",
    "filename=\"../../etc/passwd.md\"",
    "filename=\"e.csv\"",
    "\"question\"",
    "\"method\"",
    "\"top_k\"",
    "\"params\"",
    "\"history\"",
    "\"stream\"",
    "\"messages\"",
    "\"role\"",
    "\"content\"",
    "\"model\"",
    "\"documents\"",
    "\"title\"",
    "\"text\"",
    "basic",
    "local",
    "global",
    "hippo",
    "drift",
    "tog",
    "auto",
    "multipath",
    "multihop",
    "true",
    "null",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "Authorization: Bearer x\r\n",
    "X-API-Key: \r\n",
    "Accept: text/event-stream\r\n",
];

fn seeds() -> Vec<Vec<u8>> {
    let ids = servers().map(|s| s.doc_ids.clone()).unwrap_or_default();
    let id = ids.first().cloned().unwrap_or_else(|| "doc_x".into());
    let json = |method: &str, path: &str, body: &str| {
        format!("{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{body}")
    };
    let multipart = |name: &str, content: &str| {
        let body = format!(
            "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: text/plain\r\n\r\n{content}\r\n--XyZ--\r\n"
        );
        format!("POST /documents HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XyZ\r\n\r\n{body}")
    };
    let requests = vec![
        json("POST", "/query", r#"{"question": "Who is Aage Bohr?", "method": "basic", "top_k": 3}"#),
        json(
            "POST",
            "/query",
            r#"{"question": "Đà Nẵng ở đâu?", "method": "local", "params": {"retrieval.top_k": 2}, "history": [{"role": "user", "content": "hi"}]}"#,
        ),
        json("POST", "/query", r#"{"question": "微软投资了谁？", "method": "hippo", "stream": true}"#),
        json("POST", "/query", r#"{"question": "", "method": "nope", "top_k": 0, "params": {"x": []}}"#),
        json("POST", "/documents", r#"{"documents": [{"title": "New", "text": "A new document about Niels Bohr."}]}"#),
        json("POST", "/documents", r#"{"documents": [{"title": "", "text": ""}]}"#),
        json(
            "POST",
            "/v1/chat/completions",
            r#"{"model": "rhizome", "messages": [{"role": "user", "content": "Who is Aage Bohr?"}], "stream": false}"#,
        ),
        json("POST", "/v1/chat/completions", r#"{"messages": [], "stream": true}"#),
        json(
            "POST",
            "/api/chat",
            r#"{"model": "rhizome", "messages": [{"role": "user", "content": "Where is Đà Nẵng?"}], "stream": false}"#,
        ),
        multipart("notes.txt", "Uploaded text about Copenhagen."),
        multipart("page.html", "<html><title>T</title><p>Hi</p></html>"),
        multipart("edges.csv", "source,relation,target\nA,knows,B\n"),
        multipart("corpus.jsonl", "{\"title\": \"a\", \"text\": \"b\"}\n"),
        "GET /documents?search=Bohr&offset=0&limit=10 HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        format!("GET /documents/{id} HTTP/1.1\r\nHost: x\r\n\r\n"),
        format!("DELETE /documents/{id} HTTP/1.1\r\nHost: x\r\n\r\n"),
        "GET /graph/entities?q=Bohr&limit=5 HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /graph/neighbourhood?entity=Aage%20Bohr&depth=2&max_nodes=50 HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /graph/entities/ent_x?max_mentions=3 HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /communities?level=0 HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /jobs HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /jobs/1 HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /jobs/1/events HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /stats HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /health HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /methods HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n".into(),
        "GET /api/tags HTTP/1.1\r\nHost: x\r\n\r\n".into(),
    ];
    let mut out = Vec::new();
    for (i, r) in requests.into_iter().enumerate() {
        // Each request to the open server, and to the keyed one without, with the
        // read-only and with the read-write key.
        let flags: &[u8] = if i % 2 == 0 { &[0, 1, 5, 3] } else { &[0, 1] };
        for f in flags {
            let mut v = vec![*f];
            v.extend(r.as_bytes());
            out.push(v);
        }
    }
    out
}

/// The request with consistent framing: body length from the bytes after the head, one
/// request per connection.
fn frame(raw: &[u8], auth: &[String]) -> (Vec<u8>, String, String) {
    let (head, body) = match find(raw, b"\r\n\r\n") {
        Some(i) => (&raw[..i], &raw[i + 4..]),
        None => (raw, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("").to_string();
    let mut out = request_line.clone().into_bytes();
    out.extend(b"\r\n");
    for l in lines {
        let name = l.split(':').next().unwrap_or("").trim().to_ascii_lowercase();
        if matches!(name.as_str(), "content-length" | "transfer-encoding" | "connection" | "expect" | "upgrade") {
            continue;
        }
        out.extend(l.as_bytes());
        out.extend(b"\r\n");
    }
    for a in auth {
        out.extend(a.as_bytes());
        out.extend(b"\r\n");
    }
    out.extend(format!("Content-Length: {}\r\nConnection: close\r\n\r\n", body.len()).as_bytes());
    out.extend(body);
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").split('?').next().unwrap_or("").chars().take(120).collect();
    (out, method, path)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn http(input: &[u8]) -> Result<(), String> {
    let s = servers()?;
    let flags = input.first().copied().unwrap_or(0);
    let keyed = flags & 1 == 1;
    let mut auth = Vec::new();
    if flags & 2 != 0 {
        auth.push(format!("Authorization: Bearer {RW_KEY}"));
    }
    if flags & 4 != 0 {
        auth.push(format!("X-API-Key: {RO_KEY}"));
    }
    let (request, method, path) = frame(input.get(1..).unwrap_or(&[]), &auth);
    let addr = if keyed { s.keyed } else { s.open };
    let mut conn = TcpStream::connect_timeout(&addr, ANSWER_WITHIN)
        .map_err(|e| format!("cannot connect to the server ({e}): is it gone?"))?;
    conn.set_read_timeout(Some(ANSWER_WITHIN)).map_err(|e| e.to_string())?;
    conn.set_write_timeout(Some(ANSWER_WITHIN)).map_err(|e| e.to_string())?;
    // The server may answer (e.g. 413) before reading the whole body: a failed write is
    // not a failure, a missing answer is.
    let _ = conn.write_all(&request);
    let mut reply = Vec::new();
    let mut buf = [0u8; 16 << 10];
    loop {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                reply.extend(&buf[..n]);
                if reply.len() > 4 << 20 {
                    break;
                }
            }
            // A stream (job events) may still be going: an answer has started.
            Err(_) => break,
        }
    }
    let status: Option<u16> = reply
        .strip_prefix(b"HTTP/1.1 ")
        // An HTTP/1.0 request is answered in HTTP/1.0.
        .or_else(|| reply.strip_prefix(b"HTTP/1.0 "))
        .and_then(|r| std::str::from_utf8(r.get(..3)?).ok())
        .and_then(|c| c.parse().ok());
    let Some(status) = status else {
        if reply.is_empty() {
            // Connection closed or timed out without an answer: fine only when the
            // request was not HTTP (the server may drop it).
            return if looks_like_http(&request) {
                Err(format!("no answer to {method} {path} within {ANSWER_WITHIN:?}"))
            } else {
                Ok(())
            };
        }
        return Err(format!(
            "an answer that is not HTTP/1.x: {:?}",
            String::from_utf8_lossy(&reply[..reply.len().min(80)])
        ));
    };
    // An accepted upload or deletion runs as a background job: wait for every job to end,
    // so that the indexing's time and memory are charged to the request that caused it,
    // not to whichever input runs next (a deletion queued behind it, a query).
    if status == 202 {
        wait_for_jobs(s)?;
    }
    if status == 500 {
        let body = find(&reply, b"\r\n\r\n")
            .map(|i| String::from_utf8_lossy(&reply[i + 4..]).into_owned())
            .unwrap_or_default();
        return Err(format!("HTTP 500 for {method} {path}: {}", body.chars().take(300).collect::<String>()));
    }
    let reads = matches!(method.as_str(), "GET" | "HEAD")
        || matches!(path.as_str(), "/query" | "/v1/chat/completions" | "/api/chat");
    if keyed && flags & 2 == 0 && (200..300).contains(&status) && !reads {
        return Err(format!("the keyed server answered {status} to {method} {path} without the read-write key"));
    }
    Ok(())
}

/// Wait until neither server has a queued or running job (within [`JOBS_WITHIN`]).
fn wait_for_jobs(s: &Servers) -> Result<(), String> {
    let t = std::time::Instant::now();
    for (addr, auth) in [(s.open, String::new()), (s.keyed, format!("Authorization: Bearer {RW_KEY}\r\n"))] {
        loop {
            let req = format!("GET /jobs HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n");
            let mut conn = TcpStream::connect_timeout(&addr, ANSWER_WITHIN).map_err(|e| format!("GET /jobs: {e}"))?;
            conn.set_read_timeout(Some(ANSWER_WITHIN)).map_err(|e| e.to_string())?;
            conn.write_all(req.as_bytes()).map_err(|e| format!("GET /jobs: {e}"))?;
            let mut reply = Vec::new();
            conn.read_to_end(&mut reply).map_err(|e| format!("GET /jobs: {e}"))?;
            let body = find(&reply, b"\r\n\r\n").map_or(&[][..], |i| &reply[i + 4..]);
            let busy = find(body, b"\"state\":\"queued\"").is_some() || find(body, b"\"state\":\"running\"").is_some();
            if !reply.starts_with(b"HTTP/1.1 200") {
                return Err(format!("GET /jobs answered {:?}", String::from_utf8_lossy(&reply[..reply.len().min(80)])));
            }
            if !busy {
                break;
            }
            if t.elapsed() > JOBS_WITHIN {
                return Err(format!("write jobs still running after {JOBS_WITHIN:?}"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    Ok(())
}

/// A request line hyper would take: a token, a space, a target, a space, HTTP/1.x.
fn looks_like_http(request: &[u8]) -> bool {
    let line = request.split(|b| *b == b'\n').next().unwrap_or(&[]);
    let line = String::from_utf8_lossy(line);
    let parts: Vec<&str> = line.trim_end_matches('\r').split(' ').collect();
    parts.len() == 3
        && !parts[0].is_empty()
        && parts[0].bytes().all(|b| b.is_ascii_alphabetic())
        && parts[1].starts_with('/')
        && matches!(parts[2], "HTTP/1.1" | "HTTP/1.0")
}

pub fn targets() -> Vec<Target> {
    vec![Target {
        name: "http",
        what: "the HTTP server (open and keyed), raw requests to every route over 127.0.0.1",
        max_len: 64 << 10,
        dict: DICT,
        seeds,
        run: http,
        min_time_limit_s: 40,
    }]
}
