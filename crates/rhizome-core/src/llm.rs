//! The LLM provider contracts: one async method each, so that caching, retries,
//! concurrency and rate limits are wrapper types around any provider, not code repeated
//! in every provider.
//!
//! Futures are boxed (`BoxFuture`) so providers can be used as trait objects and so this
//! crate needs no async runtime: the runtime is the caller's.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use crate::Result;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn system(c: impl Into<String>) -> Self {
        ChatMessage { role: Role::System, content: c.into() }
    }
    pub fn user(c: impl Into<String>) -> Self {
        ChatMessage { role: Role::User, content: c.into() }
    }
    pub fn assistant(c: impl Into<String>) -> Self {
        ChatMessage { role: Role::Assistant, content: c.into() }
    }
}

/// A chat completion request. Everything that changes the answer is here, so the request
/// (with the provider and model) is the cache key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    pub temperature: f32,
    pub max_tokens: Option<u32>,
    /// Ask for a JSON object where the provider supports it.
    pub json_mode: bool,
    pub stop: Vec<String>,
    pub seed: Option<u64>,
    /// Pipeline stage this call belongs to (for token accounting; not sent).
    #[serde(skip)]
    pub stage: String,
}

impl Default for ChatRequest {
    fn default() -> Self {
        ChatRequest {
            messages: Vec::new(),
            temperature: 0.0,
            max_tokens: None,
            json_mode: false,
            stop: Vec::new(),
            seed: Some(0),
            stage: String::new(),
        }
    }
}

/// Token counts of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub text: String,
    pub usage: Usage,
    /// True when the response came from the cache (no call was made).
    #[serde(default)]
    pub cached: bool,
}

/// Receives streamed text as it is generated.
pub type TokenSink = dyn Fn(&str) + Send + Sync;

/// A chat-completion provider (OpenAI-compatible HTTP, local GGUF, ...).
pub trait ChatProvider: Send + Sync {
    /// `provider/model`, e.g. `openai/gpt-4o-mini` or `local/qwen2.5-0.5b`: part of the
    /// cache key.
    fn id(&self) -> String;
    /// Complete `req`. With `stream`, text is also passed to it as it is generated.
    fn chat<'a>(&'a self, req: &'a ChatRequest, stream: Option<&'a TokenSink>) -> BoxFuture<'a, Result<ChatResponse>>;
}

/// Forwarding through shared pointers, so wrappers can hold `Arc<dyn ChatProvider>`.
impl<P: ChatProvider + ?Sized> ChatProvider for std::sync::Arc<P> {
    fn id(&self) -> String {
        (**self).id()
    }
    fn chat<'a>(&'a self, req: &'a ChatRequest, stream: Option<&'a TokenSink>) -> BoxFuture<'a, Result<ChatResponse>> {
        (**self).chat(req, stream)
    }
}

/// An embeddings provider reached asynchronously (e.g. an OpenAI-compatible endpoint).
pub trait EmbeddingProvider: Send + Sync {
    fn id(&self) -> String;
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>>>;
}

/// A persistent store of LLM responses, keyed by a hash of provider, model, parameters and
/// prompt. Shared by concurrent calls.
pub trait LlmCache: Send + Sync {
    fn get(&self, key: &str) -> Result<Option<ChatResponse>>;
    fn put(&self, key: &str, provider: &str, response: &ChatResponse) -> Result<()>;
}

/// The cache key of a request to a provider: SHA-256 over the provider id and the request
/// as JSON (messages, temperature, max tokens, JSON mode, stop, seed).
pub fn cache_key(provider_id: &str, req: &ChatRequest) -> String {
    let body = serde_json::to_string(req).unwrap_or_default();
    crate::ids::content_id("llm_", &[provider_id, &body])
}

/// One prompt to run at query time: a named prompt (a file in the prompt set) and the
/// values of its placeholders.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptCall {
    /// Prompt name, e.g. `query_entities` (file `query_entities.txt`).
    pub prompt: String,
    pub vars: Vec<(String, String)>,
    /// Pipeline stage, for token accounting (e.g. `query.multihop`).
    pub stage: String,
    /// Ask for a JSON object where the provider supports it.
    pub json: bool,
    /// Completion limit; None: the configured `llm.max_tokens`.
    pub max_tokens: Option<u32>,
}

impl PromptCall {
    pub fn new(prompt: &str, stage: &str, vars: &[(&str, &str)]) -> Self {
        PromptCall {
            prompt: prompt.to_string(),
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            stage: stage.to_string(),
            json: false,
            max_tokens: None,
        }
    }
    pub fn json(mut self) -> Self {
        self.json = true;
        self
    }
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }
}

/// The LLM as query-time code sees it: blocking, prompt-level. The implementation (in
/// `rhizome-llm`) renders the prompt files, goes through the configured provider stack
/// (cache, retries, limits, metering) and runs the calls of one batch concurrently.
///
/// Retrieval methods take `Option<&dyn PromptLlm>`: None means no LLM is configured and
/// the method takes its LLM-free path.
pub trait PromptLlm: Send + Sync {
    /// `provider/model`.
    fn id(&self) -> String;
    /// Run `calls` (concurrently, within the configured limits); one result per call, in
    /// order.
    fn run(&self, calls: &[PromptCall]) -> Vec<Result<String>>;
    /// Run one call.
    fn run_one(&self, call: PromptCall) -> Result<String> {
        self.run(std::slice::from_ref(&call))
            .pop()
            .unwrap_or_else(|| Err(crate::Error::Llm { provider: self.id(), msg: "no result".into() }))
    }
}
