//! Real chat clients against `rhizome serve`: the official `openai` and `ollama` Python
//! packages (pinned, in a venv made once under target/) run `tests/clients/*.py`, which
//! list the models, chat with and without streaming, and hold a two-turn conversation
//! whose follow-up ("And his son?", after a question about Niels Bohr) must come back about Aage Bohr.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::examples;
use support::server::{files_of, start};

const PINS: &[&str] = &["openai==3.54.0", "ollama==0.6.3"];

/// The venv with the pinned clients, made on first use.
fn venv() -> PathBuf {
    rhizome_testdb::python::venv("clients", PINS)
}

fn run_client(python: &Path, script: &str, base: &str, key: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients").join(script);
    let out = Command::new(python).arg(&path).arg(base).arg(key).output().unwrap();
    assert!(
        out.status.success(),
        "{script} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{script}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn openai_and_ollama_clients_get_cited_answers() {
    let python = venv();
    let dir = tempfile::tempdir().unwrap();
    let key = "client-key-0123456789";
    let mut s = start(&dir.path().join("index"), &["--api-key", key], &[]);
    s.key = Some(key.into());
    let job = s.upload(&files_of(&examples()));
    s.wait_job(job);
    for script in ["openai_chat.py", "ollama_chat.py"] {
        let got = run_client(&python, script, &s.base, key);
        eprintln!("{script}: {got}");
        assert!(got["follow_up"].as_str().unwrap().contains("His son Aage Bohr"));
    }
}
