//! `rhizome import graphrag-parquet`: a Microsoft GraphRAG output folder (the Operation
//! Dulce fixture of ../shared/data/graphrag_fixtures) imported into an index with the
//! default embedder, queried, imported again (nothing changes), and malformed folders
//! refused with the file named.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixture() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/graphrag_fixtures/operation_dulce");
    assert!(p.join("entities.parquet").exists(), "GraphRAG fixture missing at {}: clone beside ../shared", p.display());
    p.canonicalize().unwrap()
}

fn rz(index: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    c.arg("--index").arg(index).env_remove("RHIZOME_INDEX").env_remove("RHIZOME_CONFIG");
    c
}

fn run(mut c: Command) -> Output {
    c.output().expect("run rhizome")
}

fn json(mut c: Command) -> Value {
    c.arg("--json");
    let out = run(c);
    assert!(
        out.status.success(),
        "rhizome failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn import(index: &Path, dir: &Path) -> Value {
    let mut c = rz(index);
    c.args(["import", "graphrag-parquet"]).arg(dir);
    json(c)
}

fn stats(index: &Path) -> Value {
    let mut c = rz(index);
    c.arg("stats");
    json(c)
}

fn query(index: &Path, method: &str, q: &str) -> Value {
    let mut c = rz(index);
    c.args(["query", "--method", method, q]);
    json(c)
}

#[test]
fn operation_dulce_imports_once_and_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let first = import(&idx, &fixture());
    let read = &first["graphrag"]["read"];
    for (k, n) in [
        ("documents", 1),
        ("text_units", 5),
        ("entities", 39),
        ("relationships", 107),
        ("communities", 10),
        ("community_reports", 10),
        ("covariates", 41),
    ] {
        assert_eq!(read[k], n, "{k}: {first:#}");
    }
    let written = &first["graphrag"]["written"];
    assert_eq!(written["covariates_written"], 41, "{first:#}");
    assert_eq!(written["reports_written"], 10, "{first:#}");
    assert_eq!(first["report"]["documents_indexed"], 1);

    let s = stats(&idx);
    for (k, n) in
        [("Document", 1), ("Chunk", 5), ("Community", 10), ("CommunityReport", 10), ("Covariate", 41), ("Fact", 0)]
    {
        assert_eq!(s["nodes"][k], n, "{k}: {s:#}");
    }
    assert_eq!(s["edges"]["RELATED"], 107, "{s:#}");
    // GraphRAG's 39 entities, plus ELEVATOR and CONCRETE HALLWAY: relationship endpoints
    // entities.parquet lacks (kept, so that all 107 relationships are).
    assert_eq!(s["nodes"]["Entity"], 39 + 2, "{s:#}");
    assert_eq!(read["endpoint_entities_added"], 2);
    assert!(
        first["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("CONCRETE HALLWAY, ELEVATOR")),
        "{first:#}"
    );

    // Again: nothing is written twice, no count changes.
    let second = import(&idx, &fixture());
    assert_eq!(second["report"]["documents_unchanged"], 1, "{second:#}");
    assert_eq!(second["report"]["documents_indexed"], 0);
    let w = &second["graphrag"]["written"];
    assert_eq!((w["covariates_written"].as_u64(), w["covariates_present"].as_u64()), (Some(0), Some(41)), "{second:#}");
    assert_eq!((w["reports_written"].as_u64(), w["reports_unchanged"].as_u64()), (Some(0), Some(10)), "{second:#}");
    assert_eq!(stats(&idx), s);

    let r = query(&idx, "local", "Who leads Operation Dulce?");
    let contexts = r["contexts"].as_array().unwrap();
    assert!(!contexts.is_empty(), "{r:#}");
    let texts: Vec<&str> = contexts.iter().filter_map(|c| c["text"].as_str()).collect();
    assert!(texts.iter().any(|t| t.contains("OPERATION: DULCE")), "{texts:#?}");

    // The imported reports are the index's current ones: global search reads them as they are.
    let g = query(&idx, "global", "What are the main themes of the story?");
    let kinds: Vec<&str> = g["contexts"].as_array().unwrap().iter().filter_map(|c| c["kind"].as_str()).collect();
    assert!(!kinds.is_empty() && kinds.iter().all(|k| *k == "report"), "{g:#}");
    assert_eq!(stats(&idx), s, "a query recomputed nothing");
}

/// The folder's other tables, without entities.parquet.
fn partial_folder(dir: &Path) {
    for f in ["documents", "text_units", "relationships", "communities", "community_reports", "covariates"] {
        std::fs::copy(fixture().join(format!("{f}.parquet")), dir.join(format!("{f}.parquet"))).unwrap();
    }
}

/// The import of `dir` fails and its error says every one of `needles`; returns stderr.
fn fails_naming(index: &Path, dir: &Path, needles: &[&str]) -> String {
    let mut c = rz(index);
    c.args(["import", "graphrag-parquet"]).arg(dir);
    let out = run(c);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "should fail: {err}");
    for n in needles {
        assert!(err.contains(n), "error should say {n:?}: {err}");
    }
    err
}

#[test]
fn malformed_folders_are_refused_with_the_file_named() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let dir = tmp.path().join("graphrag");
    std::fs::create_dir(&dir).unwrap();
    partial_folder(&dir);
    fails_naming(&idx, &dir, &["entities.parquet", "no such file"]);

    std::fs::write(dir.join("entities.parquet"), "id,title,type\n1,ALEX MERCER,PERSON\n").unwrap();
    fails_naming(&idx, &dir, &["entities.parquet", "not a readable parquet file"]);

    std::fs::copy(fixture().join("relationships.parquet"), dir.join("entities.parquet")).unwrap();
    fails_naming(&idx, &dir, &["entities.parquet", "missing column `title` (or `name`)"]);

    fails_naming(&idx, &tmp.path().join("nowhere"), &["not a directory"]);
    assert!(!idx.join("rhizome.sqlite").exists(), "nothing written for a refused folder");
}

/// A damaged table on which the `parquet` crate panics (found by rhizome-fuzz: its saved
/// input is byte 0 = which table, then the table's bytes) is an error naming the file,
/// with nothing of a panic on stderr, and no index is made.
#[test]
fn a_table_the_parquet_reader_panics_on_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let dir = tmp.path().join("graphrag");
    std::fs::create_dir(&dir).unwrap();
    let saved = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rhizome-fuzz/regressions/import_graphrag_parquet/panic-dict-decoder-unset.bin");
    let input = std::fs::read(&saved).unwrap();
    let tables =
        ["documents", "text_units", "entities", "relationships", "communities", "community_reports", "covariates"];
    let damaged = tables[input[0] as usize % tables.len()];
    for t in tables {
        std::fs::copy(fixture().join(format!("{t}.parquet")), dir.join(format!("{t}.parquet"))).unwrap();
    }
    std::fs::write(dir.join(format!("{damaged}.parquet")), &input[1..]).unwrap();
    let err = fails_naming(&idx, &dir, &[&format!("{damaged}.parquet: not a readable parquet file (damaged")]);
    assert!(!err.contains("panicked"), "a guarded panic prints nothing of its own: {err}");
    assert!(!idx.join("rhizome.sqlite").exists(), "nothing written for a refused folder");
}
