//! A loopback server that speaks the OpenAI chat-completions and embeddings API, for tests
//! and demos: real HTTP on 127.0.0.1, scripted failures (429 with `Retry-After`, 500s,
//! slow responses that trip timeouts, malformed and truncated bodies), a request log and a
//! request counter. It never listens beyond loopback and stops when dropped.
//!
//! A crate of its own, used only as a dev-dependency: release builds carry no fakes, and
//! tests build rhizome-llm with the same features as the binary (nothing compiled twice).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rhizome_llm::prompt::Prompts;
use rhizome_llm::{BlockingLlm, OpenAiConfig, OpenAiProvider};
use serde_json::{json, Value};

/// A scripted failure, served instead of a normal answer.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// 429 with `Retry-After: secs`.
    RateLimited { retry_after_s: u32 },
    /// HTTP 500.
    ServerError,
    /// Any other status (e.g. 401, 404), with a JSON error body.
    Status(u16),
    /// Wait this long before answering normally (longer than the client timeout: a timeout).
    Slow(Duration),
    /// 200 with a body that is not JSON.
    Malformed,
    /// 200 whose message content is extraction JSON cut in the middle.
    Truncated,
    /// 200 whose message content is prose around a fenced JSON block.
    Chatty,
}

/// How the server answers a chat request that has no fault scripted: given the request
/// body, the assistant's message content.
pub type Responder = dyn Fn(&Value) -> String + Send + Sync;

struct Shared {
    faults: Mutex<VecDeque<Fault>>,
    requests: Mutex<Vec<Value>>,
    count: AtomicUsize,
    stop: AtomicBool,
    responder: Box<Responder>,
}

pub struct MockOpenAi {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl MockOpenAi {
    /// Start on a free loopback port with the default responder ([`extraction_reply`]).
    pub fn start() -> std::io::Result<Self> {
        Self::with_responder(Box::new(|req: &Value| {
            // Only the document part of an extraction prompt (after its last "Text:").
            let text = last_user_text(req);
            let doc = text.rsplit_once("Text:").map(|x| x.1.to_string()).unwrap_or(text);
            extraction_reply(&doc)
        }))
    }

    pub fn with_responder(responder: Box<Responder>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            faults: Mutex::new(VecDeque::new()),
            requests: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            responder,
        });
        let s = shared.clone();
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = conn {
                    let s = s.clone();
                    std::thread::spawn(move || {
                        let _ = serve(stream, &s);
                    });
                }
            }
        });
        Ok(MockOpenAi { addr, shared, thread: Some(thread) })
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Serve these faults to the next requests, in order.
    pub fn push_faults(&self, faults: impl IntoIterator<Item = Fault>) {
        if let Ok(mut q) = self.shared.faults.lock() {
            q.extend(faults);
        }
    }

    /// Requests received so far (chat and embeddings).
    pub fn request_count(&self) -> usize {
        self.shared.count.load(Ordering::SeqCst)
    }

    /// Bodies of the requests received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for MockOpenAi {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The text of the last user message of a chat request.
