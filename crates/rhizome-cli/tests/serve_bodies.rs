//! Hostile request bodies against a real `rhizome serve`: 10 GB uploads and
//! JSON bodies streamed (made on the fly, never stored), malformed multipart, and
//! zip-bomb-like JSON. Each is refused with a 4xx `{error, hint}` (or, past the limit of a
//! body with no announced length, the connection closed) without the server's memory
//! growing with the body; the server lives, and nothing reaches the index or the
//! temporary directory.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::fixture::examples_copy;
use support::raw::{host_port, rss_mib, send, stream, PeakRss, Reply};
use support::server::{serve_cmd, start_cmd, Server};

const TEN_GB: u64 = 10 << 30;
const KEY: &str = "bodies-key-5c0ffee1";
/// `--max-upload-mb` of these servers.
const LIMIT_MB: u64 = 64;
/// Memory a refused body may add to the server, in MiB: well under the body limit itself.
const GROWTH_MIB: f64 = 160.0;

/// A server with its own temporary directory (to see uploads cleaned up).
fn server(dir: &Path) -> (Server, PathBuf) {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let tmp_s = tmp.to_string_lossy().into_owned();
    let c = serve_cmd(&examples_copy(dir), &["--api-key", KEY], &[("TMPDIR", &tmp_s)]);
    let mut s = start_cmd(c);
    s.key = Some(KEY.into());
    (s, tmp)
}

fn state(s: &Server) -> Value {
    json!({"stats": s.get_json("/stats"), "documents": s.get_json("/documents"), "jobs": s.get_json("/jobs")})
}

fn head(path: &str, ctype: &str, length: Option<u64>, extra: &str) -> String {
    let len = match length {
        Some(n) => format!("Content-Length: {n}\r\n"),
        None => "Transfer-Encoding: chunked\r\n".into(),
    };
    format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nContent-Type: {ctype}\r\n{len}{extra}\r\n"
    )
}

/// After a refused request: the server lives and answers, nothing was indexed or queued,
/// no upload is left in its temporary directory, and its memory grew by less than
/// [`GROWTH_MIB`] while the request ran.
fn check_after(s: &mut Server, tmp: &Path, before: &Value, rss0: f64, peak: f64, what: &str) {
    assert!(s.alive(), "the server died on {what}");
    assert_eq!(&state(s), before, "{what} changed the index or queued a job");
    let left: Vec<_> = std::fs::read_dir(tmp).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "{what} left {left:?} in the server's temporary directory");
    assert!(peak - rss0 < GROWTH_MIB, "{what}: server RSS {rss0:.0} -> peak {peak:.0} MiB");
}

fn refused(r: &Reply, announced: bool, what: &str) {
    if announced {
        // The length was announced: the answer is a 413 at once, not a reset.
        assert_eq!(r.status, Some(413), "{what}: {:?}", r.text);
        assert!(r.is_client_error_json(), "{what}: not an {{error, hint}} body: {:?}", r.text);
    } else {
        assert!(r.status.is_none() || r.is_client_error_json(), "{what}: {:?}", r.text);
        assert!(matches!(r.status, None | Some(413)), "{what}: {:?}", r.text);
    }
    let bound = (LIMIT_MB + 16) << 20;
    assert!(r.written < bound, "{what}: the server read {} MiB before refusing", r.written >> 20);
}

