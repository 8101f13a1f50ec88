//! Writers at the same time, end to end: `rhizome serve` and a `rhizome index` run on one
//! SQLite index, and three servers on one PostgreSQL database. One writer at a time (the
//! other waits), nothing lost, readers always answered.

mod support;

use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::server::{files_of, start, Server};
use support::*;

const Q: &str = "Who founded the company?";

/// Clients asking `servers` (round robin) until `stop`: (answered, failures). A server
/// without an index yet answers 404; once one answered, every later answer must be 200.
fn readers(servers: Vec<Arc<Server>>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<(usize, Vec<String>)> {
    std::thread::spawn(move || {
        let (mut answered, mut failures) = (0, Vec::new());
        let mut i = 0;
        while !stop.load(Ordering::SeqCst) {
            let s = &servers[i % servers.len()];
            let method = ["hippo", "basic"][i % 2];
            let r = s.post_json("/query", &json!({"question": Q, "method": method}));
            let status = r.status().as_u16();
            let body = r.text().unwrap_or_default();
            if status == 200 {
                answered += 1;
            } else if answered > 0 || status != 404 {
                failures.push(format!("{status}: {body}"));
            }
            i += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        (answered, failures)
    })
}

fn cli_index(idx: &Path, what: &Path) -> Child {
    let mut c = rz(idx);
    c.arg("index").arg(what).stdout(Stdio::piped()).stderr(Stdio::piped());
    c.spawn().unwrap()
}

fn finish(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "rhizome index failed: {err}");
    err
}

/// The server's upload of A and a CLI run indexing B on one SQLite index, started in
/// both orders while clients query: the second writer waits for the first (the CLI says
/// for whom), every query is answered, and the index ends equal, table for table, to the
/// same two writes one after the other.
#[test]
fn server_and_cli_write_one_index_in_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let a = musique_docs(&tmp.path().join("a"), 400, 12);
    let b = musique_docs(&tmp.path().join("b"), 412, 12);
    let env = [("RHIZOME_EMBED_DOCS_PER_BATCH", "2")];
    let upload = |s: &Server| s.upload(&files_of(&a));
    // The two sequential orders.
    let ab = tmp.path().join("ab");
    {
        let s = start(&ab, &[], &env);
        s.wait_job(upload(&s));
    }
    finish(cli_index(&ab, &b));
    let ba = tmp.path().join("ba");
    finish(cli_index(&ba, &b));
    {
        let s = start(&ba, &[], &env);
        s.wait_job(upload(&s));
    }
    let (want_ab, want_ba) = (dump(&ab), dump(&ba));

    for server_first in [true, false] {
        let idx = tmp.path().join(format!("idx-{server_first}"));
        let s = Arc::new(start(&idx, &[], &env));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = readers(vec![s.clone()], stop.clone());
        let (job, cli) = if server_first {
            let job = upload(&s);
            let t = Instant::now();
            while s.get_json(&format!("/jobs/{job}"))["done"].as_u64().unwrap_or(0) == 0 {
                assert!(t.elapsed() < Duration::from_secs(120), "the upload did not start");
                std::thread::sleep(Duration::from_millis(20));
            }
            (job, cli_index(&idx, &b))
        } else {
            let cli = cli_index(&idx, &b);
            let t = Instant::now();
            while std::fs::read_to_string(idx.join("rhizome.lock")).unwrap_or_default().trim().is_empty() {
                assert!(t.elapsed() < Duration::from_secs(120), "the CLI never took the lock");
                std::thread::sleep(Duration::from_millis(10));
            }
            (upload(&s), cli)
        };
        let done = s.wait_job(job);
        let err = finish(cli);
        stop.store(true, Ordering::SeqCst);
        let (answered, failures) = reader.join().unwrap();
        assert!(failures.is_empty(), "server_first={server_first}: queries failed during the writes: {failures:?}");
        assert!(answered > 0, "no query answered");
        assert_eq!(done["outcome"]["report"]["documents_indexed"], 12, "{done:#}");
        if server_first {
            // The server held the index when the CLI started: the CLI waited, and said for whom.
            assert!(err.contains("waiting: index") && err.contains("rhizome serve"), "{err}");
        }
        let got = dump(&idx);
        let (d_ab, d_ba) = (diff(&got, &want_ab), diff(&got, &want_ba));
        assert!(
            d_ab.is_empty() || d_ba.is_empty(),
            "server_first={server_first}: equals neither order:\nvs A,B: {d_ab:#?}\nvs B,A: {d_ba:#?}"
        );
        assert_eq!(s.get_json("/health")["documents"], 24);
        eprintln!("server_first={server_first}: {answered} queries answered during the writes");
    }
}

