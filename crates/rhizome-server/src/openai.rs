//! OpenAI-compatible chat: `POST /v1/chat/completions` (with `stream`) and `GET /v1/models`,
//! so that OpenAI clients and chat frontends can talk to the index.

use std::convert::Infallible;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

use crate::chat::{self, now_secs};
use crate::error::{AnyJson, ApiError, ApiResult, ErrorBody};
use crate::routes_query::{run_streaming, Piece};
use crate::AppState;

#[derive(Debug, Deserialize, ToSchema)]
pub struct OaMessage {
    /// `system`, `developer`, `user` or `assistant`; `tool` and `function` messages are
    /// left out, any other role is refused.
    pub role: String,
    /// A string, or a list of parts of which the `text` ones are read.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub content: Value,
}

/// The fields read; others (temperature, max_tokens, ...) are accepted and ignored.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ChatCompletionRequest {
    /// `rhizome` (auto) or `rhizome-<method>`; default `rhizome`.
    pub model: Option<String>,
    pub messages: Vec<OaMessage>,
    #[serde(default)]
    pub stream: bool,
    /// Rhizome's own: ask only some documents (`["type=contract", "source=*.pdf"]`), as
    /// `/query`'s `filter`.
    #[serde(default)]
    pub filter: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OaReply {
    pub role: String,
    pub content: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OaChoice {
    pub index: u32,
    pub message: OaReply,
    pub finish_reason: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OaUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// A whole completion (`stream: false`). Streamed, each SSE `data:` is a
/// `chat.completion.chunk` with `choices[0].delta.content`, and the last is `[DONE]`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChatCompletion {
    pub id: String,
    pub object: String,
    pub created: u64,
    pub model: String,
    pub choices: Vec<OaChoice>,
    pub usage: OaUsage,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OaModel {
    pub id: String,
    pub object: String,
    pub created: u64,
    pub owned_by: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OaModelList {
    pub object: String,
    pub data: Vec<OaModel>,
}

fn chunk(id: &str, created: u64, model: &str, delta: Value, finish: Option<&str>) -> Event {
    Event::default().data(
        json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
        .to_string(),
    )
}

/// OpenAI-compatible chat completion over the index: the last user message is the
/// question, the earlier messages its history; the reply cites its sources.
#[utoipa::path(post, path = "/v1/chat/completions", tag = "chat", request_body = ChatCompletionRequest,
    params(("X-Rhizome-Filter" = Option<String>, Header,
        description = "ask only some documents: `type=report; source=*.pdf` (as the body's `filter`)")),
    responses(
        (status = 200, description = "a completion, or with stream: true server-sent chunks ending with [DONE]",
            content((ChatCompletion = "application/json"), (Object = "text/event-stream"))),
        (status = 400, body = ErrorBody), (status = 404, description = "unknown model", body = ErrorBody),
    ))]
pub async fn completions(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    AnyJson(body): AnyJson<ChatCompletionRequest>,
) -> ApiResult<Response> {
    let model = body.model.clone().unwrap_or_else(|| "rhizome".into());
    let mut req = chat::request(
        &state.engine,
        &model,
        chat::messages(body.messages.iter().map(|m| (m.role.as_str(), &m.content)))?,
    )?;
    req.filter = chat::filter(body.filter.as_deref(), &headers)?;
    if !state.engine.exists() {
        return Err(ApiError::empty_index());
    }
    let id = format!("chatcmpl-{}", state.next_id());
    let created = now_secs();
    if !body.stream {
        let out = crate::blocking(&state, move |e| e.query(&req, None)).await?;
        let reply = ChatCompletion {
            id,
            object: "chat.completion".into(),
            created,
            model,
            choices: vec![OaChoice {
                index: 0,
                message: OaReply { role: "assistant".into(), content: chat::reply(&out) },
                finish_reason: "stop".into(),
            }],
            usage: OaUsage { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        };
        return Ok(Json(reply).into_response());
    }
    let rx = run_streaming(state.engine.clone(), req);
    let first = chunk(&id, created, &model, json!({"role": "assistant", "content": ""}), None);
    // (receiver, events still to send before the next piece, finished)
    let stream = futures_util::stream::unfold((rx, vec![first], false), move |(mut rx, mut queued, done)| {
        let (id, model) = (id.clone(), model.clone());
        async move {
            loop {
                if !queued.is_empty() {
                    let e = queued.remove(0);
                    return Some((Ok::<_, Infallible>(e), (rx, queued, done)));
                }
                if done {
                    return None;
                }
                match rx.recv().await {
                    Some(Piece::Token(t)) => queued.push(chunk(&id, created, &model, json!({"content": t}), None)),
                    Some(Piece::Done(out)) => {
                        match *out {
                            Ok(o) => {
                                let s = chat::sources(&o);
                                if !s.is_empty() {
                                    queued.push(chunk(&id, created, &model, json!({"content": s}), None));
                                }
                                queued.push(chunk(&id, created, &model, json!({}), Some("stop")));
                            }
                            Err(e) => queued.push(Event::default().data(json!({"error": e.body}).to_string())),
                        }
                        queued.push(Event::default().data("[DONE]"));
                        return Some((Ok(queued.remove(0)), (rx, queued, true)));
                    }
                    None => return None,
                }
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response())
}

/// The models: `rhizome` (auto) and `rhizome-<method>` for every method.
#[utoipa::path(get, path = "/v1/models", tag = "chat", responses((status = 200, body = OaModelList)))]
pub async fn models() -> Json<OaModelList> {
    let created = now_secs();
    Json(OaModelList {
        object: "list".into(),
        data: chat::models()
            .into_iter()
            .map(|(id, _)| OaModel { id, object: "model".into(), created, owned_by: "rhizome".into() })
            .collect(),
    })
}
