//! OpenAI-compatible chat completions and embeddings over HTTP: OpenAI, Azure-style
//! deployments, Ollama, vLLM and llama.cpp servers all speak it.
//!
//! Failures are classified for the [`crate::Retry`] wrapper: 429 (with `Retry-After`),
//! 5xx, timeouts, connection errors and malformed bodies are transient
//! ([`Error::LlmTransient`]); other 4xx are not ([`Error::Llm`]).

use std::time::Duration;

use rhizome_core::llm::{BoxFuture, ChatProvider, ChatRequest, ChatResponse, EmbeddingProvider, TokenSink, Usage};
use rhizome_core::{Error, Result};
use serde_json::{json, Value};

/// Settings of an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL up to and including the API version, e.g. `https://api.openai.com/v1`,
    /// `http://localhost:11434/v1` (Ollama), or an Azure deployment URL
    /// `https://NAME.openai.azure.com/openai/deployments/DEPLOYMENT`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Azure-style endpoints need `api-version` as a query parameter and the key in an
    /// `api-key` header.
    pub azure_api_version: Option<String>,
    pub timeout: Duration,
}

pub struct OpenAiProvider {
    cfg: OpenAiConfig,
    http: reqwest::Client,
}

impl OpenAiProvider {
    pub fn new(cfg: OpenAiConfig) -> Result<Self> {
        if !(cfg.base_url.starts_with("http://") || cfg.base_url.starts_with("https://")) {
            return Err(Error::Config(format!("llm.base_url {:?} must start with http:// or https://", cfg.base_url)));
        }
        let http = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::Config(format!("HTTP client: {e}")))?;
        Ok(OpenAiProvider { cfg, http })
    }

    fn url(&self, path: &str) -> String {
        let mut u = format!("{}/{}", self.cfg.base_url.trim_end_matches('/'), path);
        if let Some(v) = &self.cfg.azure_api_version {
            u.push_str(&format!("?api-version={v}"));
        }
        u
    }

    fn transient(&self, msg: impl Into<String>, retry_after_ms: Option<u64>) -> Error {
        Error::LlmTransient { provider: ChatProvider::id(self), msg: msg.into(), retry_after_ms }
    }

    fn fatal(&self, msg: impl Into<String>) -> Error {
        Error::Llm { provider: ChatProvider::id(self), msg: msg.into() }
    }

    async fn post(&self, path: &str, body: Value) -> Result<reqwest::Response> {
        let mut rb = self.http.post(self.url(path)).json(&body);
        if let Some(k) = &self.cfg.api_key {
            rb = if self.cfg.azure_api_version.is_some() { rb.header("api-key", k) } else { rb.bearer_auth(k) };
        }
        let resp = rb.send().await.map_err(|e| {
            if e.is_timeout() {
                self.transient(format!("timed out after {:?}", self.cfg.timeout), None)
            } else {
                self.transient(format!("request to {} failed: {e}", self.url(path)), None)
            }
        })?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let retry_after = retry_after_ms(resp.headers());
        let text = resp.text().await.unwrap_or_default();
        let snippet: String = text.chars().take(300).collect();
        if status.as_u16() == 429 || status.is_server_error() {
            Err(self.transient(format!("HTTP {status}: {snippet}"), retry_after))
        } else {
            let hint = match status.as_u16() {
                401 | 403 => " (check the API key: llm.api_key_env names the variable holding it)",
                404 => " (check llm.base_url and llm.model)",
                _ => "",
            };
            Err(self.fatal(format!("HTTP {status}{hint}: {snippet}")))
        }
    }

    fn chat_body(&self, req: &ChatRequest, stream: bool) -> Value {
        let mut body = json!({
            "model": self.cfg.model,
            "messages": req.messages,
            "temperature": req.temperature,
        });
        if let Some(m) = req.max_tokens {
            body["max_tokens"] = json!(m);
        }
        if req.json_mode {
            body["response_format"] = json!({"type": "json_object"});
        }
        if !req.stop.is_empty() {
            body["stop"] = json!(req.stop);
        }
        if let Some(s) = req.seed {
            body["seed"] = json!(s);
        }
        if stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    async fn chat_once(&self, req: &ChatRequest) -> Result<ChatResponse> {
        let resp = self.post("chat/completions", self.chat_body(req, false)).await?;
        let text = resp.text().await.map_err(|e| self.transient(format!("reading the response failed: {e}"), None))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            let snippet: String = text.chars().take(200).collect();
            self.transient(format!("response is not JSON ({e}): {snippet}"), None)
        })?;
        let content = v["choices"][0]["message"]["content"].as_str().ok_or_else(|| {
            let snippet: String = text.chars().take(200).collect();
            self.transient(format!("response has no choices[0].message.content: {snippet}"), None)
        })?;
        Ok(ChatResponse { text: content.to_string(), usage: usage_of(&v["usage"]), cached: false })
    }

    async fn chat_stream(&self, req: &ChatRequest, sink: &TokenSink) -> Result<ChatResponse> {
        let mut resp = self.post("chat/completions", self.chat_body(req, true)).await?;
        let mut buf = String::new();
        let mut text = String::new();
        let mut usage = Usage::default();
        let mut done = false;
        while !done {
            let chunk = resp.chunk().await.map_err(|e| self.transient(format!("stream interrupted: {e}"), None))?;
            let Some(bytes) = chunk else { break };
            buf.push_str(&String::from_utf8_lossy(&bytes));
            while let Some(pos) = buf.find('\n') {
                let line: String = buf.drain(..=pos).collect();
                let Some(data) = line.trim().strip_prefix("data:") else { continue };
                let data = data.trim();
                if data == "[DONE]" {
                    done = true;
                    break;
                }
                let Ok(v) = serde_json::from_str::<Value>(data) else { continue };
                if let Some(piece) = v["choices"][0]["delta"]["content"].as_str() {
                    sink(piece);
                    text.push_str(piece);
                }
                if v["usage"].is_object() {
                    usage = usage_of(&v["usage"]);
                }
            }
        }
        if text.is_empty() && !done {
            return Err(self.transient("stream ended without content", None));
        }
        Ok(ChatResponse { text, usage, cached: false })
    }
}