/// 10 GB bodies, announced or chunked, to the upload (multipart and JSON) and to /query.
#[test]
fn ten_gigabyte_bodies_are_refused_early() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, tmp) = server(dir.path());
    let addr = host_port(&s.base);
    let before = state(&s);
    let boundary = "XyZbOuNdArY";
    let part = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"huge.txt\"\r\nContent-Type: text/plain\r\n\r\n");
    let json_doc = "{\"documents\": [{\"title\": \"huge\", \"text\": \"";
    let query = "{\"question\": \"";
    let mp = format!("multipart/form-data; boundary={boundary}");
    let cases: Vec<(&str, &str, String, &'static str, bool)> = vec![
        ("multipart upload, length announced", "/documents", mp.clone(), "", true),
        (
            "multipart upload, length announced, Expect: 100-continue",
            "/documents",
            mp.clone(),
            "Expect: 100-continue\r\n",
            true,
        ),
        ("multipart upload, chunked", "/documents", mp.clone(), "", false),
        ("JSON upload, length announced", "/documents", "application/json".into(), "", true),
        ("JSON upload, chunked", "/documents", "application/json".into(), "", false),
        ("JSON query, length announced", "/query", "application/json".into(), "", true),
        ("JSON query, chunked", "/query", "application/json".into(), "", false),
        ("chat completion, chunked", "/v1/chat/completions", "application/json".into(), "", false),
    ];
    for (what, path, ctype, extra, announced) in cases {
        let prefix: Vec<u8> = match path {
            "/documents" if ctype.starts_with("multipart") => part.clone().into_bytes(),
            "/documents" => json_doc.as_bytes().to_vec(),
            "/query" => query.as_bytes().to_vec(),
            _ => b"{\"messages\": [{\"role\": \"user\", \"content\": \"".to_vec(),
        };
        let rss0 = rss_mib(s.pid());
        let watch = PeakRss::watch(s.pid());
        let t = std::time::Instant::now();
        let r = stream(
            &addr,
            &head(path, &ctype, announced.then_some(TEN_GB), extra),
            TEN_GB,
            !announced,
            move |at, buf| {
                for (i, b) in buf.iter_mut().enumerate() {
                    let pos = at + i as u64;
                    *b = if (pos as usize) < prefix.len() {
                        prefix[pos as usize]
                    } else {
                        b"lorem ipsum "[(pos % 12) as usize]
                    };
                }
            },
        );
        let peak = watch.peak_mib();
        refused(&r, announced, what);
        check_after(&mut s, &tmp, &before, rss0, peak, what);
        eprintln!(
            "{what}: {:?} after {} MiB sent, {:.1} s; server RSS {rss0:.0} -> peak {peak:.0} MiB",
            r.status,
            r.written >> 20,
            t.elapsed().as_secs_f64()
        );
    }
}

