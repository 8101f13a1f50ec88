//! What the chat endpoints share (OpenAI's in `openai.rs`, Ollama's in `ollama.rs`): the
//! model name picks the method (`rhizome` = auto, `rhizome-<method>`), the last user
//! message is the question and the earlier ones its history (a follow-up is rewritten by
//! the engine), and the reply is the answer followed by the sources it cites.

use rhizome_core::llm::{ChatMessage, Role};
use rhizome_engine::{Engine, Method, QueryOutcome, QueryRequest};
use serde_json::Value;

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
            format!("model: unknown model {}", quote(model)),
            format!(
                "use rhizome (auto) or rhizome-<method>: {}",
                models().into_iter().map(|m| m.0).collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

/// The longest piece of a request's text an error message quotes.
const QUOTE_BYTES: usize = 80;

/// `text` for an error message: at most [`QUOTE_BYTES`], then an ellipsis.
pub fn shorten(text: &str) -> String {
    let cut = rhizome_core::text::clip(text, QUOTE_BYTES);
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        text.to_string()
    }
}

/// `text` quoted for an error message, shortened as [`shorten`] does.
pub fn quote(text: &str) -> String {
    let cut = rhizome_core::text::clip(text, QUOTE_BYTES);
    if cut.len() < text.len() {
        format!("{cut:?}…")
    } else {
        format!("{text:?}")
    }
}

/// The conversation of a chat request, from each message's role and content. Roles that
/// carry no conversation (`tool`, `function`) are left out; any other role, or content that
/// is neither text nor a list of parts, is refused naming the message.
pub fn messages<'a>(list: impl IntoIterator<Item = (&'a str, &'a Value)>) -> ApiResult<Vec<ChatMessage>> {
    let mut out = Vec::new();
    for (i, (role, content)) in list.into_iter().enumerate() {
        let role = match role.trim().to_lowercase().as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "system" | "developer" => Role::System,
            "tool" | "function" => continue,
            _ => {
                return Err(ApiError::bad(
                    &format!("messages[{i}].role"),
                    format!("unknown role {}", quote(role)),
                    "use system, user or assistant",
                ))
            }
        };
        let content = match content {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            // OpenAI's parts: the text ones are read, others (images) are left out.
            Value::Array(parts) if parts.iter().all(Value::is_object) => {
                parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
            }
            _ => {
                return Err(ApiError::bad(
                    &format!("messages[{i}].content"),
                    "is neither text nor a list of parts",
                    "send the message as a string (or a list of {\"type\": \"text\", \"text\": ...} parts)",
                ))
            }
        };
        out.push(ChatMessage { role, content });
    }
    Ok(out)
}

/// The engine request of a chat: the last message must be the user's question.
pub fn request(engine: &Engine, model: &str, mut messages: Vec<ChatMessage>) -> ApiResult<QueryRequest> {
    let method = method_for_model(model)?;
    let Some(last) = messages.pop() else {
        return Err(ApiError::bad("messages", "is empty", "send at least one user message"));
    };
    if last.role != Role::User {
        return Err(ApiError::bad(
            "messages",
            "the last message is not the user's",
            "end the conversation with the user's question",
        ));
    }
    let mut req = QueryRequest::new(&last.content, method);
    req.history = messages;
    engine.check_query(&req).map_err(|e| match e {
        rhizome_core::Error::BadInput { msg, .. } => {
            ApiError::bad("messages", msg, "end with a user message that asks something")
        }
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
        let cite = c.cite();
        let line = match (c.title.trim(), cite.trim()) {
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

/// The header a chat client that cannot add a body field sends its filter in:
/// `X-Rhizome-Filter: type=report; source=*.pdf`.
pub const FILTER_HEADER: &str = "x-rhizome-filter";

/// A chat request's document filter: the body's `filter` list and the
/// [`FILTER_HEADER`] (a line of filters, [`rhizome_core::filter::split_list`]), together.
pub fn filter(body: Option<&[String]>, headers: &axum::http::HeaderMap) -> ApiResult<rhizome_core::DocFilter> {
    let mut specs: Vec<String> = body.unwrap_or_default().to_vec();
    for h in headers.get_all(FILTER_HEADER) {
        let text = h
            .to_str()
            .map_err(|_| ApiError::bad(FILTER_HEADER, "is not text", "write filters as KEY=VALUE separated by ;"))?;
        specs.extend(rhizome_core::filter::split_list(text));
    }
    Ok(rhizome_core::DocFilter::parse(&specs)?)
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

    #[test]
    fn messages_with_an_unknown_role_or_content_are_refused_by_name() {
        let text = Value::from("Who won?");
        let parts = serde_json::json!([{"type": "text", "text": "Who"}, {"type": "image_url"}, {"type": "text", "text": "won?"}]);
        let ok = messages([("system", &text), ("tool", &text), ("user", &parts)]).unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[1].content, "Who\nwon?");
        let e = messages([("user", &text), ("hacker", &text)]).unwrap_err();
        assert!(e.body.error.contains("messages[1].role: unknown role \"hacker\""), "{}", e.body.error);
        for bad in [Value::from(7), serde_json::json!({"text": "x"}), serde_json::json!(["x"]), Value::from(true)] {
            let e = messages([("user", &bad)]).unwrap_err();
            assert!(e.body.error.contains("messages[0].content: is neither text"), "{}", e.body.error);
        }
        let long = "r".repeat(10_000);
        let e = messages([(long.as_str(), &text)]).unwrap_err();
        assert!(e.body.error.len() < 200, "{}", e.body.error.len());
    }
}
