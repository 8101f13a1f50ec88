//! What `rhizome serve` tells its operators, checked with the real parsers: one server
//! (a loopback LLM, JSON logs, traces to an OTLP receiver started here) answers an upload,
//! queries of two methods and a chat; then
//! - `GET /metrics` is parsed by the Prometheus Python client and the counts have moved;
//! - the receiver (a Python HTTP server parsing each POST with the official
//!   opentelemetry-proto messages) got the query's trace: the request span, parented by
//!   the `traceparent` the client sent, and below it the query, retrieval stages, the
//!   embedding call, store reads and the LLM call, all of one trace id;
//! - every stderr line is a JSON object, and the query's lines carry the `X-Request-Id` sent.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::fixture::examples_copy;
use crate::support::server::{expect, expect_error, ok_json, serve_cmd, start_cmd};
use serde_json::{json, Value};

const KEY: &str = "metrics-key-0123456789";
const REQUEST_ID: &str = "obs-test-request-42";
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";
const QUESTION: &str = "Who shared the Nobel Prize with Aage Bohr?";

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients").join(name)
}

/// The OTLP receiver, killed by its PID when dropped.
struct Receiver {
    child: Child,
    port: u16,
    spans: PathBuf,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn receiver(python: &Path, dir: &Path) -> Receiver {
    let spans = dir.join("spans.jsonl");
    let mut child = Command::new(python)
        .arg(script("otlp_receiver.py"))
        .arg(&spans)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the OTLP receiver");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = line.trim().parse().unwrap_or_else(|_| panic!("the receiver printed {line:?}, not its port"));
    Receiver { child, port, spans }
}

/// The spans the receiver has written so far.
fn spans(r: &Receiver) -> Vec<Value> {
    let text = std::fs::read_to_string(&r.spans).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The metrics text parsed by `prometheus_client.parser`.
fn parse_metrics(python: &Path, text: &str) -> Value {
    let mut child = Command::new(python)
        .arg(script("metrics_parse.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the Prometheus parser refused the scrape: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The value of the sample `name` of `family` whose labels include `labels` (0 when none).
fn sample(m: &Value, family: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    let Some(samples) = m[family]["samples"].as_array() else { panic!("no family {family} in {m}") };
    samples
        .iter()
        .filter(|s| s["name"] == name && labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .map(|s| s["value"].as_f64().unwrap())
        .sum()
}

#[test]
fn metrics_traces_and_json_logs() {
    let python = rhizome_testdb::python::named("observability");
    let dir = tempfile::tempdir().unwrap();
    let otlp = receiver(&python, dir.path());
    let index = examples_copy(dir.path());
    let llm = rhizome_llm_testing::MockOpenAi::with_responder(Box::new(|_: &Value| {
        "Ben Mottelson and James Rainwater shared it with him [1].".to_string()
    }))
    .unwrap();
    let (llm_url, endpoint) = (llm.base_url(), format!("http://127.0.0.1:{}", otlp.port));
    let args = [
        "--llm-provider",
        "openai",
        "--llm-model",
        "mock-model",
        "--llm-base-url",
        &llm_url,
        "--api-key",
        KEY,
        "--log-format",
        "json",
        "--otlp-endpoint",
        &endpoint,
    ];
    let log = dir.path().join("serve.log");
    let mut c = serve_cmd(&index, &args, &[("RHIZOME_LLM_API_KEY", "sk-loopback"), ("RHIZOME_LOG", "info")]);
    c.stderr(std::fs::File::create(&log).unwrap());
    let mut s = start_cmd(c);
    s.key = Some(KEY.into());

    let job = s.upload(&[("notes.md".into(), b"# Notes\n\nAage Bohr worked in Copenhagen.\n".to_vec())]);
    s.wait_job(job);
    let query = s
        .http
        .post(s.url("/query"))
        .bearer_auth(KEY)
        .header("X-Request-Id", REQUEST_ID)
        .header("traceparent", format!("00-{TRACE_ID}-{PARENT_SPAN}-01"))
        .json(&json!({"question": QUESTION, "method": "basic"}))
        .send()
        .unwrap();
    assert_eq!(query.headers()["x-request-id"], REQUEST_ID);
    assert_eq!(ok_json(query)["answer_kind"], "llm");
    let hippo = s.post_json("/query", &json!({"question": QUESTION, "method": "hippo"}));
    let generated = hippo.headers()["x-request-id"].to_str().unwrap().to_string();
    assert!(!generated.is_empty() && generated != REQUEST_ID, "{generated}");
    ok_json(hippo);
    let chat = json!({"model": "rhizome-basic", "messages": [{"role": "user", "content": QUESTION}]});
    expect(s.post_json("/v1/chat/completions", &chat), 200);
    let insane = s.http.get(s.url("/health")).header("X-Request-Id", "two words").send().unwrap();
    assert_ne!(insane.headers()["x-request-id"], "two words");

    // (a) Metrics: a key is needed, and the official parser reads every family.
    expect_error(s.http.get(s.url("/metrics")).send().unwrap(), 401);
    let scrape = s.get("/metrics");
    assert_eq!(scrape.status().as_u16(), 200);
    assert_eq!(scrape.headers()["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    let m = parse_metrics(&python, &scrape.text().unwrap());
    let requests = "rhizome_http_requests_total";
    assert!(
        sample(&m, "rhizome_http_requests", requests, &[("route", "/query"), ("method", "POST"), ("status", "200")])
            >= 2.0
    );
    assert!(sample(&m, "rhizome_http_requests", requests, &[("route", "/documents"), ("status", "202")]) >= 1.0);
    assert!(
        sample(&m, "rhizome_http_requests", requests, &[("route", "/v1/chat/completions"), ("status", "200")]) >= 1.0
    );
    assert!(sample(&m, "rhizome_http_requests", requests, &[("route", "/jobs/{id}"), ("method", "GET")]) >= 1.0);
    let routes: BTreeSet<&str> = m["rhizome_http_requests"]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["labels"]["route"].as_str().unwrap())
        .collect();
    assert!(!routes.iter().any(|r| r.starts_with("/jobs/") && r.chars().any(|c| c.is_ascii_digit())), "{routes:?}");
    assert_eq!(m["rhizome_http_request_duration_seconds"]["type"], "histogram");
    assert!(
        sample(
            &m,
            "rhizome_http_request_duration_seconds",
            "rhizome_http_request_duration_seconds_count",
            &[("route", "/query")]
        ) >= 2.0
    );
    let q = "rhizome_query_duration_seconds";
    assert!(sample(&m, q, &format!("{q}_count"), &[("method", "basic")]) >= 2.0, "a query and a chat");
    assert!(sample(&m, q, &format!("{q}_count"), &[("method", "hippo")]) >= 1.0);
    assert!(
        sample(&m, "rhizome_write_jobs", "rhizome_write_jobs_total", &[("kind", "index"), ("state", "done")]) >= 1.0
    );
    assert_eq!(m["rhizome_write_queue_depth"]["type"], "gauge");
    assert!(sample(&m, "rhizome_index_documents", "rhizome_index_documents", &[]) >= 4.0);
    for family in ["rhizome_index_chunks", "rhizome_index_entities", "rhizome_index_relations"] {
        assert!(sample(&m, family, family, &[]) > 0.0, "{family}");
    }
    assert!(sample(&m, "rhizome_embedder_calls", "rhizome_embedder_calls_total", &[]) >= 3.0);
    assert!(sample(&m, "rhizome_embedded_texts", "rhizome_embedded_texts_total", &[]) >= 3.0);
    assert!(
        sample(&m, "rhizome_llm_calls", "rhizome_llm_calls_total", &[("stage", "answer")]) >= 1.0,
        "{}",
        m["rhizome_llm_calls"]
    );
    assert!(sample(&m, "rhizome_llm_tokens", "rhizome_llm_tokens_total", &[("kind", "prompt")]) > 0.0);
    assert!(sample(&m, "rhizome_llm_tokens", "rhizome_llm_tokens_total", &[("kind", "completion")]) > 0.0);
    assert_eq!(sample(&m, "rhizome_llm_errors", "rhizome_llm_errors_total", &[]), 0.0);

    // (b) The trace of the first query, parented by the client's traceparent.
    let t = Instant::now();
    let trace: Vec<Value> = loop {
        let all = spans(&otlp);
        let trace: Vec<Value> = all.into_iter().filter(|s| s["trace_id"] == TRACE_ID).collect();
        let names: BTreeSet<&str> = trace.iter().map(|s| s["name"].as_str().unwrap()).collect();
        if ["POST /query", "query", "llm"].iter().all(|n| names.contains(n)) {
            break trace;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no whole trace within 20 s: {names:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let by_id: BTreeMap<&str, &Value> = trace.iter().map(|s| (s["span_id"].as_str().unwrap(), s)).collect();
    let root = trace.iter().find(|s| s["name"] == "POST /query").unwrap();
    assert_eq!(root["parent_span_id"], PARENT_SPAN, "{root}");
    assert_eq!(root["kind"], 2, "a server span");
    assert_eq!(root["service"], "rhizome");
    assert_eq!(root["attributes"]["id"], REQUEST_ID);
    assert_eq!(root["attributes"]["route"], "/query");
    assert_eq!(root["attributes"]["status"], 200);
    let names: BTreeSet<&str> = trace.iter().map(|s| s["name"].as_str().unwrap()).collect();
    for want in [
        "query",
        "retrieve",
        "dense",
        "bm25",
        "embed",
        "store.reader",
        "store.vector_search",
        "store.bm25",
        "store.chunks",
        "answer",
        "llm",
    ] {
        assert!(names.contains(want), "no {want} span in the trace: {names:?}");
    }
    // Every span hangs below the request span.
    for s in &trace {
        let mut at: &Value = s;
        while at["span_id"] != root["span_id"] {
            let parent = at["parent_span_id"].as_str().unwrap();
            at = *by_id.get(parent).unwrap_or_else(|| panic!("{} has a parent outside the trace: {s}", s["name"]));
        }
    }
    let llm_span = trace.iter().find(|s| s["name"] == "llm").unwrap();
    assert_eq!(llm_span["attributes"]["model"], "openai/mock-model", "{llm_span}");
    assert!(llm_span["attributes"]["prompt_tokens"].as_i64().unwrap() > 0, "{llm_span}");
    let query_span = trace.iter().find(|s| s["name"] == "query").unwrap();
    assert_eq!(query_span["attributes"]["method"], "basic");

    // (c) JSON logs: each line an object; the query's lines carry its request id.
    s.terminate(Duration::from_secs(30));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(KEY), "a log line holds the API key");
    let lines: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {l}")))
        .collect();
    let of_query: Vec<&Value> = lines.iter().filter(|l| l["span"]["id"] == REQUEST_ID).collect();
    let access = of_query
        .iter()
        .find(|l| l["target"] == "rhizome::access")
        .unwrap_or_else(|| panic!("no access line for {REQUEST_ID}: {text}"));
    assert_eq!(access["fields"]["message"], "POST /query 200");
    assert_eq!(access["span"]["route"], "/query");
    assert_eq!(access["span"]["status"], 200);
    assert!(access["fields"]["ms"].as_f64().unwrap() > 0.0, "{access}");
    let refused = lines.iter().find(|l| l["fields"]["status"] == 401 && l["target"] != "rhizome::access");
    assert!(refused.is_some_and(|l| l["span"]["route"] == "/metrics"), "the refusal is logged in its request: {text}");
    drop(llm);
}