/// Bodies the multipart parser must refuse: no boundary, a truncated part, a huge part
/// head, thousands of parts with a broken end; and a file name with `../` which is
/// indexed under its base name only, writing nothing outside.
#[test]
fn malformed_multipart_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, tmp) = server(dir.path());
    let addr = host_port(&s.base);
    let before = state(&s);
    let b = "BoUnDaRy42";
    let file = |name: &str, body: &str| {
        format!("--{b}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"{name}\"\r\n\r\n{body}\r\n")
    };
    let many: String = (0..5000).map(|i| file(&format!("p{i}.txt"), "Tiny part.")).collect();
    // (A well-formed part with an 8 MB header is accepted: the body limit bounds it.)
    let huge_head = format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nX-Pad: {}\r\n\r\nbody",
        "p".repeat(8 << 20)
    );
    let many_heads = format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n{}\r\nbody\r\n--{b}--\r\n",
        "X-A: b\r\n".repeat(200_000)
    );
    let cases: Vec<(&str, String, String)> = vec![
        ("no boundary", "multipart/form-data".into(), file("a.txt", "text") + &format!("--{b}--\r\n")),
        (
            "a boundary that never comes",
            format!("multipart/form-data; boundary={b}"),
            "just some bytes, no parts at all".into(),
        ),
        (
            "a truncated part",
            format!("multipart/form-data; boundary={b}"),
            format!("--{b}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\nhalf a fi"),
        ),
        ("an 8 MB part header, the part cut short", format!("multipart/form-data; boundary={b}"), huge_head),
        ("200,000 part headers", format!("multipart/form-data; boundary={b}"), many_heads),
        ("5,000 parts, then no closing boundary", format!("multipart/form-data; boundary={b}"), many.clone()),
        (
            "a part with no file name",
            format!("multipart/form-data; boundary={b}"),
            format!("--{b}\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nx\r\n--{b}--\r\n"),
        ),
        (
            "a file type that cannot be indexed",
            format!("multipart/form-data; boundary={b}"),
            file("tool.exe", "MZ") + &format!("--{b}--\r\n"),
        ),
        ("an empty upload", format!("multipart/form-data; boundary={b}"), format!("--{b}--\r\n")),
        (
            "a multipart body declared as JSON",
            "application/json".into(),
            file("a.txt", "text") + &format!("--{b}--\r\n"),
        ),
    ];
    for (what, ctype, body) in cases {
        let rss0 = rss_mib(s.pid());
        let watch = PeakRss::watch(s.pid());
        let req = format!("POST /documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        let r = send(&addr, req.as_bytes());
        let peak = watch.peak_mib();
        assert!(r.is_client_error_json(), "{what}: {:?}", r.text.get(..300));
        check_after(&mut s, &tmp, &before, rss0, peak, what);
        eprintln!("{what}: {:?} {}", r.status, r.json().unwrap()["error"]);
    }
    // `../` in a file name: indexed as `evil`, nothing written beside the temporary dir.
    let evil = dir.path().join("evil-hostile.txt");
    let body = file(&format!("../../../../../../../../..{}", evil.display()), "Vantorel Quux built a bridge in Oslo.")
        + &format!("--{b}--\r\n");
    let req = format!("POST /documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nContent-Type: multipart/form-data; boundary={b}\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    let r = send(&addr, req.as_bytes());
    assert_eq!(r.status, Some(202), "{:?}", r.text);
    s.wait_job(r.json().unwrap()["job_id"].as_u64().unwrap());
    assert!(!evil.exists(), "the upload wrote {}", evil.display());
    let docs = s.get_json("/documents");
    let titles: Vec<&str> = docs["documents"].as_array().unwrap().iter().filter_map(|d| d["title"].as_str()).collect();
    assert!(titles.contains(&"evil-hostile"), "{titles:?}");
    assert_eq!(docs["total"].as_u64(), before["documents"]["total"].as_u64().map(|n| n + 1));
}

/// JSON made to cost far more parsed than sent: nesting a million deep, arrays of
/// millions of small values, very long strings, to every JSON endpoint. 4xx `{error,
/// hint}`, memory bounded.
#[test]
fn zip_bomb_json_is_refused_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, tmp) = server(dir.path());
    let addr = host_port(&s.base);
    let before = state(&s);
    let deep = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    let zeros = format!("[{}0]", "0,".repeat(25_000_000));
    let empties = format!("[{}{{}}]", "{},".repeat(16_000_000));
    let long = "a".repeat(50 << 20);
    let bodies: Vec<(&str, &str, String)> = vec![
        ("/query", "nested 1e6 deep", format!("{{\"question\": \"q\", \"params\": {{\"a.b\": {deep}}}}}")),
        ("/query", "50 MB of zeros in params", format!("{{\"question\": \"q\", \"params\": {{\"a.b\": {zeros}}}}}")),
        ("/query", "48 MB of empty objects in history", format!("{{\"question\": \"q\", \"history\": {empties}}}")),
        ("/query", "a 50 MB question", format!("{{\"question\": \"{long}\"}}")),
        (
            "/v1/chat/completions",
            "nested 1e6 deep",
            format!("{{\"messages\": [{{\"role\": \"user\", \"content\": {deep}}}]}}"),
        ),
        (
            "/v1/chat/completions",
            "50 MB of zeros as content",
            format!("{{\"messages\": [{{\"role\": \"user\", \"content\": {zeros}}}]}}"),
        ),
        (
            "/api/chat",
            "50 MB of zeros as content",
            format!("{{\"messages\": [{{\"role\": \"user\", \"content\": \"x\", \"images\": {zeros}}}]}}"),
        ),
        ("/api/chat", "48 MB of empty messages", format!("{{\"messages\": {empties}}}")),
        ("/documents", "nested 1e6 deep", format!("{{\"documents\": {deep}}}")),
        ("/documents", "16 million empty documents", format!("{{\"documents\": {empties}}}")),
        (
            "/documents",
            "2.5 million one-letter documents",
            format!("{{\"documents\": [{}]}}", vec!["{\"title\":\"\",\"text\":\"a\"}"; 2_500_000].join(",")),
        ),
    ];
    for (path, what, body) in bodies {
        let what = format!("POST {path}: {what}");
        let rss0 = rss_mib(s.pid());
        let watch = PeakRss::watch(s.pid());
        let req = format!("POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        let t = std::time::Instant::now();
        let r = send(&addr, &bytes);
        let peak = watch.peak_mib();
        assert!(r.is_client_error_json(), "{what}: {:?}", r.text.get(..300));
        check_after(&mut s, &tmp, &before, rss0, peak, &what);
        eprintln!(
            "{what} ({} MiB): {:?} in {:.2} s, server RSS {rss0:.0} -> peak {peak:.0} MiB: {}",
            body.len() >> 20,
            r.status,
            t.elapsed().as_secs_f64(),
            r.json().unwrap()["error"]
        );
    }
}
