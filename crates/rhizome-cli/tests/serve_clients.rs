//! Real clients against Rhizome, each the official Python package (pinned, in a venv made
//! once under target/) running a script of `tests/clients/`:
//! - `openai` and `ollama` against `rhizome serve`: they list the models, chat with and
//!   without streaming, and hold a two-turn conversation whose follow-up ("And his son?",
//!   after a question about Niels Bohr) must come back about Aage Bohr;
//! - `mcp` (the MCP SDK) against `rhizome mcp` over stdio and `/mcp` over streamable
//!   HTTP: it lists the tools, answers the Vietnamese and Chinese seed questions with
//!   citations, adds a text and a file and finds them, deletes, and is refused the write
//!   tools with a read-only key.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::server::{files_of, start};
use support::{examples, ok, rz};

/// The venv with the pinned clients (rhizome-testdb's `venvs/clients.txt`), made on first use.
fn venv() -> PathBuf {
    rhizome_testdb::python::named("clients")
}

fn run_client(python: &Path, script: &str, base: &str, key: &str) -> serde_json::Value {
    run_script(python, script, &[base, key])
}

fn run_script(python: &Path, script: &str, args: &[&str]) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients").join(script);
    let out = Command::new(python).arg(&path).args(args).output().unwrap();
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

/// The index's own model, whatever the command line of the test helpers sets.
const OWN_MODEL: [&str; 2] = ["--set", "embed.model=auto"];

/// The Vietnamese edge list and the Chinese documents in one index, with the default
/// (multilingual) model: the questions are in both languages.
fn vi_zh_index(index: &Path) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    let mut c = rz(index);
    c.args(OWN_MODEL).arg("index").arg(data.join("zh_openai"));
    ok(c);
    let mut c = rz(index);
    c.args(OWN_MODEL).args(["import", "edges-csv"]).arg(data.join("vi_bohr/edges.csv"));
    ok(c);
}

/// The progress notifications `add_text` sent: some, growing, each within its total and
/// saying what runs.
fn check_progress(v: &serde_json::Value) {
    let notes = v["add_progress"].as_array().unwrap();
    assert!(!notes.is_empty(), "no progress notification: {v:#}");
    let done: Vec<f64> = notes.iter().map(|n| n["progress"].as_f64().unwrap()).collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "progress went back: {notes:?}");
    for n in notes {
        assert!(n["total"].as_f64().unwrap() >= n["progress"].as_f64().unwrap(), "{n}");
        assert!(n["message"].as_str().unwrap().contains(" of "), "{n}");
    }
}

fn text(v: &serde_json::Value, step: &str) -> String {
    assert_eq!(v[step]["error"], false, "{step} failed: {v:#}");
    v[step]["text"].as_str().unwrap().to_string()
}

/// What both transports must show with a key that writes.
fn check_mcp_session(v: &serde_json::Value) {
    assert_eq!(v["server"], "rhizome", "{v:#}");
    let tools: Vec<&str> = v["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    for t in rhizome_mcp::tools::TOOLS {
        assert!(tools.contains(&t.name), "{} listed: {tools:?}", t.name);
    }
    let vi = text(v, "answer_vi");
    assert!(vi.contains("Giải") && vi.contains("Sources:\n[1]"), "{vi}");
    let zh = text(v, "answer_zh");
    assert!(zh.contains("Sources:\n[1]") && zh.contains("microsoft_investment"), "{zh}");
    assert!(text(v, "search_zh").contains("[1] "), "{v:#}");
    let graph = text(v, "graph_vi");
    assert!(graph.contains("(local)") && graph.contains("Aage Bohr"), "{graph}");
    assert_eq!(v["wrong_family"]["error"], true, "{v:#}");
    assert!(v["wrong_family"]["text"].as_str().unwrap().contains("search_themes"), "{v:#}");
    let entity = text(v, "entity");
    assert!(entity.starts_with("Aage Bohr") && entity.contains("Relations"), "{entity}");
    assert!(text(v, "documents").contains("microsoft_investment"), "{v:#}");
    assert!(text(v, "status").contains("hippo: "), "{v:#}");
    assert_eq!(v["bad_filter"]["error"], true, "{v:#}");
    assert!(v["bad_filter"]["text"].as_str().unwrap().contains("colour"), "{v:#}");
    assert!(text(v, "filter_line").contains("[1] "), "{v:#}");
    let resources = v["resources"].as_array().unwrap();
    assert!(resources.iter().any(|r| r.as_str().unwrap().starts_with("rhizome://documents/doc_")), "{v:#}");
    assert!(!v["resource_text"].as_str().unwrap().is_empty());
    assert!(text(v, "add_text").contains("Indexed 1 new document"), "{v:#}");
    check_progress(v);
    if let Some(report) = v.get("report_text") {
        assert!(report.as_str().unwrap().starts_with("# "), "{v:#}");
    }
    assert!(text(v, "found_added").contains("upload:ferry timetable"), "{v:#}");
    assert!(text(v, "add_file").contains("Indexed"), "{v:#}");
    assert_eq!(v["bad_file"]["error"], true, "{v:#}");
    assert!(v["bad_file"]["text"].as_str().unwrap().contains(".exe"), "{v:#}");
    assert!(text(v, "delete").contains("Deleted 1 document"), "{v:#}");
    assert!(!text(v, "after_delete").contains("upload:ferry timetable"), "{v:#}");
}

#[test]
fn mcp_clients_over_stdio_and_http() {
    let python = rhizome_testdb::python::named("mcp");
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    vi_zh_index(&index);
    let bin = env!("CARGO_BIN_EXE_rhizome");
    let over_stdio = run_script(&python, "mcp_client.py", &["stdio", bin, index.to_str().unwrap()]);
    eprintln!("mcp over stdio: {over_stdio:#}");
    check_mcp_session(&over_stdio);
    let described = over_stdio["descriptions"]["search_graph"].as_str().unwrap();
    assert!(described.contains("knowledge graph"), "{described}");
    // An index not created yet: its status says how to begin, and nothing is created.
    let new = dir.path().join("not-yet");
    let fresh = run_script(&python, "mcp_client.py", &["stdio-new", bin, new.to_str().unwrap()]);
    assert!(text(&fresh, "status").contains("nothing is indexed yet"), "{fresh:#}");
    assert!(!new.exists(), "a status read created {}", new.display());

    let (key, ro) = ("mcp-key-0123456789", "mcp-read-0123456789");
    let s = start(&index, &[OWN_MODEL[0], OWN_MODEL[1], "--api-key", key, "--api-key", &format!("{ro}:ro")], &[]);
    let url = s.url("/mcp");
    let over_http = run_script(&python, "mcp_client.py", &["http", &url, key]);
    check_mcp_session(&over_http);
    let read_only = run_script(&python, "mcp_client.py", &["http-ro", &url, ro]);
    let tools: Vec<&str> = read_only["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert!(
        tools.contains(&"answer") && !tools.contains(&"add_text") && !tools.contains(&"delete_document"),
        "{tools:?}"
    );
    assert_eq!(read_only["add_refused"]["error"], true, "{read_only:#}");
    assert!(read_only["add_refused"]["text"].as_str().unwrap().contains("read-only"), "{read_only:#}");
    assert!(text(&read_only, "answer_vi").contains("Giải"), "{read_only:#}");
    // Without a key: refused before MCP is spoken.
    let r = reqwest::blocking::Client::new().post(&url).body("{}").send().unwrap();
    assert_eq!(r.status().as_u16(), 401);
}