/// An accepted upload waits for a writer that holds the index longer than one attempt of
/// the server's lock wait (10 s), saying so in its stage, and is indexed once the writer
/// is gone: it is not failed as busy.
#[test]
fn an_upload_waits_out_a_long_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let a = musique_docs(&tmp.path().join("a"), 430, 3);
    let idx = tmp.path().join("idx");
    let s = start(&idx, &[], &[]);
    s.wait_job(s.upload(&files_of(&musique_docs(&tmp.path().join("seed"), 440, 2))));
    // Another process's writer: the lock held by this test, with a holder line.
    let lock = std::fs::OpenOptions::new().read(true).write(true).open(idx.join("rhizome.lock")).unwrap();
    lock.lock().unwrap();
    std::fs::write(idx.join("rhizome.lock"), "999999\n0\nrhizome index (a test)\n").unwrap();
    let job = s.upload(&files_of(&a));
    let t = Instant::now();
    let mut said = String::new();
    while t.elapsed() < Duration::from_secs(16) {
        let v = s.get_json(&format!("/jobs/{job}"));
        assert_ne!(v["state"], "failed", "the upload failed while it waited: {v:#}");
        if let Some(stage) = v["stage"].as_str().filter(|x| x.contains("waiting for the writer lock")) {
            said = stage.to_string();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(said.contains("rhizome index (a test)"), "the job's stage should name the holder: {said:?}");
    lock.unlock().unwrap();
    let done = s.wait_job(job);
    assert_eq!(done["outcome"]["report"]["documents_indexed"], 3, "{done:#}");
    assert_eq!(s.get_json("/health")["documents"], 5);
}

fn pg_count(url: &str, sql: &str) -> String {
    rhizome_testdb::postgres::psql(url, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Three `rhizome serve` on one PostgreSQL database, each uploading its own documents
/// while the others are queried: every job done, every query answered, no entity or fact
/// twice, and the stats equal one server uploading every document.
#[test]
fn three_servers_on_one_postgres_database() {
    let tmp = tempfile::tempdir().unwrap();
    let sets: Vec<_> = (0..3).map(|i| musique_docs(&tmp.path().join(format!("s{i}")), 500 + 8 * i, 8)).collect();
    let all = tmp.path().join("all");
    std::fs::create_dir_all(&all).unwrap();
    for s in &sets {
        for (name, bytes) in files_of(s) {
            std::fs::write(all.join(name), bytes).unwrap();
        }
    }
    let env_for =
        |url: &str| vec![("RHIZOME_STORE_URL", url.to_string()), ("RHIZOME_EMBED_DOCS_PER_BATCH", "2".to_string())];
    let start_on = |url: &str, dir: &Path| {
        let env = env_for(url);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Arc::new(start(dir, &[], &env))
    };
    let one = rhizome_testdb::postgres::fresh_database("one");
    let want = {
        let s = start_on(&one, &tmp.path().join("one"));
        s.wait_job(s.upload(&files_of(&all)));
        s.get_json("/stats")
    };

    let shared = rhizome_testdb::postgres::fresh_database("three");
    let servers: Vec<Arc<Server>> = (0..3).map(|i| start_on(&shared, &tmp.path().join(format!("w{i}")))).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = readers(servers.clone(), stop.clone());
    let jobs: Vec<u64> = servers.iter().zip(&sets).map(|(s, set)| s.upload(&files_of(set))).collect();
    for (s, job) in servers.iter().zip(&jobs) {
        let done = s.wait_job(*job);
        assert_eq!(done["outcome"]["report"]["documents_indexed"], 8, "{done:#}");
    }
    stop.store(true, Ordering::SeqCst);
    let (answered, failures) = reader.join().unwrap();
    assert!(failures.is_empty(), "queries failed during the writes: {failures:?}");
    assert!(answered > 0);
    for s in &servers {
        assert_eq!(s.get_json("/health")["documents"], 24);
    }
    let got: Vec<Value> = servers.iter().map(|s| s.get_json("/stats")).collect();
    assert_eq!(got[0], want, "three servers vs one server uploading everything");
    assert!(got.iter().all(|g| *g == got[0]), "the servers disagree: {got:#?}");
    for (what, sql) in [
        ("entities", "SELECT count(*) - count(DISTINCT (name, entity_type)) FROM entities"),
        ("entity support", "SELECT count(*) - count(DISTINCT (entity_id, doc_id, chunk_id, name)) FROM entity_support"),
        ("chunks", "SELECT count(*) FROM chunks"),
        ("facts", "SELECT count(*) - count(DISTINCT (subject, predicate, object)) FROM facts"),
        ("documents", "SELECT count(*) - count(DISTINCT source) FROM documents"),
    ] {
        assert_eq!(pg_count(&shared, sql), pg_count(&one, sql), "{what}: duplicates beyond one server's");
    }
    eprintln!("three servers: {answered} queries answered during the writes");
}