pub fn last_user_text(req: &Value) -> String {
    req["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

/// A deterministic extraction answer: capitalised words of `text` become entities,
/// consecutive ones are related, and each pair also gives a fact.
pub fn extraction_reply(text: &str) -> String {
    let mut names: Vec<String> = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        let ok = w.chars().count() >= 4
            && w.chars().next().is_some_and(char::is_uppercase)
            && !w.chars().all(char::is_uppercase);
        if ok && !names.iter().any(|n| n == w) {
            names.push(w.to_string());
        }
    }
    names.truncate(12);
    let entities: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": n, "type": "CONCEPT", "description": format!("{n} appears in the text"), "importance": 0.5}))
        .collect();
    let relations: Vec<Value> = names
        .windows(2)
        .map(|p| json!({"source": p[0], "target": p[1], "type": "RELATED_TO", "description": format!("{} and {}", p[0], p[1]), "strength": 0.7}))
        .collect();
    let facts: Vec<Value> =
        names.windows(2).map(|p| json!({"subject": p[0], "predicate": "is mentioned with", "object": p[1]})).collect();
    json!({"entities": entities, "relations": relations, "facts": facts}).to_string()
}

fn read_request(stream: &mut TcpStream) -> std::io::Result<(String, Value)> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body)?;
    Ok((path, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

fn respond(stream: &mut TcpStream, status: &str, extra: &str, ctype: &str, body: &str) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

fn completion(content: &str, req: &Value) -> String {
    let prompt: usize = req["messages"]
        .as_array()
        .map(|m| m.iter().map(|x| x["content"].as_str().unwrap_or("").len() / 4).sum())
        .unwrap_or(0);
    json!({
        "id": "chatcmpl-mock", "object": "chat.completion", "model": req["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": content.len() / 4, "total_tokens": prompt + content.len() / 4},
    })
    .to_string()
}

fn serve(mut stream: TcpStream, s: &Shared) -> std::io::Result<()> {
    let (path, req) = read_request(&mut stream)?;
    s.count.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut r) = s.requests.lock() {
        r.push(req.clone());
    }
    if path.ends_with("/embeddings") {
        let inputs: Vec<String> = match &req["input"] {
            Value::Array(a) => a.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect(),
            Value::String(x) => vec![x.clone()],
            _ => vec![],
        };
        let data: Vec<Value> =
            inputs.iter().enumerate().map(|(i, t)| json!({"index": i, "embedding": hash_vector(t, 16)})).collect();
        return respond(&mut stream, "200 OK", "", "application/json", &json!({"data": data}).to_string());
    }
    if !path.ends_with("/chat/completions") {
        return respond(&mut stream, "404 Not Found", "", "application/json", r#"{"error":"not found"}"#);
    }
    let fault = s.faults.lock().ok().and_then(|mut q| q.pop_front());
    let content = (s.responder)(&req);
    match fault {
        Some(Fault::RateLimited { retry_after_s }) => respond(
            &mut stream,
            "429 Too Many Requests",
            &format!("Retry-After: {retry_after_s}\r\n"),
            "application/json",
            r#"{"error":{"message":"rate limited"}}"#,
        ),
        Some(Fault::Status(code)) => respond(
            &mut stream,
            &format!("{code} Error"),
            "",
            "application/json",
            r#"{"error":{"message":"scripted failure"}}"#,
        ),
        Some(Fault::ServerError) => {
            respond(&mut stream, "500 Internal Server Error", "", "application/json", r#"{"error":"boom"}"#)
        }
        Some(Fault::Slow(d)) => {
            std::thread::sleep(d);
            respond(&mut stream, "200 OK", "", "application/json", &completion(&content, &req))
        }
        Some(Fault::Malformed) => respond(&mut stream, "200 OK", "", "application/json", "{\"choices\": [ oops"),
        Some(Fault::Truncated) => {
            let cut: String = content.chars().take(content.chars().count() * 2 / 3).collect();
            respond(&mut stream, "200 OK", "", "application/json", &completion(&cut, &req))
        }
        Some(Fault::Chatty) => {
            let chatty =
                format!("Sure! Here is the extraction:\n```json\n{content}\n```\nLet me know if you need more.");
            respond(&mut stream, "200 OK", "", "application/json", &completion(&chatty, &req))
        }
        None if req["stream"] == true => {
            let mut body = String::new();
            for piece in content.split_inclusive(' ') {
                let ev = json!({"choices": [{"index": 0, "delta": {"content": piece}}]});
                body.push_str(&format!("data: {ev}\n\n"));
            }
            body.push_str("data: [DONE]\n\n");
            respond(&mut stream, "200 OK", "", "text/event-stream", &body)
        }
        None => respond(&mut stream, "200 OK", "", "application/json", &completion(&content, &req)),
    }
}

/// A deterministic unit vector from a text's bytes (for the embeddings endpoint).
fn hash_vector(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0f32; dim];
    for (i, b) in text.bytes().enumerate() {
        v[(i + b as usize) % dim] += 1.0 + (b % 7) as f32;
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter().map(|x| x / n).collect()
}

/// A blocking, prompt-level LLM ([`BlockingLlm`]) talking to `server` with
/// rhizome-llm's built-in prompts, greedy, at most 256 tokens per call.
pub fn blocking_llm(server: &MockOpenAi, runtime: tokio::runtime::Handle) -> BlockingLlm {
    blocking_llm_with(server, runtime, Prompts::builtin())
}

/// [`blocking_llm`] with `prompts` (tests of query-time code give the retrieval methods'
/// prompts too: `Prompts::builtin_with(&rhizome_retrieve::prompts())`).
pub fn blocking_llm_with(server: &MockOpenAi, runtime: tokio::runtime::Handle, prompts: Prompts) -> BlockingLlm {
    let provider = OpenAiProvider::new(OpenAiConfig {
        base_url: server.base_url(),
        model: "mock".into(),
        api_key: None,
        azure_api_version: None,
        timeout: std::time::Duration::from_secs(5),
    })
    .expect("an HTTP client for the loopback server");
    BlockingLlm {
        provider: std::sync::Arc::new(provider),
        prompts: std::sync::Arc::new(prompts),
        runtime,
        temperature: 0.0,
        max_tokens: 256,
    }
}
