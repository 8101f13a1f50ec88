//! Shared helpers of the CLI's end-to-end tests: run the binary, read its JSON, and dump
//! every table of an index in a canonical form to compare two indexes exactly.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub mod fixture;
pub mod raw;
pub mod server;

pub fn shared() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    assert!(p.join("README.md").exists(), "shared data missing at {}: clone beside ../shared", p.display());
    p.canonicalize().unwrap()
}

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/docs").canonicalize().unwrap()
}

/// Writes the document fixtures (tests/fixtures/documents.py: PDFs, Office files, an
/// e-book, mail, scans, made by the test venv's pinned libraries) into `dir`; returns file
/// name -> the source text of each page.
pub fn document_fixtures(dir: &Path) -> BTreeMap<String, Vec<String>> {
    let python = rhizome_testdb::python::named("fixtures");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents.py");
    let out = Command::new(python).arg(script).arg(dir).output().unwrap();
    assert!(out.status.success(), "documents.py failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The binary on `index`, with the small model (the model is not the point of these tests).
pub fn rz(index: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    c.arg("--index").arg(index).env_remove("RHIZOME_INDEX").env_remove("RHIZOME_CONFIG");
    c.args(["--set", "embed.model=all-MiniLM-L6-v2"]);
    c
}

pub fn ok(mut c: Command) -> Output {
    let out = c.output().expect("run rhizome");
    assert!(
        out.status.success(),
        "rhizome failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn json(mut c: Command) -> Value {
    c.arg("--json");
    let out = ok(c);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

pub fn stats(index: &Path) -> Value {
    let mut c = rz(index);
    c.arg("stats");
    json(c)
}

/// `n` MuSiQue passages from `from` as .txt files in `dir` (title = file name).
pub fn musique_docs(dir: &Path, from: usize, n: usize) -> PathBuf {
    let corpus: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(shared().join("musique/musique_train_corpus.json")).unwrap())
            .unwrap();
    std::fs::create_dir_all(dir).unwrap();
    for (i, p) in corpus.iter().skip(from).take(n).enumerate() {
        let title = p["title"].as_str().unwrap();
        let text = p["text"].as_str().unwrap();
        std::fs::write(dir.join(format!("{:04}.txt", from + i)), format!("{title}\n\n{text}\n")).unwrap();
    }
    dir.to_path_buf()
}

/// Meta keys that count writes rather than describe content.
const VOLATILE_META: &[&str] =
    &["graph_version", "communities_version", "reports_version", "llm_usage", "documents_described_at"];

/// Every table of the index at `index`, each as its sorted rows (floats to 3 decimals,
/// chunk row numbers replaced by chunk ids, vectors by their size: [`vectors_close`]
/// compares them), so that two indexes compare equal when they hold the same content.
/// Embedding the same text in another batch can move a float in its last bits, hence the
/// rounding.
pub fn dump(index: &Path) -> BTreeMap<String, Vec<String>> {
    let conn =
        rusqlite::Connection::open_with_flags(index.join("rhizome.sqlite"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let tables: Vec<String> = {
        let mut s = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            .unwrap();
        let v = s.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap();
        v
    };
    let mut out = BTreeMap::new();
    for t in tables {
        let query = match t.as_str() {
            "chunks" => "SELECT id, doc_id, ordinal, text, tokens FROM chunks".to_string(),
            // When it was indexed is not content.
            "documents" => "SELECT id, source, title, text, language FROM documents".into(),
            "bm25_postings" => {
                "SELECT p.term, c.id, p.tf FROM bm25_postings p JOIN chunks c ON c.rowid = p.chunk_rowid".into()
            }
            "bm25_docs" => "SELECT c.id, d.len FROM bm25_docs d JOIN chunks c ON c.rowid = d.chunk_rowid".into(),
            _ => format!("SELECT * FROM {t}"),
        };
        let mut s = conn.prepare(&query).unwrap();
        let n = s.column_count();
        let mut rows: Vec<String> = s
            .query_map([], |r| {
                let mut cells = Vec::with_capacity(n);
                for i in 0..n {
                    cells.push(match r.get_ref(i)? {
                        rusqlite::types::ValueRef::Null => "NULL".to_string(),
                        rusqlite::types::ValueRef::Integer(x) => x.to_string(),
                        rusqlite::types::ValueRef::Real(x) => format!("{x:.3}"),
                        rusqlite::types::ValueRef::Text(x) => String::from_utf8_lossy(x).into_owned(),
                        // Vectors are compared by `vectors_close`; here only their size.
                        rusqlite::types::ValueRef::Blob(b) => format!("blob[{}]", b.len()),
                    });
                }
                Ok(cells.join("\t"))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        if t == "meta" {
            rows.retain(|r| !VOLATILE_META.iter().any(|k| r.starts_with(&format!("{k}\t"))));
        }
        rows.sort();
        out.insert(t, rows);
    }
    out
}

/// The tables where `a` and `b` differ, with a few differing rows each.
pub fn diff(a: &BTreeMap<String, Vec<String>>, b: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for (t, ra) in a {
        let rb = b.get(t).cloned().unwrap_or_default();
        if *ra != rb {
            let only_a: Vec<&String> = ra.iter().filter(|r| !rb.contains(r)).take(3).collect();
            let only_b: Vec<&String> = rb.iter().filter(|r| !ra.contains(r)).take(3).collect();
            out.push(format!(
                "{t}: {} vs {} rows; only in first: {only_a:?}; only in second: {only_b:?}",
                ra.len(),
                rb.len()
            ));
        }
    }
    for t in b.keys().filter(|t| !a.contains_key(*t)) {
        out.push(format!("{t}: only in second"));
    }
    out
}

/// The largest difference between the vectors of two indexes (every (kind, id) must be
/// in both), panicking when one lacks a vector the other has.
pub fn vector_gap(a: &Path, b: &Path) -> f32 {
    let read = |p: &Path| -> BTreeMap<(String, String), Vec<f32>> {
        let conn =
            rusqlite::Connection::open_with_flags(p.join("rhizome.sqlite"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        let mut s = conn.prepare("SELECT kind, id, vec FROM vectors").unwrap();
        let v = s
            .query_map([], |r| {
                let b: Vec<u8> = r.get(2)?;
                let v = b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                Ok(((r.get(0)?, r.get(1)?), v))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        v
    };
    let (va, vb) = (read(a), read(b));
    let ka: Vec<_> = va.keys().collect();
    let kb: Vec<_> = vb.keys().collect();
    assert_eq!(ka, kb, "the two indexes hold vectors of different nodes");
    let mut gap = 0f32;
    for (k, x) in &va {
        for (p, q) in x.iter().zip(&vb[k]) {
            gap = gap.max((p - q).abs());
        }
    }
    gap
}

/// Same content (see [`dump`]) and vectors within 1e-3.
pub fn assert_same_index(got: &Path, want: &Path, what: &str) {
    let d = diff(&dump(got), &dump(want));
    assert!(d.is_empty(), "{what}:\n{d:#?}");
    let gap = vector_gap(got, want);
    assert!(gap < 1e-3, "{what}: vectors differ by {gap}");
}

/// Workspaces on `store` (a directory, or a database store's URL) through the binary: a
/// workspace holds its own documents, the main index its own, and deleting the workspace
/// leaves the main index as it was.
pub fn workspaces_on(store: &str, tmp: &Path) {
    let on = |ws: Option<&str>, args: &[&str]| -> Command {
        let mut c = rz(tmp);
        c.args(["--store", store]);
        if let Some(w) = ws {
            c.args(["--workspace", w]);
        }
        c.args(args);
        c
    };
    ok(on(None, &["workspace", "create", "team-a"]));
    let mut c = on(Some("team-a"), &["index"]);
    c.arg(examples().join("rhizome-plants.md"));
    ok(c);
    let mut c = on(None, &["index"]);
    c.arg(examples().join("copenhagen-physics.txt"));
    ok(c);
    let listed = json(on(None, &["workspace", "list"]));
    assert_eq!(listed["workspaces"], serde_json::json!(["default", "team-a"]), "{listed}");
    let docs = |ws: Option<&str>| -> Vec<String> {
        let v = json(on(ws, &["documents"]));
        v["documents"].as_array().unwrap().iter().map(|d| d["source"].as_str().unwrap().to_string()).collect()
    };
    let (main, team) = (docs(None), docs(Some("team-a")));
    assert!(main.len() == 1 && main[0].ends_with("copenhagen-physics.txt"), "{main:?}");
    assert!(team.len() == 1 && team[0].ends_with("rhizome-plants.md"), "{team:?}");
    let answer = json(on(Some("team-a"), &["query", "Who shared the Nobel Prize in Physics with Aage Bohr?"]));
    let text = answer.to_string();
    assert!(!text.contains("copenhagen-physics"), "a workspace answers from its own documents only: {text}");
    let before = json(on(None, &["stats"]));
    ok(on(None, &["workspace", "delete", "team-a", "--yes"]));
    assert_eq!(json(on(None, &["workspace", "list"]))["workspaces"], serde_json::json!(["default"]));
    assert_eq!(json(on(None, &["stats"])), before, "the main index is untouched");
    let out = on(Some("team-a"), &["stats"]).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("no such workspace"));
}
