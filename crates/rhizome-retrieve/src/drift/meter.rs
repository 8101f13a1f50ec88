//! Counting a search's LLM use: a [`PromptLlm`] wrapper that counts the calls it passes on
//! (DRIFT's own and those of the local searches it runs), the tokens sent and the tokens
//! received, measured with [`count_tokens`].
//!
//! Retrieval code sees prompts by name, not their rendered text, so the tokens sent are
//! those of the values filled into the prompts (questions, reports, contexts, answers):
//! the fixed wording of the templates (a few hundred tokens per call) is not included.

use std::collections::BTreeMap;
use std::sync::Mutex;

use rhizome_core::llm::{PromptCall, PromptLlm};
use rhizome_core::text::count_tokens;
use rhizome_core::Result;
use serde_json::{json, Value};

#[derive(Debug, Default)]
struct Counts {
    calls: usize,
    failed: usize,
    prompt_tokens: usize,
    completion_tokens: usize,
    by_prompt: BTreeMap<String, usize>,
}

/// A counting pass-through to another [`PromptLlm`].
pub(crate) struct Metered<'a> {
    inner: &'a dyn PromptLlm,
    counts: Mutex<Counts>,
}

impl<'a> Metered<'a> {
    pub fn new(inner: &'a dyn PromptLlm) -> Self {
        Metered { inner, counts: Mutex::new(Counts::default()) }
    }

    /// `{"calls", "failed", "prompt_tokens", "completion_tokens", "by_prompt": {name: calls}}`.
    pub fn to_json(&self) -> Value {
        let c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        json!({
            "calls": c.calls,
            "failed": c.failed,
            "prompt_tokens": c.prompt_tokens,
            "completion_tokens": c.completion_tokens,
            "by_prompt": c.by_prompt,
        })
    }
}

impl PromptLlm for Metered<'_> {
    fn id(&self) -> String {
        self.inner.id()
    }

    fn run(&self, calls: &[PromptCall]) -> Vec<Result<String>> {
        let sent: usize = calls.iter().flat_map(|c| &c.vars).map(|(_, v)| count_tokens(v)).sum();
        let replies = self.inner.run(calls);
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.calls += calls.len();
        c.prompt_tokens += sent;
        for call in calls {
            *c.by_prompt.entry(call.prompt.clone()).or_default() += 1;
        }
        for r in &replies {
            match r {
                Ok(text) => c.completion_tokens += count_tokens(text),
                Err(_) => c.failed += 1,
            }
        }
        replies
    }
}
