//! Replicas of `rhizome serve` over one PostgreSQL database, behind HAProxy (Debian's; see
//! scripts/install-test-deps): 16 clients query and upload through the load balancer for
//! `RHIZOME_SOAK_SECS` (60 by default; the test command, `scripts/test`, and
//! `scripts/soak-replicas` run it for 10 minutes) while one replica is killed (SIGKILL) midway and started again. Then: every
//! upload answered 2xx is indexed (its job, polled through the balancer whichever replica
//! answers, is done), the only errors are requests in flight on the killed replica when
//! it died, and the index's counts equal those of a fresh index of the surviving
//! documents. Also: `store.read_url` on a real streaming replica (pg_basebackup -R).

mod replicas_support;
mod support;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use replicas_support::{passages, Balancer, Record, Replica};
use serde_json::{json, Value};
use support::{json as run_json, rz, shared};

const CLIENTS: usize = 16;
const REPLICAS: usize = 3;
/// Longest time HAProxy may send requests to a killed replica (see `Balancer`).
const TAKEN_OUT: Duration = Duration::from_millis(1000);

/// A directory kept when the test panics.
struct Kept(Option<tempfile::TempDir>);

impl Kept {
    fn path(&self) -> &std::path::Path {
        self.0.as_ref().unwrap().path()
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.0.take().map(tempfile::TempDir::keep);
        }
    }
}