fn usage_of(v: &Value) -> Usage {
    Usage {
        prompt_tokens: v["prompt_tokens"].as_u64().unwrap_or(0),
        completion_tokens: v["completion_tokens"].as_u64().unwrap_or(0),
    }
}

/// `Retry-After` in seconds (or an HTTP date, treated as 1 s), or the `retry-after-ms`
/// header some servers send.
fn retry_after_ms(h: &reqwest::header::HeaderMap) -> Option<u64> {
    if let Some(ms) = h.get("retry-after-ms").and_then(|v| v.to_str().ok()) {
        if let Ok(n) = ms.trim().parse::<f64>() {
            return Some(n.max(0.0) as u64);
        }
    }
    let v = h.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    match v.trim().parse::<f64>() {
        Ok(s) => Some((s.max(0.0) * 1000.0) as u64),
        Err(_) => Some(1000),
    }
}

impl ChatProvider for OpenAiProvider {
    fn id(&self) -> String {
        format!("openai/{}", self.cfg.model)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest, stream: Option<&'a TokenSink>) -> BoxFuture<'a, Result<ChatResponse>> {
        Box::pin(async move {
            match stream {
                Some(sink) => self.chat_stream(req, sink).await,
                None => self.chat_once(req).await,
            }
        })
    }
}

impl EmbeddingProvider for OpenAiProvider {
    fn id(&self) -> String {
        format!("openai/{}", self.cfg.model)
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>>> {
        Box::pin(async move {
            let resp = self.post("embeddings", json!({"model": self.cfg.model, "input": texts})).await?;
            let v: Value =
                resp.json().await.map_err(|e| self.transient(format!("embeddings response is not JSON: {e}"), None))?;
            let data =
                v["data"].as_array().ok_or_else(|| self.transient("embeddings response has no data list", None))?;
            let mut out = vec![Vec::new(); texts.len()];
            for (i, d) in data.iter().enumerate() {
                let idx = d["index"].as_u64().map(|x| x as usize).unwrap_or(i);
                let vec: Vec<f32> = d["embedding"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_f64).map(|x| x as f32).collect())
                    .unwrap_or_default();
                if idx < out.len() {
                    let mut vec = vec;
                    rhizome_core::l2_normalize(&mut vec);
                    out[idx] = vec;
                }
            }
            if out.iter().any(Vec::is_empty) {
                return Err(self.transient("embeddings response is missing vectors", None));
            }
            Ok(out)
        })
    }
}
