//! Ollama-compatible chat: `POST /api/chat` (NDJSON stream by default, as Ollama does;
//! one JSON object with `stream: false`), `GET /api/tags` and `GET /api/version`, so that
//! Ollama clients and Open WebUI's Ollama connection can talk to the index.

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::chat::{self, now_secs};
use crate::error::{AnyJson, ApiError, ApiResult, ErrorBody};
use crate::routes_query::{run_streaming, Piece};
use crate::AppState;

#[derive(Debug, Deserialize, ToSchema)]
pub struct OlMessage {
    pub role: String,
    #[serde(default)]
    #[schema(value_type = String)]
    pub content: Value,
}

/// The fields read; others (options, format, keep_alive, ...) are accepted and ignored.
#[derive(Debug, Deserialize, ToSchema)]
pub struct OlChatRequest {
    /// `rhizome` (auto) or `rhizome-<method>`, with or without `:latest`.
    pub model: Option<String>,
    pub messages: Vec<OlMessage>,
    /// Default true: one JSON object per line as the answer is written.
    pub stream: Option<bool>,
    /// Rhizome's own: ask only some documents (`["type=contract", "source=*.pdf"]`), as
    /// `/query`'s `filter`.
    pub filter: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OlReply {
    pub role: String,
    pub content: String,
}

/// One line of the stream, or the whole reply with `stream: false`.
#[derive(Debug, Serialize, ToSchema)]
pub struct OlChatChunk {
    pub model: String,
    /// RFC 3339.
    pub created_at: String,
    pub message: OlReply,
    pub done: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_duration: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OlModelDetails {
    pub format: String,
    pub family: String,
    pub parameter_size: String,
    pub quantization_level: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OlModel {
    pub name: String,
    pub model: String,
    pub modified_at: String,
    pub size: u64,
    pub digest: String,
    pub details: OlModelDetails,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OlTags {
    pub models: Vec<OlModel>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OlVersion {
    pub version: String,
}

/// `secs` since the Unix epoch as RFC 3339 UTC (civil date from days, H. Hinnant).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

fn line(model: &str, content: String, done: bool, started: std::time::Instant) -> OlChatChunk {
    OlChatChunk {
        model: model.to_string(),
        created_at: rfc3339(now_secs()),
        message: OlReply { role: "assistant".into(), content },
        done,
        done_reason: done.then(|| "stop".to_string()),
        total_duration: done.then(|| started.elapsed().as_nanos() as u64),
    }
}

fn ndjson<T: Serialize>(v: &T) -> Bytes {
    let mut s = serde_json::to_string(v).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    Bytes::from(s)
}

/// Ollama-compatible chat over the index: the last user message is the question, the
/// earlier messages its history; the reply cites its sources.
#[utoipa::path(post, path = "/api/chat", tag = "chat", request_body = OlChatRequest,
    params(("X-Rhizome-Filter" = Option<String>, Header,
        description = "ask only some documents: `type=report; source=*.pdf` (as the body's `filter`)")),
    responses(
        (status = 200, description = "one JSON object per line (application/x-ndjson), or one object with stream: false",
            content((OlChatChunk = "application/x-ndjson"), (OlChatChunk = "application/json"))),
        (status = 400, body = ErrorBody), (status = 404, description = "unknown model", body = ErrorBody),
    ))]
pub async fn chat(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    AnyJson(body): AnyJson<OlChatRequest>,
) -> ApiResult<Response> {
    let model = body.model.clone().unwrap_or_else(|| "rhizome".into());
    let msgs = chat::messages(body.messages.iter().map(|m| (m.role.as_str(), &m.content)))?;
    let mut req = chat::request(&state.engine, &model, msgs)?;
    req.filter = chat::filter(body.filter.as_deref(), &headers)?;
    if !state.engine.exists() {
        return Err(ApiError::empty_index());
    }
    let started = std::time::Instant::now();
    if !body.stream.unwrap_or(true) {
        let out = crate::blocking(&state, move |e| e.query(&req, None)).await?;
        return Ok(Json(line(&model, chat::reply(&out), true, started)).into_response());
    }
    let rx = run_streaming(state.engine.clone(), req);
    let stream = futures_util::stream::unfold((rx, Vec::<Bytes>::new(), false), move |(mut rx, mut queued, done)| {
        let model = model.clone();
        async move {
            if !queued.is_empty() {
                let b = queued.remove(0);
                return Some((Ok::<_, Infallible>(b), (rx, queued, done)));
            }
            if done {
                return None;
            }
            match rx.recv().await? {
                Piece::Token(t) => Some((Ok(ndjson(&line(&model, t, false, started))), (rx, queued, false))),
                Piece::Done(out) => {
                    match *out {
                        Ok(o) => {
                            let s = chat::sources(&o);
                            if !s.is_empty() {
                                queued.push(ndjson(&line(&model, s, false, started)));
                            }
                            queued.push(ndjson(&line(&model, String::new(), true, started)));
                        }
                        // Ollama streams an error as a line `{"error": ...}`.
                        Err(e) => queued.push(ndjson(&e.body)),
                    }
                    let b = queued.remove(0);
                    Some((Ok(b), (rx, queued, true)))
                }
            }
        }
    });
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], Body::from_stream(stream)).into_response())
}

/// The models, as Ollama lists them.
#[utoipa::path(get, path = "/api/tags", tag = "chat", responses((status = 200, body = OlTags)))]
pub async fn tags() -> Json<OlTags> {
    let at = rfc3339(now_secs());
    Json(OlTags {
        models: chat::models()
            .into_iter()
            .map(|(name, _)| OlModel {
                name: format!("{name}:latest"),
                model: format!("{name}:latest"),
                modified_at: at.clone(),
                size: 0,
                digest: format!("{:064x}", name.bytes().fold(0u128, |h, b| h.wrapping_mul(31).wrapping_add(b as u128))),
                details: OlModelDetails {
                    format: "rhizome".into(),
                    family: "rhizome".into(),
                    parameter_size: String::new(),
                    quantization_level: String::new(),
                },
            })
            .collect(),
    })
}

/// The version, as Ollama answers it (clients check the server is there).
#[utoipa::path(get, path = "/api/version", tag = "chat", responses((status = 200, body = OlVersion)))]
pub async fn version() -> Json<OlVersion> {
    Json(OlVersion { version: env!("CARGO_PKG_VERSION").into() })
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_709_251_199), "2024-02-29T23:59:59Z");
    }
}