fn soak_secs() -> u64 {
    std::env::var("RHIZOME_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60)
}

/// One client: queries, and now and then an upload of a document of its own, the next
/// only once the last one's job is done (polled through the balancer).
fn client(c: usize, lb: &Balancer, until: Instant, questions: &[String], docs: &[(String, String)]) -> Vec<Record> {
    let http = reqwest::blocking::Client::builder().timeout(Duration::from_secs(300)).build().unwrap();
    let mut out = Vec::new();
    let (mut next_doc, mut pending): (usize, Option<u64>) = (0, None);
    let mut i = 0usize;
    while Instant::now() < until {
        i += 1;
        if pending.is_some() && i.is_multiple_of(4) {
            let id = pending.unwrap();
            let r = lb.send(&http, "job", None, || http.get(lb.url(&format!("/jobs/{id}"))));
            if matches!(r.body.as_ref().and_then(|b| b["state"].as_str()), Some("done" | "failed")) {
                pending = None;
            }
            out.push(r);
        } else if pending.is_none() && i.is_multiple_of(3) && next_doc < docs.len() {
            let (name, text) = docs[next_doc].clone();
            next_doc += 1;
            let r = lb.send(&http, "upload", Some(name.clone()), || {
                let part = reqwest::blocking::multipart::Part::bytes(text.clone().into_bytes()).file_name(name.clone());
                http.post(lb.url("/documents")).multipart(reqwest::blocking::multipart::Form::new().part("file", part))
            });
            pending = r.body.as_ref().and_then(|b| b["job_id"].as_u64());
            out.push(r);
        } else {
            let q = &questions[(c * 7 + i) % questions.len()];
            let method = ["basic", "hippo", "local"][(c + i) % 3];
            out.push(lb.send(&http, "query", None, || {
                http.post(lb.url("/query")).json(&json!({"question": q, "method": method}))
            }));
        }
    }
    out
}

#[test]
fn three_replicas_behind_haproxy_lose_nothing_when_one_is_killed() {
    let secs = soak_secs();
    // Kept when the test fails (logs of the replicas and of HAProxy), removed when it passes.
    let dir = tempfile::Builder::new().prefix("replicas-").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    eprintln!("logs in {}", dir.path().display());
    let dir = Kept(Some(dir));
    let pg = rhizome_testdb::postgres::fresh_database("replicas");
    // A seed, so that queries find something from the start.
    let seed = support::musique_docs(&dir.path().join("seed"), 0, 20);
    let mut c = rz(&dir.path().join("cli"));
    c.env("RHIZOME_STORE_URL", &pg).arg("index").arg(&seed);
    support::ok(c);

    let mut replicas: Vec<Replica> =
        (0..REPLICAS).map(|i| Replica::start(&dir.path().join(format!("r{i}")), &pg)).collect();
    let lb = Arc::new(Balancer::start(&dir.path().join("haproxy"), &replicas));
    let questions: Vec<String> = rhizome_eval::load_questions(&shared().join("musique/musique_train.json"))
        .unwrap()
        .into_iter()
        .map(|q| q.question)
        .collect();
    // Each client its own passages (distinct texts), 100 at most.
    let per_client = 100;
    let all = passages(20, CLIENTS * per_client);

    let t0 = Instant::now();
    let until = t0 + Duration::from_secs(secs);
    let records = Arc::new(Mutex::new(Vec::new()));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (lb, questions, records) = (lb.clone(), questions.clone(), records.clone());
            let docs: Vec<(String, String)> = all[c * per_client..(c + 1) * per_client].to_vec();
            std::thread::spawn(move || {
                let r = client(c, &lb, until, &questions, &docs);
                records.lock().unwrap().extend(r);
            })
        })
        .collect();

    // Midway, SIGKILL one replica; start it again 3 s later on the same port and spool.
    std::thread::sleep(Duration::from_secs(secs / 2));
    let killed_at = replicas[1].kill();
    let killed_name = replicas[1].name.clone();
    eprintln!("killed {killed_name} at {:.1} s", killed_at.duration_since(t0).as_secs_f64());
    std::thread::sleep(Duration::from_secs(3));
    replicas[1].restart();
    for c in clients {
        c.join().expect("a client panicked");
    }
    let records = std::mem::take(&mut *records.lock().unwrap());

    // Errors: only requests in flight on the killed replica when it died.
    let mut in_flight = 0;
    let mut unexpected = Vec::new();
    for r in &records {
        if r.ok() {
            continue;
        }
        // Sent before HAProxy took the killed replica out (its first failed connection, or
        // two failed health checks 0.3 s apart), ended after the kill.
        let during = r.start <= killed_at + TAKEN_OUT && r.end >= killed_at;
        let from_killed = r.replica.as_deref().is_none_or(|n| n == killed_name);
        if during && from_killed && r.lost_connection() {
            in_flight += 1;
        } else {
            unexpected.push(r.describe(t0));
        }
    }
    let count = |k: &str| records.iter().filter(|r| r.kind == k).count();
    let per_replica: Vec<(String, usize)> = (0..REPLICAS)
        .map(|i| {
            let n = format!("r{i}");
            let k = records.iter().filter(|r| r.replica.as_deref() == Some(&n)).count();
            (n, k)
        })
        .collect();
    eprintln!(
        "{} s, {} requests ({} queries, {} uploads, {} job polls), answered by {per_replica:?}; {in_flight} in flight on the killed replica, {} other errors",
        secs,
        records.len(),
        count("query"),
        count("upload"),
        count("job"),
        unexpected.len()
    );
    assert!(
        unexpected.is_empty(),
        "errors besides the killed replica's in-flight requests:\n{}",
        unexpected.join("\n")
    );
    assert!(in_flight <= CLIENTS, "{in_flight} requests in flight at the kill, with {CLIENTS} clients");
    assert!(per_replica.iter().all(|(_, n)| *n > 0), "every replica answered: {per_replica:?}");

    // Every upload answered 2xx: its job ends done (whichever replica is asked).
    let accepted: Vec<(String, u64)> = records
        .iter()
        .filter(|r| r.kind == "upload" && r.ok())
        .map(|r| (r.doc.clone().unwrap(), r.body.as_ref().unwrap()["job_id"].as_u64().unwrap()))
        .collect();
    assert!(!accepted.is_empty(), "no upload was accepted");
    let http = reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
    let ids: BTreeSet<u64> = accepted.iter().map(|(_, id)| *id).collect();
    assert_eq!(ids.len(), accepted.len(), "job ids are unique across replicas");
    let wait = Instant::now();
    for (name, id) in &accepted {
        loop {
            let v: Value = http.get(lb.url(&format!("/jobs/{id}"))).send().unwrap().json().unwrap();
            match v["state"].as_str() {
                Some("done") => break,
                Some("failed") => panic!("the upload of {name} (job {id}) failed: {v:#}"),
                _ => {}
            }
            assert!(wait.elapsed() < Duration::from_secs(600), "job {id} ({name}) not done: {v:#}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    // Every replica answers for a job, whichever accepted it: its state and its events.
    let (name, id) = &accepted[0];
    for r in &replicas {
        let base = format!("http://127.0.0.1:{}", r.port);
        let v: Value = http.get(format!("{base}/jobs/{id}")).send().unwrap().json().unwrap();
        assert_eq!(v["state"], "done", "{} on job {id} ({name}): {v:#}", r.name);
        let events = support::server::sse(http.get(format!("{base}/jobs/{id}/events")).send().unwrap());
        assert_eq!(events.last().map(|(_, v)| v["state"].clone()), Some(json!("done")), "{}: {events:?}", r.name);
    }
    // A second server on a replica's spool refuses to start, saying why.
    let mut c = rz(&dir.path().join("r0"));
    c.env("RHIZOME_STORE_URL", &pg).args(["serve", "--addr", "127.0.0.1:0"]);
    let out = replicas_support::output_within(c, Duration::from_secs(120));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("in use by another rhizome serve"), "{err}");

    let present = lb.sources(&http);
    let lost: Vec<&String> =
        accepted.iter().map(|(n, _)| n).filter(|n| !present.contains(&format!("upload:{n}"))).collect();
    let attempted: BTreeSet<String> =
        records.iter().filter(|r| r.kind == "upload").map(|r| format!("upload:{}", r.doc.clone().unwrap())).collect();
    let stray: Vec<&String> = present.iter().filter(|s| s.starts_with("upload:") && !attempted.contains(*s)).collect();
    eprintln!("{} uploads accepted, {} documents indexed, {} lost", accepted.len(), present.len(), lost.len());
    assert!(lost.is_empty(), "accepted uploads not indexed: {lost:?}");
    assert!(stray.is_empty(), "documents nobody uploaded: {stray:?}");

    // The counts equal a fresh index of the surviving documents (seed + uploads present).
    let fresh_dir = dir.path().join("fresh-docs");
    std::fs::create_dir_all(&fresh_dir).unwrap();
    for f in std::fs::read_dir(&seed).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, fresh_dir.join(f.file_name().unwrap())).unwrap();
    }
    for (name, text) in &all {
        if present.contains(&format!("upload:{name}")) {
            std::fs::write(fresh_dir.join(name), text).unwrap();
        }
    }
    let fresh = rhizome_testdb::postgres::fresh_database("replicasfresh");
    let mut c = rz(&dir.path().join("cli"));
    c.env("RHIZOME_STORE_URL", &fresh).arg("index").arg(&fresh_dir);
    support::ok(c);
    let mut c = rz(&dir.path().join("cli"));
    c.env("RHIZOME_STORE_URL", &fresh).arg("stats");
    let want = run_json(c);
    let got: Value = http.get(lb.url("/stats")).send().unwrap().json().unwrap();
    let counts = |v: &Value| {
        json!({"documents": v["nodes"]["Document"], "chunks": v["nodes"]["Chunk"], "entities": v["nodes"]["Entity"],
               "relations": v["edges"]["RELATED"]})
    };
    eprintln!("served: {got}\nfresh:  {want}");
    assert_eq!(counts(&got), counts(&want), "the served index vs a fresh index of the surviving documents");
    drop(lb);
}

