//! The real binary on a PostgreSQL store (`--store postgres://...`): index, every
//! retrieval method, delete and stats, compared with the embedded SQLite index built from
//! the same files in the same run. The server comes from rhizome-testdb (one per binary).

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::{examples, json, ok, rz};

fn on(store: &str, tmp: &Path) -> Command {
    let mut c = rz(tmp);
    c.args(["--store", store]);
    c
}

fn query(store: &str, tmp: &Path, q: &str, method: &str) -> Value {
    let mut c = on(store, tmp);
    c.args(["query", q, "--method", method]);
    json(c)
}

#[test]
fn postgres_store_indexes_queries_and_deletes_like_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = rhizome_testdb::postgres::fresh_database("cli");
    let lite = tmp.path().join("lite").display().to_string();
    for store in [&pg, &lite] {
        let mut c = on(store, tmp.path());
        c.arg("index").arg(examples());
        ok(c);
    }
    let stats = |store: &str| {
        let mut c = on(store, tmp.path());
        c.arg("stats");
        json(c)
    };
    assert_eq!(stats(&pg)["nodes"]["Document"], 3);
    assert_eq!(stats(&pg), stats(&lite));
    let q = "Who shared the Nobel Prize in Physics with Aage Bohr?";
    for method in ["hippo", "basic", "local", "global", "multihop"] {
        let (x, y) = (query(&pg, tmp.path(), q, method), query(&lite, tmp.path(), q, method));
        assert!(!x["contexts"].as_array().unwrap().is_empty(), "{method}: {x:#}");
        assert_eq!(x["contexts"], y["contexts"], "{method}: the same contexts as SQLite");
        assert_eq!(x["answer"], y["answer"], "{method}");
    }
    let top = query(&pg, tmp.path(), q, "hippo");
    assert!(top["contexts"][0]["source"].as_str().unwrap().ends_with("copenhagen-physics.txt"), "{top:#}");

    // Delete through the binary; the password never shows in messages.
    for store in [&pg, &lite] {
        let mut c = on(store, tmp.path());
        c.arg("delete").arg(examples().join("rhizome-plants.md"));
        ok(c);
    }
    assert_eq!(stats(&pg)["nodes"]["Document"], 2);
    assert_eq!(stats(&pg), stats(&lite));
    let secret = pg.replacen("postgres@", "postgres:hunter2@", 1);
    let out = on(&secret, tmp.path()).args(["delete", "no-such-doc"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && !err.contains("hunter2"), "{err}");
}

/// `rhizome serve` on PostgreSQL: uploads go in through the write job, queries and stats
/// answer (the server asks whether the index exists from its async handlers).
#[test]
fn postgres_store_serves_uploads_and_queries() {
    use support::server::{files_of, ok_json, start};
    let tmp = tempfile::tempdir().unwrap();
    let pg = rhizome_testdb::postgres::fresh_database("serve");
    let s = start(tmp.path(), &[], &[("RHIZOME_STORE_URL", pg.as_str())]);
    assert_eq!(s.get_json("/health")["documents"], 0);
    let job = s.upload(&files_of(&examples()));
    s.wait_job(job);
    assert_eq!(s.get_json("/stats")["nodes"]["Document"], 3);
    let q = serde_json::json!({"question": "Who shared the Nobel Prize in Physics with Aage Bohr?", "method": "hippo"});
    let r = ok_json(s.post_json("/query", &q));
    assert!(r["contexts"][0]["source"].as_str().unwrap().contains("copenhagen-physics"), "{r:#}");
    assert_eq!(s.get_json("/health")["documents"], 3);
}

#[test]
fn postgres_workspaces_are_schemas_of_one_database() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = rhizome_testdb::postgres::fresh_database("workspaces");
    support::workspaces_on(&pg, tmp.path());
}
