//! [`BlockingLlm`]: the configured provider stack behind the blocking, prompt-level
//! [`PromptLlm`] contract that query-time code uses.

use std::sync::Arc;

use futures_util::future::join_all;
use rhizome_core::llm::{ChatProvider, ChatRequest, PromptCall, PromptLlm};
use rhizome_core::Result;

use crate::prompt::Prompts;

/// Renders prompts and runs them through `provider` on `runtime`. The calls of one batch
/// run concurrently; the provider's own wrappers (a `Limited`) bound how many are in flight.
pub struct BlockingLlm {
    pub provider: Arc<dyn ChatProvider>,
    pub prompts: Arc<Prompts>,
    pub runtime: tokio::runtime::Handle,
    pub temperature: f32,
    pub max_tokens: u32,
}

impl BlockingLlm {
    fn request(&self, call: &PromptCall) -> Result<ChatRequest> {
        let vars: Vec<(&str, &str)> = call.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let messages = self.prompts.render(&call.prompt, &vars)?;
        Ok(ChatRequest {
            messages,
            temperature: self.temperature,
            max_tokens: Some(call.max_tokens.unwrap_or(self.max_tokens)),
            json_mode: call.json,
            stage: call.stage.clone(),
            ..ChatRequest::default()
        })
    }
}

impl PromptLlm for BlockingLlm {
    fn id(&self) -> String {
        self.provider.id()
    }

    fn run(&self, calls: &[PromptCall]) -> Vec<Result<String>> {
        let futures = calls.iter().map(|call| async move {
            let req = self.request(call)?;
            self.provider.chat(&req, None).await.map(|resp| resp.text)
        });
        self.runtime.block_on(join_all(futures))
    }
}
