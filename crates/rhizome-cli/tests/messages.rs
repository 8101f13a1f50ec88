//! Messages that point the right way: each bad input or damaged index gets a message that
//! names the input and the fix, and changes nothing.

mod support;

use std::path::Path;

use support::*;

fn fails(mut c: std::process::Command) -> String {
    let out = c.output().expect("run rhizome");
    assert!(!out.status.success(), "expected a failure; stdout: {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn an_empty_folder_is_refused_and_no_index_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.exe"), "MZ").unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.arg("index").arg(&empty);
    let err = fails(c);
    assert!(err.contains("nothing to index") && err.contains(&*empty.display().to_string()), "{err}");
    assert!(err.contains(".txt") && err.contains("unsupported file type .exe"), "{err}");
    assert!(!idx.exists(), "no index is created for nothing");
}

#[test]
fn an_index_path_that_is_a_file_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    for args in [vec!["index", "IN"], vec!["stats"], vec!["query", "Who?"]] {
        let mut c = rz(&file);
        for a in &args {
            if *a == "IN" {
                c.arg(examples());
            } else {
                c.arg(a);
            }
        }
        let err = fails(c);
        assert!(err.contains("is a file, not an index directory") && err.contains("--index"), "{args:?}: {err}");
        assert!(!err.contains("os error 17"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn a_zero_byte_database_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    std::fs::create_dir_all(&idx).unwrap();
    std::fs::write(idx.join("rhizome.sqlite"), b"").unwrap();
    for args in [vec!["stats"], vec!["index"]] {
        let mut c = rz(&idx);
        c.args(&args);
        if args[0] == "index" {
            c.arg(examples());
        }
        let err = fails(c);
        assert!(err.contains("is empty (0 bytes)") && err.contains("rhizome.sqlite"), "{err}");
    }
    assert_eq!(std::fs::metadata(idx.join("rhizome.sqlite")).unwrap().len(), 0);
}

/// `delete` finds a document by any spelling of its path; `documents` lists what is
/// indexed, and the hint for an unknown document points there.
#[test]
fn delete_finds_a_document_by_any_spelling_and_documents_lists_them() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for f in ["a.md", "b.md", "c.md"] {
        std::fs::write(docs.join(f), format!("# {f}\n\nNiels Bohr visited {f} in Copenhagen.\n")).unwrap();
    }
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.current_dir(tmp.path()).args(["index", "./docs"]);
    ok(c);
    let mut c = rz(&idx);
    c.arg("documents");
    let page = json(c);
    assert_eq!(page["total"], 3, "{page}");
    assert!(page["documents"][0]["chunks"].as_u64().unwrap() >= 1);
    assert_eq!(page["documents"][0]["language"], "en");
    for (spelling, dir) in [
        ("./docs/a.md", tmp.path().to_path_buf()),
        ("docs//b.md", tmp.path().to_path_buf()),
        (docs.join("c.md").to_str().unwrap(), Path::new("/").to_path_buf()),
    ] {
        let mut c = rz(&idx);
        c.current_dir(&dir).args(["delete", spelling]);
        let out = json(c);
        assert_eq!(out["deleted"]["documents"], 1, "{spelling}: {out}");
    }
    assert_eq!(stats(&idx)["nodes"]["Document"], 0);
    let mut c = rz(&idx);
    c.args(["delete", "nope.md"]);
    let err = fails(c);
    assert!(err.contains("nope.md") && err.contains("rhizome documents"), "{err}");
}

/// Editing one of three files: 0 new, 1 replaced, 2 unchanged.
#[test]
fn an_edited_file_is_replaced_not_new() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for f in ["a.txt", "b.txt", "c.txt"] {
        std::fs::write(docs.join(f), format!("{f} mentions Aage Bohr.")).unwrap();
    }
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.arg("index").arg(&docs);
    ok(c);
    std::fs::write(docs.join("b.txt"), "b.txt now mentions Niels Bohr instead.").unwrap();
    let mut c = rz(&idx);
    c.arg("index").arg(&docs);
    let out = String::from_utf8_lossy(&ok(c).stdout).to_string();
    assert!(out.contains("indexed 0 new document(s) (2 unchanged, 1 replaced"), "{out}");
    assert_eq!(stats(&idx)["nodes"]["Document"], 3);
}

/// An edge list whose header is `subject,predicate,object` does not import it as a fact.
#[test]
fn an_edge_list_header_is_not_a_fact() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("edges.csv");
    std::fs::write(&f, "subject,predicate,object\nAage Bohr,won,Nobel Prize in Physics\n").unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.args(["import", "edges-csv"]).arg(&f);
    ok(c);
    assert_eq!(stats(&idx)["nodes"]["Fact"], 1);
}

/// Damage inside an index surfaces as a message naming the index and the fix, not as
/// "database disk image is malformed" alone.
#[test]
fn damage_inside_an_index_names_the_index_and_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.arg("index").arg(examples());
    ok(c);
    // Fold the WAL into the database, then overwrite the pages after the first few.
    let conn = rusqlite::Connection::open(idx.join("rhizome.sqlite")).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    drop(conn);
    let db = idx.join("rhizome.sqlite");
    let mut bytes = std::fs::read(&db).unwrap();
    let from = (page * 4) as usize;
    for b in bytes[from..].iter_mut() {
        *b = 0x5a;
    }
    std::fs::write(&db, &bytes).unwrap();
    let mut saw = 0;
    for args in [vec!["stats"], vec!["query", "Who shared the Nobel Prize with Aage Bohr?"], vec!["documents"]] {
        let mut c = rz(&idx);
        c.args(&args);
        let out = c.output().unwrap();
        if out.status.success() {
            continue;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains(&*idx.display().to_string()) && err.contains("damaged") && err.contains("backup"),
            "{args:?}: {err}"
        );
        saw += 1;
    }
    assert!(saw > 0, "the damage was never noticed");
}