/// `store.read_url`: queries read a real streaming replica (pg_basebackup -R) while the
/// upload is written to the primary; the replica catches up within a bounded time.
#[test]
fn read_url_serves_queries_from_a_streaming_replica() {
    let dir = tempfile::tempdir().unwrap();
    let pg = rhizome_testdb::postgres::fresh_database("readurl");
    let mut c = rz(&dir.path().join("cli"));
    c.env("RHIZOME_STORE_URL", &pg).arg("index").arg(support::examples());
    support::ok(c);
    let standby = rhizome_testdb::postgres::start_standby(&pg);
    let s = support::server::start(
        &dir.path().join("spool"),
        &[],
        &[("RHIZOME_STORE_URL", pg.as_str()), ("RHIZOME_STORE_READ_URL", standby.url.as_str())],
    );
    assert_eq!(s.get_json("/stats")["nodes"]["Document"], 3);
    let readers = |url: &str| {
        rhizome_testdb::postgres::psql(
            url,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .unwrap()
    };
    assert_ne!(readers(&standby.url), "0", "the server reads the replica");
    let docs = support::musique_docs(&dir.path().join("docs"), 0, 2);
    let job = s.upload(&support::server::files_of(&docs));
    s.wait_job(job);
    // The job is written on the primary; the replica shows it once replayed.
    let t = Instant::now();
    while s.get_json("/stats")["nodes"]["Document"] != 5 {
        assert!(t.elapsed() < Duration::from_secs(30), "the replica did not catch up in 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("the replica showed the upload {:.0} ms after its job was done", t.elapsed().as_secs_f64() * 1000.0);
    let q = json!({"question": "Who shared the Nobel Prize in Physics with Aage Bohr?", "method": "hippo"});
    let r = support::server::ok_json(s.post_json("/query", &q));
    assert!(r["contexts"][0]["source"].as_str().unwrap().contains("copenhagen-physics"), "{r:#}");
    // A read URL that is not PostgreSQL is refused, with the fix.
    let out = rz(dir.path()).args(["--set", "store.read_url=./elsewhere", "--store", &pg, "stats"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("store.read_url") && err.contains("streaming replica"), "{err}");
}
