//! The web UI in a real headless Chromium (Debian's `chromium`, driven by playwright-core
//! from `web/tests/ui.mjs`) against a real `rhizome serve` on 127.0.0.1, per language:
//! upload through the page, ask, open a citation, explore the graph (nodes counted as
//! sigma drew them and pixels counted on the canvas), read a community report, delete.
//! Also the explorer with 2,000 nodes of the MuSiQue OpenIE import: time to first render
//! and frames per second while dragging, printed. Screenshots are kept under
//! `target/tmp/ui/<scenario>/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

mod support;

use support::server::{start, start_with_responder, Server};

/// One browser at a time: they share two cores with the server they test.
static BROWSER: Mutex<()> = Mutex::new(());

fn web() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web").canonicalize().unwrap()
}

fn browser_page(scenario: &str, s: &Server, key: &str, extra: &[&str]) -> Value {
    let chromium = std::env::var("RHIZOME_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "no Chromium at {chromium}: scripts/install-test-deps installs Debian's chromium (or set RHIZOME_CHROMIUM)"
    );
    assert!(
        web().join("node_modules/playwright-core").exists(),
        "web/node_modules is missing: building rhizome-server runs npm ci in web/"
    );
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui").join(scenario);
    let _ = std::fs::remove_dir_all(&out_dir);
    let _one = BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let out = Command::new("node")
        .current_dir(web())
        .arg("tests/ui.mjs")
        .arg(scenario)
        .arg(&s.base)
        .arg(&out_dir)
        .arg(key)
        .args(extra)
        .env("RHIZOME_SHARED_DATA", support::shared())
        .env("RHIZOME_CHROMIUM", &chromium)
        .output()
        .expect("run node (Node.js 20 is needed for the browser tests)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "browser test {scenario} failed (screenshots in {}):\n{stdout}\n{}",
        out_dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().unwrap_or_default();
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    eprintln!("ui {scenario}: {v:#}");
    for shot in v["screenshots"].as_array().unwrap() {
        let p = Path::new(shot.as_str().unwrap());
        assert!(std::fs::metadata(p).map(|m| m.len() > 10_000).unwrap_or(false), "screenshot {} written", p.display());
    }
    v
}

#[test]
fn english_documents_with_an_api_key() {
    let dir = tempfile::tempdir().unwrap();
    let key = "ui-key-0123456789";
    let s = start(&dir.path().join("index"), &["--api-key", key], &[]);
    let v = browser_page("en", &s, key, &[]);
    // The picker offers what the loader registry lists, as the server hands it over.
    let registry = rhizome_ingest::load::FORMATS;
    let dotted: Vec<String> = registry.iter().flat_map(|f| f.extensions).map(|e| format!(".{e}")).collect();
    assert_eq!(v["accept"], dotted.join(","), "{v:#}");
    let documents = rhizome_ingest::load::extension_list(rhizome_ingest::load::document_formats());
    assert_eq!(v["formats_label"], documents, "{v:#}");
    assert_eq!(v["citation"]["title"], "[1] copenhagen-physics", "{v:#}");
    assert!(v["explorer"]["rendered"].as_u64().unwrap() >= 5, "{v:#}");
}

#[test]
fn a_pdf_and_a_word_document_cited_and_opened_at_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    support::document_fixtures(&docs);
    let s = start(&dir.path().join("index"), &[], &[]);
    let v = browser_page("pdf", &s, "", &[docs.to_str().unwrap()]);
    assert!(v["cited_source"].as_str().unwrap().contains("report_en.pdf, p. 2"), "{v:#}");
    assert!(v["opened_at"].as_str().unwrap().ends_with("p. 2"), "{v:#}");
    assert!(v["word_citation"].as_str().unwrap().contains("notes.docx"), "{v:#}");
    let filtered = v["filtered_sources"].as_str().unwrap();
    assert!(filtered.contains("notes.docx") && !filtered.contains(".pdf"), "{v:#}");
    // Described: a type and tags in the list, a summary and what the file says in its view.
    let types = ["report", "contract", "article", "manual", "paper", "email", "slides", "spreadsheet", "book", "other"];
    assert!(types.contains(&v["listed_type"].as_str().unwrap()), "{v:#}");
    assert!(v["listed_tags"].as_str().unwrap().contains("Halvorsen Bridge"), "{v:#}");
    let about = v["about"].as_str().unwrap();
    for want in ["Halvorsen Bridge", "Type", "Author", "Rhizome tests", "Pages", "application/pdf"] {
        assert!(about.contains(want), "{want}: {about}");
    }
}

