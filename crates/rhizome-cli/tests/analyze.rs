//! `rhizome analyze` and `rhizome query --method auto`, running the binary: the three
//! reference questions without an index, follow-ups from a history file, clear errors on
//! bad input, the LLM path against the loopback OpenAI server, and auto routing on a real
//! index (the installed MiniLM model).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rhizome_llm_testing::{last_user_text, MockOpenAi};
use serde_json::Value;

const VI: &str = "Aage Bohr có những giải thưởng gì?";
const ZH: &str = "Sam Altman领导的公司在AI领域有什么重要投资？";

fn rz(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    c.current_dir(dir)
        .arg("--index")
        .arg(dir.join("idx"))
        .env_remove("RHIZOME_INDEX")
        .env_remove("RHIZOME_CONFIG")
        .env_remove("RHIZOME_LLM_PROVIDER");
    c
}

fn run(mut c: Command) -> Output {
    c.output().expect("run rhizome")
}

fn ok(c: Command) -> String {
    let out = run(c);
    assert!(
        out.status.success(),
        "rhizome failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn analyze_json(dir: &Path, q: &str, extra: &[&str]) -> Value {
    let mut c = rz(dir);
    c.args(extra).args(["--json", "analyze", q]);
    let out = ok(c);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn fails(c: Command) -> String {
    let out = run(c);
    assert!(!out.status.success(), "expected a failure: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn reference_questions_without_an_index() {
    let tmp = tempfile::tempdir().unwrap();
    let vi = analyze_json(tmp.path(), VI, &[]);
    assert_eq!(vi["language"], "vi");
    assert_eq!(vi["query_type"], "factual");
    assert_eq!(vi["complexity"], "simple");
    assert_eq!(vi["key_concepts"][0], "Aage Bohr");
    assert_eq!(vi["multi_hop"], false);
    assert_eq!(vi["source"], "rules");
    for key in [
        "language",
        "query_type",
        "complexity",
        "complexity_score",
        "key_concepts",
        "requires_reasoning",
        "multiple_sources",
        "multi_hop",
        "standalone_question",
        "is_follow_up",
        "source",
        "notes",
    ] {
        assert!(vi.get(key).is_some(), "{key} in {vi}");
    }

    let zh = analyze_json(tmp.path(), ZH, &[]);
    assert_eq!(zh["language"], "zh");
    assert_eq!(zh["multi_hop"], true);
    assert_eq!(zh["key_concepts"][0], "Sam Altman");

    let en = analyze_json(tmp.path(), "Why did Microsoft invest in OpenAI?", &[]);
    assert_eq!(en["language"], "en");
    assert_eq!(en["query_type"], "analytical");
    assert_eq!(en["requires_reasoning"], true);

    // The readable summary.
    let mut c = rz(tmp.path());
    c.args(["analyze", ZH]);
    let text = ok(c);
    for line in [
        "Language:         zh",
        "Multi-hop:        yes",
        "--method auto:    hippo if the index has facts, else multihop",
        "Key concepts:     Sam Altman, AI",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
    assert!(!tmp.path().join("idx").exists(), "analysing creates no index");
    assert!(!tmp.path().join(".rhizome").exists());
}

#[test]
fn follow_up_from_a_history_file() {
    let tmp = tempfile::tempdir().unwrap();
    let h = tmp.path().join("chat.json");
    std::fs::write(
        &h,
        r#"[{"role": "user", "content": "Who is Aage Bohr?"},
            {"role": "assistant", "content": "Aage Bohr was a Danish physicist, the son of Niels Bohr."}]"#,
    )
    .unwrap();
    let a = analyze_json(tmp.path(), "What about his brother?", &[]);
    assert_eq!(a["is_follow_up"], false, "no history given: {a}");
    let mut c = rz(tmp.path());
    c.args(["--json", "analyze", "--history"]).arg(&h).arg("What about his brother?");
    let a: Value = serde_json::from_str(&ok(c)).unwrap();
    assert_eq!(a["is_follow_up"], true);
    assert_eq!(a["standalone_question"], "What about Aage Bohr's brother?");
    assert_eq!(a["question"], "What about his brother?");

    let mut c = rz(tmp.path());
    c.args(["analyze", "--history"]).arg(&h).arg("What about his brother?");
    let text = ok(c);
    assert!(text.contains("Follow-up:        yes -> What about Aage Bohr's brother?"), "{text}");
}

#[test]
fn bad_input_is_named_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = rz(tmp.path());
    c.args(["analyze", "  "]);
    let e = fails(c);
    assert!(e.contains("question is empty") && e.contains("rhizome analyze \""), "{e}");

    let missing = tmp.path().join("nope.json");
    let mut c = rz(tmp.path());
    c.args(["analyze", "--history"]).arg(&missing).arg("Why?");
    let e = fails(c);
    assert!(e.contains("--history") && e.contains("nope.json") && e.contains("\"role\""), "{e}");

    for (body, says) in [("{oops", "not valid JSON"), (r#"[{"role": "robot", "content": "x"}]"#, "robot")] {
        let bad = tmp.path().join("bad.json");
        std::fs::write(&bad, body).unwrap();
        let mut c = rz(tmp.path());
        c.args(["analyze", "--history"]).arg(&bad).arg("Why?");
        let e = fails(c);
        assert!(e.contains("bad.json") && e.contains(says) && e.contains("[{\"role\""), "{e}");
    }
}

#[test]
fn llm_assisted_analysis() {
    let server = MockOpenAi::with_responder(Box::new(|req: &Value| {
        if last_user_text(req).contains("New question:") {
            r#"{"is_follow_up": true, "standalone_question": "Who is Aage Bohr's brother?"}"#.into()
        } else {
            r#"{"language": "en", "query_type": "factual", "complexity": "simple", "complexity_score": 0.2,
                "key_concepts": ["Aage Bohr", "brother"], "requires_reasoning": false,
                "multiple_sources": false, "multi_hop": true}"#
                .into()
        }
    }))
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let h = tmp.path().join("chat.json");
    std::fs::write(
        &h,
        r#"[{"role": "user", "content": "Who is Aage Bohr?"}, {"role": "assistant", "content": "A physicist."}]"#,
    )
    .unwrap();
    let mut c = rz(tmp.path());
    c.args(["--llm-provider", "openai", "--llm-model", "mock", "--llm-base-url"])
        .arg(server.base_url())
        .args(["--set", "llm.retry_base_ms=10", "--json", "analyze", "--history"])
        .arg(&h)
        .arg("What about his brother?");
    let a: Value = serde_json::from_str(&ok(c)).unwrap();
    assert_eq!(a["source"], "llm");
    assert_eq!(a["standalone_question"], "Who is Aage Bohr's brother?");
    assert_eq!(a["multi_hop"], true, "the LLM's value");
    assert_eq!(a["key_concepts"], serde_json::json!(["Aage Bohr", "brother"]));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(last_user_text(&reqs[0]).contains("user: Who is Aage Bohr?\nassistant: A physicist."));
    assert!(last_user_text(&reqs[0]).contains("New question: What about his brother?"));
    assert!(last_user_text(&reqs[1]).contains("Question: Who is Aage Bohr's brother?"));
    assert!(!tmp.path().join("idx").exists(), "no index, no cache written");
}

fn shared() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    assert!(p.join("README.md").exists(), "shared data missing at {}", p.display());
    p.canonicalize().unwrap()
}

#[test]
fn query_method_auto_routes_and_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = rz(tmp.path());
    c.arg("index").arg(shared().join("zh_openai"));
    ok(c);

    let query = |q: &str| -> Value {
        let mut c = rz(tmp.path());
        c.args(["--json", "query", "--method", "auto", q]);
        serde_json::from_str(&ok(c)).unwrap()
    };
    let methods = ["basic", "local", "hippo", "multihop", "multipath"];

    let r = query(ZH);
    assert_eq!(r["method"], "auto");
    assert_eq!(r["extra"]["analysis"]["multi_hop"], true, "{r:#}");
    let routed = r["extra"]["routed_to"].as_str().unwrap();
    assert!(methods.contains(&routed), "{routed}");
    assert!(r["notes"][0].as_str().unwrap().starts_with("auto: routed to "), "{r:#}");
    assert!(!r["contexts"].as_array().unwrap().is_empty(), "{r:#}");

    let r = query("微软投资了哪家公司？");
    assert_eq!(r["extra"]["routed_to"], "basic", "{r:#}");
    assert!(r["contexts"][0]["source"].as_str().unwrap().ends_with(".txt"));

    // `query --history`: the follow-up is asked as a self-contained question.
    let h = tmp.path().join("chat.json");
    std::fs::write(
        &h,
        serde_json::json!([{"role": "user", "content": ZH}, {"role": "assistant", "content": "微软投资了OpenAI。"}])
            .to_string(),
    )
    .unwrap();
    let mut c = rz(tmp.path());
    c.args(["--json", "query", "--history"]).arg(&h).arg("他的公司总部在哪里？");
    let out = run(c);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["question"], "Sam Altman的公司总部在哪里？");
    assert!(String::from_utf8_lossy(&out.stderr).contains("follow-up, asked as: Sam Altman的公司总部在哪里？"));
    assert!(r["contexts"].as_array().unwrap().iter().any(|c| c["text"].as_str().unwrap().contains("旧金山")), "{r:#}");
}
