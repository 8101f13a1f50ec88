//! End-to-end tests of settings validation: a value out of range is refused before
//! anything is written, with a message naming the key, the value, where it came from and
//! the valid range; an unknown `RHIZOME_*` variable is a warning. No model is needed:
//! every refusal happens while the configuration loads.

use std::path::Path;
use std::process::{Command, Output};

/// `rhizome --index INDEX` run in `dir` (so no ./rhizome.toml of the caller is read),
/// without any `RHIZOME_*` variable of the caller.
fn rz(dir: &Path, index: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    c.current_dir(dir).arg("--index").arg(index);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("RHIZOME_") {
            c.env_remove(k);
        }
    }
    c
}

fn refused(mut c: Command) -> String {
    let out: Output = c.output().expect("run rhizome");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "accepted; stdout: {}\nstderr: {err}", String::from_utf8_lossy(&out.stdout));
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn docs(dir: &Path) -> std::path::PathBuf {
    let d = dir.join("docs");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("a.txt"), "Marie Curie worked in Paris. She won two Nobel prizes.\n").unwrap();
    d
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

#[test]
fn index_with_a_zero_chunk_size_is_refused_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = docs(tmp.path());
    let idx = tmp.path().join("idx");
    let mut c = rz(tmp.path(), &idx);
    c.args(["--set", "chunk.size=0", "index"]).arg(&docs);
    let err = refused(c);
    assert!(err.contains("chunk.size = 0 (from --set chunk.size=0): must be an integer from 16 to 8192"), "{err}");
    assert!(!idx.exists(), "the index directory was created");

    // An existing (empty) index directory stays untouched.
    std::fs::create_dir_all(&idx).unwrap();
    let mut c = rz(tmp.path(), &idx);
    c.args(["--set", "chunk.overlap=300", "index"]).arg(&docs);
    let err = refused(c);
    assert!(
        err.contains("chunk.overlap = 300 (from --set chunk.overlap=300)")
            && err.contains("chunk.size = 256 (default)")
            && err.contains("chunk.overlap must be less than chunk.size"),
        "{err}"
    );
    assert_eq!(entries(&idx), 0, "something was written into the index directory");
}

#[test]
fn nan_threshold_from_the_environment_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = docs(tmp.path());
    let idx = tmp.path().join("idx");
    let mut c = rz(tmp.path(), &idx);
    c.env("RHIZOME_SYNONYMY_THRESHOLD", "NaN").arg("index").arg(&docs);
    let err = refused(c);
    assert!(
        err.contains(
            "synonymy.threshold = NaN (from environment variable RHIZOME_SYNONYMY_THRESHOLD): \
        must be a number from 0 to 1"
        ),
        "{err}"
    );
    assert!(!idx.exists(), "the index directory was created");
}

#[test]
fn query_with_top_k_zero_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(tmp.path(), &idx);
    c.args(["--set", "retrieval.top_k=0", "query", "Who won two Nobel prizes?"]);
    let err = refused(c);
    assert!(
        err.contains("retrieval.top_k = 0 (from --set retrieval.top_k=0): must be an integer from 1 to 1000"),
        "{err}"
    );
    // The flag goes through the same check, and names itself.
    let mut c = rz(tmp.path(), &idx);
    c.args(["query", "--top-k", "0", "Who won two Nobel prizes?"]);
    let err = refused(c);
    assert!(err.contains("retrieval.top_k = 0 (from --top-k 0): must be an integer from 1 to 1000"), "{err}");
    let mut c = rz(tmp.path(), &idx);
    c.args(["--set", "retrieval.fusion=nosuch", "query", "x"]);
    let err = refused(c);
    assert!(
        err.contains("retrieval.fusion = \"nosuch\" (from --set retrieval.fusion=nosuch): must be one of: score, rrf"),
        "{err}"
    );
    assert!(!idx.exists());
}

#[test]
fn a_bad_value_in_the_config_file_names_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("rhizome.toml"), "[chunk]\nsize = 8\n\n[hippo]\ndamping = 5\n").unwrap();
    let mut c = rz(tmp.path(), &tmp.path().join("idx"));
    c.arg("config");
    let err = refused(c);
    assert!(err.contains("chunk.size = 8 (from rhizome.toml:2): must be an integer from 16 to 8192"), "{err}");
    assert!(
        err.contains("hippo.damping = 5 (from rhizome.toml:5): must be a number greater than 0 and less than 1"),
        "{err}"
    );
}

#[test]
fn unknown_rhizome_variables_warn_and_config_still_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = rz(tmp.path(), &tmp.path().join("idx"));
    c.env("RHIZOME_NOSUCH_KEY", "1")
        .env("RHIZOME_CHUNK_SIZ", "64")
        .env("RHIZOME_MODELS_DIR", tmp.path().join("models"))
        .env("RHIZOME_LLAMA_THREADS", "1")
        .args(["--set", "chunk.size=64", "config"]);
    let out = c.output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("[chunk]") && stdout.contains("size = 64"), "{stdout}");
    assert!(stderr.contains("warning: RHIZOME_NOSUCH_KEY is not a Rhizome setting and is ignored"), "{stderr}");
    assert!(
        stderr.contains(
            "warning: RHIZOME_CHUNK_SIZ is not a Rhizome setting and is ignored; \
        did you mean RHIZOME_CHUNK_SIZE (chunk.size)?"
        ),
        "{stderr}"
    );
    assert_eq!(stderr.matches("warning:").count(), 2, "known variables are not warned about: {stderr}");
}