#[test]
fn chinese_documents() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("index"), &[], &[]);
    let v = browser_page("zh", &s, "", &[]);
    assert!(v["citation"]["title"].as_str().unwrap().contains("microsoft_investment"), "{v:#}");
}

#[test]
fn vietnamese_edge_list() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("index"), &[], &[]);
    let v = browser_page("vi", &s, "", &[]);
    let awards = v["drawn_edges"].as_array().unwrap().iter().filter(|l| *l == "đoạt giải").count();
    assert!(awards >= 2, "{v:#}");
}

#[test]
fn llm_answers_stream_into_the_page() {
    const ANSWER: &str = "Ben Mottelson and James Rainwater shared it with him [1].";
    let dir = tempfile::tempdir().unwrap();
    // The LLM extracts (entities and claims) and answers.
    let (_llm, s) = start_with_responder(
        &dir.path().join("index"),
        &["--set", "extract.extractor=llm", "--set", "extract.claims=true"],
        Box::new(|req: &Value| {
            let text = rhizome_llm_testing::last_user_text(req);
            if text.contains("list its claims about these entities") {
                let claim = if text.contains("Bohr founded") {
                    serde_json::json!({"subject": "Niels", "object": "Copenhagen", "type": "FOUNDING", "status": "TRUE",
                        "start_date": "1921", "description": "Niels Bohr founded the institute in Copenhagen in 1921."})
                } else {
                    serde_json::json!({})
                };
                return serde_json::json!({"claims": [claim]}).to_string();
            }
            match text.rsplit_once("Text:") {
                Some((_, doc)) if text.contains("extract three lists") => rhizome_llm_testing::extraction_reply(doc),
                _ => ANSWER.to_string(),
            }
        }),
    );
    let v = browser_page("llm", &s, "", &[]);
    assert_eq!(v["answer"], ANSWER, "{v:#}");
    assert!(v["claims"].as_str().unwrap().contains("Niels Bohr founded the institute"), "{v:#}");
}

/// Figures, not a timed test: printed for docs/benchmarks.md.
#[test]
fn explorer_with_2000_nodes() {
    let idx = support::fixture::musique_openie();
    let s = start(&idx, &[], &[]);
    let v = browser_page("bench", &s, "", &["United States", "2000"]);
    let b = &v["bench"];
    let line = format!(
        "explorer, 2,000 nodes of the MuSiQue OpenIE import: {} nodes and {} edges drawn; fetch {} ms, \
              first render {} ms after the click; dragging the view: {} frames/s ({} renders/s) with the layout \
              stopped, {} frames/s ({} renders/s) with the layout running",
        b["rendered"],
        b["edges"],
        b["fetch_ms"],
        b["first_render_ms"],
        b["drag_layout_stopped"]["raf_fps"],
        b["drag_layout_stopped"]["render_fps"],
        b["drag_layout_running"]["raf_fps"],
        b["drag_layout_running"]["render_fps"]
    );
    println!("{line}");
    // Kept beside the screenshots; scripts/test prints it after the suite.
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui/bench/figures.txt");
    std::fs::write(&out, format!("{line}\n{v:#}\n")).unwrap();
    assert!(b["rendered"].as_u64().unwrap() >= 2000, "{v:#}");
}
