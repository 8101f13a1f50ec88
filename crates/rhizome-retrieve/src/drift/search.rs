//! Local search for one follow-up: the `local` retriever with its token budget set to
//! `drift.local_max_tokens`, its contexts rendered as numbered lines under that budget.

use rhizome_core::llm::PromptLlm;
use rhizome_core::text::count_tokens;
use rhizome_core::{Config, Result};

use crate::local::cut_to_tokens;
use crate::{retriever, Context, DriftConfig, LocalConfig, Method, QueryEnv};

/// What one local search gave: the contexts that fit the rendering, and their rendering.
#[derive(Debug, Clone, Default)]
pub(crate) struct LocalFound {
    pub contexts: Vec<Context>,
    pub rendered: String,
    pub notes: Vec<String>,
}

/// Runs local search under DRIFT's budget.
pub(crate) struct LocalRunner {
    config: Config,
}

impl LocalRunner {
    /// The settings of `env` with `local.max_context_tokens = drift.local_max_tokens`.
    pub fn new(env: &QueryEnv) -> Self {
        let mut config = env.config.clone();
        config.section_mut::<LocalConfig>().max_context_tokens = env.config.section::<DriftConfig>().local_max_tokens;
        LocalRunner { config }
    }

    /// Local search for `query`, with the same store, embedder and graph as `env` and
    /// `llm` (DRIFT's metered LLM, or None offline).
    pub fn search(&self, env: &QueryEnv, llm: Option<&dyn PromptLlm>, query: &str) -> Result<LocalFound> {
        let local_env =
            QueryEnv { store: env.store, embedder: env.embedder, config: &self.config, llm, graph: env.graph };
        let r = retriever(Method::Local).retrieve(&local_env, query)?;
        let (contexts, rendered) = render(r.contexts, self.config.section::<LocalConfig>().max_context_tokens);
        Ok(LocalFound { contexts, rendered, notes: r.notes })
    }
}

/// `[n] (kind, source) text` lines while they fit in `budget` tokens; the first that does
/// not fit is cut to the tokens left (when some are), the rest dropped. Returns the
/// contexts shown and the text.
pub(crate) fn render(contexts: Vec<Context>, budget: usize) -> (Vec<Context>, String) {
    let mut lines: Vec<String> = Vec::new();
    let mut kept = Vec::new();
    let mut used = 0;
    for c in contexts {
        let line = format!("[{}] ({}, {}) {}", lines.len() + 1, c.kind, c.source, c.text.trim());
        let n = count_tokens(&line) + 1;
        if used + n <= budget {
            used += n;
            lines.push(line);
            kept.push(c);
            continue;
        }
        let cut = cut_to_tokens(&line, budget.saturating_sub(used + 1));
        if count_tokens(&cut) > count_tokens(&line) / 4 {
            lines.push(cut);
            kept.push(c);
        }
        break;
    }
    (kept, lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ContextKind;

    fn ctx(id: &str, text: &str) -> Context {
        Context {
            kind: ContextKind::Chunk,
            id: id.into(),
            text: text.into(),
            score: 1.0,
            source: "a.txt".into(),
            title: String::new(),
            pages: None,
        }
    }

    #[test]
    fn rendering_stays_in_budget() {
        let long = "word ".repeat(40);
        let all = vec![ctx("a", "Short one."), ctx("b", &long), ctx("c", "Never shown.")];
        for budget in [0, 5, 12, 30, 200] {
            let (kept, text) = render(all.clone(), budget);
            assert!(count_tokens(&text) <= budget, "{budget}: {text}");
            assert!(kept.iter().all(|c| c.id != "c") || budget == 200);
        }
        let (kept, text) = render(all, 200);
        assert_eq!(kept.len(), 3);
        assert!(text.starts_with("[1] (chunk, a.txt) Short one.\n[2]"));
    }
}
