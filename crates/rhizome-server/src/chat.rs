//! What the chat endpoints share (OpenAI's in `openai.rs`, Ollama's in `ollama.rs`): the
//! model name picks the method (`rhizome` = auto, `rhizome-<method>`), the last user
//! message is the question and the earlier ones its history (a follow-up is rewritten by
//! the engine), and the reply is the answer followed by the sources it cites.

use rhizome_core::llm::{ChatMessage, Role};
use rhizome_engine::{Engine, Method, QueryOutcome, QueryRequest};

use crate::error::{ApiError, ApiResult};

/// The model every method is reached by: `rhizome` (auto) first, then `rhizome-<method>`.
pub fn models() -> Vec<(String, Method)> {
    let mut out = vec![("rhizome".to_string(), Method::Auto)];
    out.extend(Method::ALL.iter().map(|m| (format!("rhizome-{}", m.as_str()), *m)));
    out
}

/// The method a model name stands for; a `:tag` (Ollama's `:latest`) is ignored.
pub fn method_for_model(model: &str) -> ApiResult<Method> {
    let name = model.trim();
    let name = name.split_once(':').map_or(name, |(n, _)| n);
    models().into_iter().find(|(m, _)| m == name).map(|(_, method)| method).ok_or_else(|| {
        ApiError::new(
            axum::http::StatusCode::NOT_FOUND,
            format!("model: unknown model {model:?}"),
            format!("use rhizome (auto) or rhizome-<method>: {}", models().into_iter().map(|m| m.0).collect::<Vec<_>>().join(", ")),
        )
    })
}

/// Map a chat role; roles that carry no conversation (tool, function) give None.
pub fn role(r: &str) -> Option<Role> {
    match r.trim().to_lowercase().as_str() {
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        "system" | "developer" => Some(Role::System),
        _ => None,
    }
}

/// The engine request of a chat: the last message must be the user's question.
pub fn request(engine: &Engine, model: &str, mut messages: Vec<ChatMessage>) -> ApiResult<QueryRequest> {
    let method = method_for_model(model)?;
    let Some(last) = messages.pop() else {
        return Err(ApiError::bad("messages", "is empty", "send at least one user message"));
    };
    if last.role != Role::User {
        return Err(ApiError::bad("messages", "the last message is not the user's", "end the conversation with the user's question"));
    }
    let mut req = QueryRequest::new(&last.content, method);
    req.history = messages;
    engine.check_query(&req).map_err(|e| match e {
        rhizome_core::Error::BadInput { msg, .. } => ApiError::bad("messages", msg, "end with a user message that asks something"),
        other => other.into(),
    })?;
    Ok(req)
}

/// The `[n]` numbers an answer cites, in order of first citation.
fn cited(answer: &str, n_contexts: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut rest = answer;
    while let Some(open) = rest.find('[') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find(']') else { break };
        for part in rest[..close].split(',') {
            if let Ok(n) = part.trim().parse::<usize>() {
                if (1..=n_contexts).contains(&n) && !out.contains(&n) {
                    out.push(n);
                }
            }
        }
    }
    out
}

/// "Sources:" and one line per cited context (`[n] title — source`); when the answer
/// cites none, its first contexts. Empty when nothing was retrieved.
pub fn sources(o: &QueryOutcome) -> String {
    let mut ns = cited(&o.answer, o.contexts.len());
    if ns.is_empty() {
        ns = (1..=o.contexts.len().min(3)).collect();
    }
    if ns.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n\nSources:");
    for n in ns {
        let c = &o.contexts[n - 1];
        let line = match (c.title.trim(), c.source.trim()) {
            ("", "") => format!("{} {}", c.kind, c.id),
            ("", src) => src.to_string(),
            (t, "") => t.to_string(),
            (t, src) => format!("{t} — {src}"),
        };
        s.push_str(&format!("\n[{n}] {line}"));
    }
    s
}

/// The whole reply text: the answer and its sources.
pub fn reply(o: &QueryOutcome) -> String {
    format!("{}{}", o.answer.trim_end(), sources(o))
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_and_citations() {
        assert_eq!(method_for_model("rhizome").unwrap(), Method::Auto);
        assert_eq!(method_for_model("rhizome-hippo:latest").unwrap(), Method::Hippo);
        assert_eq!(method_for_model("rhizome-chunk-only").unwrap(), Method::ChunkOnly);
        assert!(method_for_model("gpt-4").is_err());
        assert_eq!(cited("A [2] and B [1, 2]; not [9] or [x].", 3), vec![2, 1]);
    }
}
