//! Indexes compared exactly: a snapshot of every table, vector and the top contexts of
//! the fixed questions; what a killed run left half-written, and the stage it reached.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Setup, Store, QUESTIONS};
use crate::support::{diff, dump, ok, vector_gap};

/// What an index holds, in a form two indexes compare by: every table (via SQLite: a
/// PostgreSQL index is first copied into a SQLite directory with `rhizome copy`, and its
/// own tables' row counts are added), and the top contexts of the fixed questions.
pub struct Snapshot {
    sqlite: PathBuf,
    pub tables: std::collections::BTreeMap<String, Vec<String>>,
    contexts: Vec<String>,
}

pub fn snapshot(setup: &Setup, store: &Store, tmp: &Path, label: &str) -> Snapshot {
    let sqlite = match store {
        Store::Sqlite(dir) => dir.clone(),
        Store::Postgres { .. } => {
            let to = tmp.join(format!("copy-{label}"));
            let _ = std::fs::remove_dir_all(&to);
            let mut c = setup.cmd(store);
            c.arg("copy").arg("--to").arg(&to);
            ok(c);
            to
        }
    };
    let mut tables = dump(&sqlite);
    if let Store::Postgres { url, .. } = store {
        tables.insert("postgres_row_counts".into(), pg_row_counts(url));
    }
    let mut contexts = Vec::new();
    for q in QUESTIONS {
        for method in ["basic", "hippo"] {
            let mut c = setup.cmd(store);
            c.args(["--json", "query", q, "--method", method]);
            let out = ok(c);
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let ids: Vec<&str> =
                v["contexts"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap_or("")).collect();
            contexts.push(format!("{method} {q}: {ids:?}"));
        }
    }
    Snapshot { sqlite, tables, contexts }
}

/// Every table of the PostgreSQL database with its row count.
fn pg_row_counts(url: &str) -> Vec<String> {
    let names = rhizome_testdb::postgres::psql(
        url,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1",
    )
    .unwrap();
    names
        .lines()
        .filter(|t| !t.is_empty())
        .map(|t| {
            let n = rhizome_testdb::postgres::psql(url, &format!("SELECT count(*) FROM \"{t}\"")).unwrap();
            format!("{t}\t{n}")
        })
        .collect()
}

/// Documents a killed run left half-written in a SQLite index: a document without
/// chunks, a chunk without its vector, a document marked as written in part.
pub fn half_written(dir: &Path) -> Vec<String> {
    if !dir.join("rhizome.sqlite").exists() {
        return Vec::new();
    }
    let conn = rusqlite::Connection::open(dir.join("rhizome.sqlite")).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let mut out = Vec::new();
    for (what, sql) in [
        ("documents without chunks", "SELECT count(*) FROM documents d WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.doc_id = d.id)"),
        ("chunks without a vector", "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.kind = 'chunk' AND v.id = c.id)"),
        ("documents written in part", "SELECT count(*) FROM partial_documents"),
    ] {
        let n = count(sql);
        if n > 0 {
            out.push(format!("{n} {what}"));
        }
    }
    out
}

/// The differences between two snapshots (empty: the same index).
pub fn compare(got: &Snapshot, want: &Snapshot) -> Vec<String> {
    let mut d = diff(&got.tables, &want.tables);
    let gap = vector_gap(&got.sqlite, &want.sqlite);
    if gap >= 1e-3 {
        d.push(format!("vectors differ by {gap}"));
    }
    for (g, w) in got.contexts.iter().zip(&want.contexts) {
        if g != w {
            d.push(format!("contexts: {g} instead of {w}"));
        }
    }
    d
}

/// What a killed run had written, read from the state it left.
pub fn stage_hit(setup: &Setup, store: &Store, clean: &Value) -> String {
    let mut c = setup.cmd(store);
    c.args(["--json", "stats"]);
    let out = c.output().unwrap();
    let Ok(v) = serde_json::from_slice::<Value>(&out.stdout) else {
        return "start (nothing committed)".into();
    };
    let n = |v: &Value, k: &str, x: &str| v[k][x].as_u64().unwrap_or(0);
    let docs = n(&v, "nodes", "Document");
    if docs == 0 {
        "start (nothing committed)".into()
    } else if docs < n(clean, "nodes", "Document") || n(&v, "nodes", "Chunk") < n(clean, "nodes", "Chunk") {
        format!("indexing ({docs} of {} documents committed)", n(clean, "nodes", "Document"))
    } else if n(&v, "edges", "SYNONYM") != n(clean, "edges", "SYNONYM") {
        "synonymy (documents in, synonyms not)".into()
    } else if n(&v, "nodes", "Community") != n(clean, "nodes", "Community")
        || n(&v, "nodes", "CommunityReport") != n(clean, "nodes", "CommunityReport")
    {
        "communities (synonyms in, communities or reports not)".into()
    } else if v != *clean {
        "late (counts differ elsewhere)".into()
    } else {
        "end (every count already equal)".into()
    }
}
