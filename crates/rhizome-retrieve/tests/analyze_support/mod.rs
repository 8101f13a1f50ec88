//! The LLM of the analysis tests: a blocking LLM on the loopback OpenAI server, and a
//! server scripted per prompt. `index` holds the small index `--method auto` runs on.

pub mod index;

use std::sync::Arc;

use rhizome_llm::{BlockingLlm, OpenAiConfig, OpenAiProvider};
use rhizome_llm_testing::{last_user_text, MockOpenAi};
use serde_json::Value;

pub struct Llm {
    _rt: tokio::runtime::Runtime,
    pub llm: BlockingLlm,
}

pub fn llm(server: &MockOpenAi) -> Llm {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let provider = OpenAiProvider::new(OpenAiConfig {
        base_url: server.base_url(),
        model: "mock".into(),
        api_key: None,
        azure_api_version: None,
        timeout: std::time::Duration::from_secs(10),
    })
    .unwrap();
    let llm = BlockingLlm {
        provider: Arc::new(provider),
        prompts: Arc::new(rhizome_llm::prompt::Prompts::builtin_with(&rhizome_retrieve::prompts())),
        runtime: rt.handle().clone(),
        temperature: 0.0,
        max_tokens: 256,
    };
    Llm { _rt: rt, llm }
}

/// Answers the rewrite prompt with `rewrite` and the analysis prompt with `analysis`.
pub fn scripted(rewrite: &'static str, analysis: &'static str) -> MockOpenAi {
    MockOpenAi::with_responder(Box::new(move |req: &Value| {
        if last_user_text(req).contains("New question:") {
            rewrite.to_string()
        } else {
            analysis.to_string()
        }
    }))
    .unwrap()
}
