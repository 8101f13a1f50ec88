//! The OpenAI-compatible provider and its wrappers over real HTTP, against the loopback
//! server, including the failures real endpoints produce.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rhizome_core::llm::{ChatMessage, ChatProvider, ChatRequest, ChatResponse, EmbeddingProvider, LlmCache};
use rhizome_core::{Error, Result};
use rhizome_llm::{Cached, Limited, Metered, OpenAiConfig, OpenAiProvider, Retry};
use rhizome_llm_testing::{Fault, MockOpenAi};

fn provider(server: &MockOpenAi, timeout_ms: u64) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig {
        base_url: server.base_url(),
        model: "mock-model".into(),
        api_key: Some("sk-test".into()),
        azure_api_version: None,
        timeout: Duration::from_millis(timeout_ms),
    })
    .unwrap()
}

fn retry<P: ChatProvider>(p: P, n: u32) -> Retry<P> {
    Retry { inner: p, max_retries: n, base_delay: Duration::from_millis(10), max_delay: Duration::from_secs(5) }
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest { messages: vec![ChatMessage::user(text)], stage: "test".into(), ..Default::default() }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn answers_and_reports_usage() {
    let server = MockOpenAi::start().unwrap();
    let p = provider(&server, 5000);
    let r = rt().block_on(p.chat(&ask("Marie Curie met Pierre Curie in Paris."), None)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.text).unwrap();
    assert_eq!(v["entities"][0]["name"], "Marie");
    assert!(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0);
    let body = &server.requests()[0];
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["temperature"], 0.0);
}

#[test]
fn retries_429_with_retry_after_500s_timeouts_and_malformed_bodies() {
    let server = MockOpenAi::start().unwrap();
    server.push_faults([
        Fault::RateLimited { retry_after_s: 1 },
        Fault::ServerError,
        Fault::Slow(Duration::from_millis(1500)),
        Fault::Malformed,
    ]);
    let p = retry(provider(&server, 500), 5);
    let t = Instant::now();
    let r = rt().block_on(p.chat(&ask("Ada Lovelace"), None)).unwrap();
    assert!(r.text.contains("Lovelace"));
    assert_eq!(server.request_count(), 5, "four failures, then success");
    assert!(t.elapsed() >= Duration::from_secs(1), "Retry-After honoured: {:?}", t.elapsed());
}

#[test]
fn gives_up_after_max_retries_with_a_clear_error_and_does_not_retry_4xx() {
    let server = MockOpenAi::start().unwrap();
    server.push_faults([Fault::ServerError, Fault::ServerError, Fault::ServerError]);
    let p = retry(provider(&server, 2000), 2);
    let err = rt().block_on(p.chat(&ask("x"), None)).unwrap_err();
    assert!(matches!(err, Error::Llm { .. }), "{err:?}");
    assert!(err.to_string().contains("gave up after 3 attempts"), "{err}");
    assert_eq!(server.request_count(), 3);

    // A 404 (wrong URL or model) is not transient: reported at once, with a hint.
    server.push_faults([Fault::Status(404)]);
    let before = server.request_count();
    let err = rt().block_on(retry(provider(&server, 2000), 5).chat(&ask("x"), None)).unwrap_err();
    assert!(err.to_string().contains("404") && err.to_string().contains("llm.base_url"), "{err}");
    assert_eq!(server.request_count(), before + 1);
}

#[test]
fn streams_tokens() {
    let server = MockOpenAi::start().unwrap();
    let p = provider(&server, 5000);
    let got = Arc::new(std::sync::Mutex::new(String::new()));
    let g = got.clone();
    let sink = move |piece: &str| g.lock().unwrap().push_str(piece);
    let r = rt().block_on(p.chat(&ask("Grace Hopper wrote COBOL compilers"), Some(&sink))).unwrap();
    assert_eq!(*got.lock().unwrap(), r.text);
    assert!(r.text.contains("Hopper"));
    assert_eq!(server.requests()[0]["stream"], true);
}

struct MemCache(std::sync::Mutex<std::collections::HashMap<String, ChatResponse>>);

impl LlmCache for MemCache {
    fn get(&self, key: &str) -> Result<Option<ChatResponse>> {
        Ok(self.0.lock().unwrap().get(key).cloned())
    }
    fn put(&self, key: &str, _: &str, r: &ChatResponse) -> Result<()> {
        self.0.lock().unwrap().insert(key.to_string(), r.clone());
        Ok(())
    }
}

#[test]
fn the_cache_makes_repeated_calls_free_and_metering_counts_them() {
    let server = MockOpenAi::start().unwrap();
    let cache = Arc::new(MemCache(Default::default()));
    let stack = Metered::new(Cached {
        inner: Limited::new(retry(provider(&server, 5000), 3), 4, None, None),
        cache: cache.clone(),
    });
    let rt = rt();
    let a = rt.block_on(stack.chat(&ask("Alan Turing"), None)).unwrap();
    let b = rt.block_on(stack.chat(&ask("Alan Turing"), None)).unwrap();
    assert!(!a.cached && b.cached);
    assert_eq!(a.text, b.text);
    assert_eq!(server.request_count(), 1);
    let mut other = ask("Alan Turing");
    other.temperature = 0.5;
    rt.block_on(stack.chat(&other, None)).unwrap();
    assert_eq!(server.request_count(), 2, "parameters are part of the key");
    let u = stack.usage()["test"];
    assert_eq!((u.calls, u.cached_calls), (2, 1));
    assert!(u.prompt_tokens > 0);
}

#[test]
fn concurrency_and_request_rate_are_limited() {
    let server = MockOpenAi::start().unwrap();
    server.push_faults([Fault::Slow(Duration::from_millis(300)); 4]);
    let p = Arc::new(Limited::new(provider(&server, 5000), 2, None, None));
    let rt = rt();
    let t = Instant::now();
    rt.block_on(async {
        let reqs: Vec<ChatRequest> = (0..4).map(|i| ask(&format!("Item Number{i}"))).collect();
        let futs = reqs.iter().map(|r| p.chat(r, None));
        for r in futures_util::future::join_all(futs).await {
            r.unwrap();
        }
    });
    // Four 300 ms calls, two at a time: at least two rounds.
    assert!(t.elapsed() >= Duration::from_millis(590), "{:?}", t.elapsed());

    // Two requests per minute: the third waits (we only check it does not run at once).
    let limited = Limited::new(provider(&server, 5000), 8, Some(2), None);
    let before = server.request_count();
    let res = rt.block_on(async {
        tokio::time::timeout(Duration::from_millis(800), async {
            for i in 0..3 {
                limited.chat(&ask(&format!("Call{i}")), None).await.unwrap();
            }
        })
        .await
    });
    assert!(res.is_err(), "third call must wait for the window");
    assert_eq!(server.request_count(), before + 2);
}

#[test]
fn embeddings_endpoint() {
    let server = MockOpenAi::start().unwrap();
    let p = provider(&server, 5000);
    let texts = vec!["alpha".to_string(), "beta".to_string()];
    let v = rt().block_on(EmbeddingProvider::embed(&p, &texts)).unwrap();
    assert_eq!(v.len(), 2);
    let n: f32 = v[0].iter().map(|x| x * x).sum();
    assert!((n - 1.0).abs() < 1e-4);
    assert_ne!(v[0], v[1]);
}
