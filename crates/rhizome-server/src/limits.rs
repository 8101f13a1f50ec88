//! Request body limits. Uploads may be as large as `--max-upload-mb`; a question or a chat
//! request at most [`JSON_BODY_MAX`], since parsed JSON can take many times the room of its
//! text (`[0,0,...]` is 16x as `serde_json::Value`s) and no question needs more. A body
//! whose announced length is over the limit is refused with 413 at once, before any of it
//! is read; the rest of it is read and dropped in the background (up to a bound), so that
//! the client, still sending, reads the answer instead of a reset connection.

use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use crate::error::ApiError;
use crate::AppState;

/// The largest body of `POST /query` and the chat endpoints: 1 MiB, about 250,000 tokens
/// of question and history, more than a model's context holds.
pub const JSON_BODY_MAX: usize = 1 << 20;

/// Paths whose body is a question or a chat request.
pub const JSON_PATHS: &[&str] = &["/query", "/v1/chat/completions", "/api/chat"];

/// A refused body is read and dropped up to this many bytes, for this long at most.
const DRAIN_MAX_BYTES: u64 = 1 << 30;
const DRAIN_MAX_TIME: Duration = Duration::from_secs(30);

/// The body limit of a path.
pub fn limit_of(path: &str, max_body_bytes: usize) -> usize {
    if JSON_PATHS.contains(&path) {
        JSON_BODY_MAX.min(max_body_bytes)
    } else {
        max_body_bytes
    }
}

fn too_large(len: u64, limit: usize, path: &str) -> ApiError {
    let (what, hint) = if JSON_PATHS.contains(&path) {
        ("body: the request", "send a shorter question or history (a chat request holds at most 1 MiB)")
    } else {
        (
            "files: the upload",
            "upload fewer or smaller files per request, or start the server with a larger --max-upload-mb",
        )
    };
    let limit = if limit >= 1 << 20 { format!("{} MiB", limit >> 20) } else { format!("{limit} bytes") };
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("{what} is {len} bytes, more than the {limit} the server accepts"),
        hint,
    )
}

/// The middleware: 413 at once for a body announced over the path's limit.
pub async fn refuse_announced_oversize(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let limit = limit_of(req.uri().path(), state.max_body_bytes);
    let announced = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    let Some(len) = announced.filter(|&n| n > limit as u64) else { return next.run(req).await };
    let mut response = too_large(len, limit, req.uri().path()).into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    // A client waiting for 100 Continue sends nothing more: no body to read.
    if !req.headers().contains_key(header::EXPECT) {
        let mut body = req.into_body().into_data_stream();
        tokio::spawn(async move {
            let (t, mut read) = (Instant::now(), 0u64);
            while read < len.min(DRAIN_MAX_BYTES) && t.elapsed() < DRAIN_MAX_TIME {
                match tokio::time::timeout(DRAIN_MAX_TIME, body.next()).await {
                    Ok(Some(Ok(bytes))) => read += bytes.len() as u64,
                    _ => break,
                }
            }
        });
    }
    response
}
