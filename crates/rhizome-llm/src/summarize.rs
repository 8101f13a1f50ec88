//! Entity summaries: one description written from the several an entity collected across
//! chunks, with the `summarize_entity` prompt. Cached like every call.

use std::sync::Arc;

use rhizome_core::llm::{ChatProvider, ChatRequest};
use rhizome_core::{Result, Summarizer, SummaryTask};

use crate::prompt::Prompts;

pub struct LlmSummarizer {
    pub provider: Arc<dyn ChatProvider>,
    pub prompts: Arc<Prompts>,
    pub temperature: f32,
    pub max_tokens: u32,
    pub runtime: tokio::runtime::Handle,
}

impl LlmSummarizer {
    async fn one(&self, t: &SummaryTask) -> Result<String> {
        let listed: Vec<String> = t.descriptions.iter().map(|d| format!("- {d}")).collect();
        let messages = self
            .prompts
            .render("summarize_entity", &[("entity_name", &t.name), ("descriptions", &listed.join("\n"))])?;
        let req = ChatRequest {
            messages,
            temperature: self.temperature,
            max_tokens: Some(self.max_tokens.min(400)),
            stage: "summarize".into(),
            ..ChatRequest::default()
        };
        Ok(self.provider.chat(&req, None).await?.text.trim().to_string())
    }
}

impl Summarizer for LlmSummarizer {
    fn summarize_batch(&self, tasks: &[SummaryTask]) -> Vec<Result<String>> {
        self.runtime.block_on(futures_util::future::join_all(tasks.iter().map(|t| self.one(t))))
    }
}
