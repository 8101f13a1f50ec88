//! Two replicas of `rhizome serve` over one PostgreSQL database (no balancer): keys made
//! or revoked on one hold on the other within the key table's refresh time, and an upload
//! accepted by a replica killed (SIGKILL) before its job ran is taken over by the other,
//! under the same job id, and indexed once; a replica stopped (SIGTERM) with an upload
//! pending gives its lease up, so the other takes the upload without waiting for the
//! lease to run out. The first replica is kept from running its jobs by
//! `RHIZOME_TEST_JOB_DELAY_SECS`, so the kill always comes before the indexing.

mod replicas_support;
mod support;

use std::time::{Duration, Instant};

use replicas_support::Replica;
use reqwest::blocking::{Client, RequestBuilder};
use serde_json::{json, Value};
use support::rz;

/// The time within which a replica applies another's key changes (one refresh of the key
/// table, `rhizome_server::TABLE_REFRESH`), with room for a loaded machine.
const KEY_BOUND: Duration = Duration::from_secs(5);

fn status(r: RequestBuilder) -> u16 {
    r.send().unwrap().status().as_u16()
}

/// How long until `probe` answers `want` (panics after `within`).
fn until_status(within: Duration, want: u16, what: &str, probe: impl Fn() -> u16) -> Duration {
    let t = Instant::now();
    loop {
        let got = probe();
        if got == want {
            return t.elapsed();
        }
        assert!(t.elapsed() < within, "{what}: still {got} after {within:?}, expected {want}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Upload one text file to `base`; its job id (answered 202).
fn upload(http: &Client, base: &str, key: &str, name: &str, text: &str) -> u64 {
    let part = reqwest::blocking::multipart::Part::bytes(text.as_bytes().to_vec()).file_name(name.to_string());
    let form = reqwest::blocking::multipart::Form::new().part("file", part);
    let r = http.post(format!("{base}/documents")).bearer_auth(key).multipart(form).send().unwrap();
    assert_eq!(r.status().as_u16(), 202);
    r.json::<Value>().unwrap()["job_id"].as_u64().unwrap()
}

/// Poll job `id` on `base` until done, as a job another replica accepted (`resumed`).
fn wait_done(http: &Client, base: &str, key: &str, id: u64, on: &Replica) {
    let t = Instant::now();
    loop {
        let v: Value = http.get(format!("{base}/jobs/{id}")).bearer_auth(key).send().unwrap().json().unwrap();
        match v["state"].as_str() {
            Some("done") => {
                assert_eq!(v["resumed"], true, "{v:#}");
                return;
            }
            Some("failed") => panic!("job {id} failed: {v:#}\n{}", on.log()),
            _ => {}
        }
        assert!(t.elapsed() < Duration::from_secs(120), "job {id} not done: {v:#}\n{}", on.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn replicas_share_keys_and_finish_the_uploads_of_a_killed_replica() {
    let dir = tempfile::Builder::new().prefix("shared-").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let pg = rhizome_testdb::postgres::fresh_database("sharedkeys");
    let mut c = rz(&dir.path().join("cli"));
    c.env("RHIZOME_STORE_URL", &pg).arg("index").arg(support::examples());
    support::ok(c);
    let mut a = Replica::start_with(&dir.path().join("a"), &pg, &[("RHIZOME_TEST_JOB_DELAY_SECS", "3600")]);
    let b = Replica::start(&dir.path().join("b"), &pg);
    let (ua, ub) = (format!("http://127.0.0.1:{}", a.port), format!("http://127.0.0.1:{}", b.port));
    let http = Client::builder().timeout(Duration::from_secs(60)).build().unwrap();

    // No key in the table yet: both serve loopback without one. The first key, made on A.
    assert_eq!(status(http.get(format!("{ub}/stats"))), 200);
    let made: Value =
        http.post(format!("{ua}/keys")).json(&json!({"name": "root", "role": "admin"})).send().unwrap().json().unwrap();
    let root = made["key"].as_str().unwrap_or_else(|| panic!("{made:#}")).to_string();
    assert_eq!(status(http.get(format!("{ua}/stats"))), 401, "A asks for a key at once");
    let took = until_status(KEY_BOUND, 401, "B without a key", || status(http.get(format!("{ub}/stats"))));
    eprintln!("B asked for a key {:.0} ms after A made the first one", took.as_secs_f64() * 1000.0);
    assert_eq!(status(http.get(format!("{ub}/stats")).bearer_auth(&root)), 200);

    // `rhizome keys add` on the shared store: a read key, taken by B.
    let mut c = rz(&dir.path().join("cli"));
    c.env("RHIZOME_STORE_URL", &pg).args(["keys", "add", "reader", "--role", "read"]);
    let out = support::ok(c);
    let reader = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(reader.starts_with("rz_"), "{reader}");
    until_status(KEY_BOUND, 200, "B with the new read key", || {
        status(http.get(format!("{ub}/stats")).bearer_auth(&reader))
    });
    let part = reqwest::blocking::multipart::Part::bytes(b"x".to_vec()).file_name("x.txt");
    let form = reqwest::blocking::multipart::Form::new().part("file", part);
    assert_eq!(status(http.post(format!("{ub}/documents")).bearer_auth(&reader).multipart(form)), 403);
    let keys: Value = http.get(format!("{ub}/keys")).bearer_auth(&root).send().unwrap().json().unwrap();
    assert!(keys.as_array().unwrap().iter().any(|k| k["name"] == "reader" && k["source"] == "database"), "{keys:#}");
    // Revoked on A: refused by A at once, by B within the bound; the refusal names the key
    // in B's log, never the key.
    assert_eq!(status(http.delete(format!("{ua}/keys/reader")).bearer_auth(&root)), 204);
    assert_eq!(status(http.get(format!("{ua}/stats")).bearer_auth(&reader)), 401);
    let took = until_status(KEY_BOUND, 401, "B with the revoked key", || {
        status(http.get(format!("{ub}/stats")).bearer_auth(&reader))
    });
    eprintln!("B refused the revoked key {:.0} ms after A revoked it", took.as_secs_f64() * 1000.0);
    assert!(!b.log().contains(&reader[3..]) && !a.log().contains(&root[3..]), "a key reached a log");

    // An upload accepted by A (202), kept in the database; A killed before its job runs.
    let fjord = "Kept Upload Fjord. The Rhizome ferry crosses the Kept Upload Fjord every morning at seven.";
    let id = upload(&http, &ua, &root, "fjord.txt", fjord);
    let kept = rhizome_testdb::postgres::psql(&pg, "SELECT count(*) FROM serve_uploads").unwrap();
    assert_eq!(kept.trim(), "1", "the upload is in the database before the answer");
    let v: Value = http.get(format!("{ub}/jobs/{id}")).bearer_auth(&root).send().unwrap().json().unwrap();
    assert_eq!(v["state"], "queued", "B knows A's job: {v:#}");
    a.kill();
    let t = Instant::now();
    wait_done(&http, &ub, &root, id, &b);
    eprintln!("B finished A's upload {:.1} s after A was killed", t.elapsed().as_secs_f64());
    // Stopped with an upload pending, A gives its lease up as it exits.
    a.restart();
    let bay = "Released Lease Bay. Herons nest at Released Lease Bay from March to June.";
    let id2 = upload(&http, &ua, &root, "bay.txt", bay);
    a.stop();
    let held = rhizome_testdb::postgres::psql(
        &pg,
        &format!(
            "SELECT count(*) FROM serve_uploads WHERE replica LIKE '%:{}' AND lease_until > extract(epoch FROM clock_timestamp())",
            a.port
        ),
    )
    .unwrap();
    assert_eq!(held.trim(), "0", "a stopped replica holds no lease");
    let t = Instant::now();
    wait_done(&http, &ub, &root, id2, &b);
    eprintln!("B finished the upload of the stopped A {:.1} s after A exited", t.elapsed().as_secs_f64());

    let docs: Value = http.get(format!("{ub}/documents?limit=100")).bearer_auth(&root).send().unwrap().json().unwrap();
    let sources: Vec<&str> =
        docs["documents"].as_array().unwrap().iter().filter_map(|d| d["source"].as_str()).collect();
    for name in ["upload:fjord.txt", "upload:bay.txt"] {
        assert_eq!(sources.iter().filter(|s| **s == name).count(), 1, "{name} indexed once: {sources:?}");
    }
    assert_eq!(sources.len(), 5, "{sources:?}");
    let q = json!({"question": "When does the ferry cross the Kept Upload Fjord?", "method": "basic"});
    let r: Value = http.post(format!("{ub}/query")).bearer_auth(&root).json(&q).send().unwrap().json().unwrap();
    assert_eq!(r["contexts"][0]["source"], "upload:fjord.txt", "{r:#}");
    let kept = rhizome_testdb::postgres::psql(&pg, "SELECT count(*) FROM serve_uploads").unwrap();
    assert_eq!(kept.trim(), "0", "an indexed upload's row is removed");
}
