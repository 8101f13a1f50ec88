//! The reduce step: one call over the answers of the query-state graph, best score first,
//! packed into `drift.reduce_max_tokens`.

use rhizome_core::llm::{PromptCall, PromptLlm};
use rhizome_core::text::count_tokens;

use super::state::QueryState;
use super::STAGE;
use crate::{DriftConfig, QueryEnv};

/// The answers as the reduce prompt shows them, best first, while they fit in `budget`
/// tokens; returns the text and how many answers were left out.
pub(crate) fn pack_answers(state: &QueryState, budget: usize) -> (String, usize) {
    let answered = state.answered();
    let mut blocks: Vec<String> = Vec::new();
    let mut used = 0;
    for (_, node) in &answered {
        let block = format!(
            "----- Finding {} (score {:.0}) -----\nQuestion: {}\nAnswer: {}",
            blocks.len() + 1,
            node.score.unwrap_or(0.0),
            node.query.trim(),
            node.answer.as_deref().unwrap_or("").trim()
        );
        let n = count_tokens(&block);
        if used + n > budget {
            break;
        }
        used += n;
        blocks.push(block);
    }
    let left_out = answered.len() - blocks.len();
    (blocks.join("\n\n"), left_out)
}

/// Run the reduce call; the answer, or None with a note when nothing fits, the call fails
/// or it answers nothing.
pub(crate) fn reduce(
    llm: &dyn PromptLlm,
    env: &QueryEnv,
    question: &str,
    state: &QueryState,
    notes: &mut Vec<String>,
) -> Option<String> {
    let cfg = env.config.section::<DriftConfig>();
    let (answers, left_out) = pack_answers(state, cfg.reduce_max_tokens);
    if left_out > 0 {
        notes.push(format!("reduce: {left_out} lower-scored answers left out to fit {} tokens", cfg.reduce_max_tokens));
    }
    if answers.is_empty() {
        notes.push("reduce skipped: no answer to combine (or none fits drift.reduce_max_tokens)".into());
        return None;
    }
    let call = PromptCall::new(
        "drift_reduce",
        STAGE,
        &[("question", question), ("answers", &answers), ("response_type", &cfg.response_type)],
    )
    .max_tokens(cfg.reduce_max_output_tokens);
    match llm.run_one(call) {
        Ok(text) if !text.trim().is_empty() => Some(text.trim().to_string()),
        Ok(_) => {
            notes.push("reduce call answered nothing: no DRIFT answer".into());
            None
        }
        Err(e) => {
            notes.push(format!("reduce call failed ({e}): no DRIFT answer"));
            None
        }
    }
}
