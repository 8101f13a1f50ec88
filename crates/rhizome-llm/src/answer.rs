//! Answer generation from retrieved contexts: the prompt requires `[n]` citations and an
//! explicit "not enough evidence" instead of a guess.

use rhizome_core::llm::{ChatProvider, ChatRequest, ChatResponse, TokenSink};
use rhizome_core::Result;

use crate::prompt::Prompts;

/// One numbered piece of evidence as the model sees it.
pub struct Evidence<'a> {
    pub source: &'a str,
    pub text: &'a str,
}

/// Render the contexts as `[n] (source) text` blocks.
pub fn number_contexts(contexts: &[Evidence]) -> String {
    contexts
        .iter()
        .enumerate()
        .map(|(i, c)| format!("[{}] ({}) {}", i + 1, c.source, c.text.trim()))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Ask the model to answer `question` from `contexts`, streaming to `stream` if given.
pub async fn generate_answer(
    provider: &dyn ChatProvider,
    prompts: &Prompts,
    question: &str,
    contexts: &[Evidence<'_>],
    stream: Option<&TokenSink>,
    temperature: f32,
    max_tokens: u32,
) -> Result<ChatResponse> {
    let messages = prompts.render("answer", &[("question", question), ("contexts", &number_contexts(contexts))])?;
    let req = ChatRequest {
        messages,
        temperature,
        max_tokens: Some(max_tokens),
        stage: "answer".into(),
        ..ChatRequest::default()
    };
    provider.chat(&req, stream).await
}
