//! `POST /query`: one answer with its evidence, as JSON or as server-sent events.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use rhizome_core::llm::{ChatMessage, Role};
use rhizome_engine::{Engine, Method, MethodInfo, QueryOutcome, QueryRequest};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::error::{ApiError, ApiJson, ApiResult, ErrorBody};
use crate::types::*;
use crate::AppState;

/// Every retrieval method with the settings it reads and their values here: what a
/// method picker shows.
#[utoipa::path(get, path = "/methods", tag = "query", responses((status = 200, body = Vec<MethodInfo>)))]
pub async fn methods(State(state): State<AppState>) -> Json<Vec<MethodInfo>> {
    Json(state.engine.methods())
}

/// A method name as the CLI spells it; `field` names where it came from.
pub fn parse_method(name: &str, field: &str) -> ApiResult<Method> {
    name.parse::<Method>().map_err(|e| ApiError::bad(field, e, "use one of the names listed"))
}

fn role(r: &str, field: &str) -> ApiResult<Role> {
    match r.trim().to_lowercase().as_str() {
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        "system" => Ok(Role::System),
        _ => Err(ApiError::bad(
            field,
            format!("role {} is not user, assistant or system", crate::chat::quote(r)),
            "fix the role",
        )),
    }
}

/// `params` values as settings strings, each named in errors.
fn settings(params: Option<serde_json::Map<String, Value>>) -> ApiResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (k, v) in params.unwrap_or_default() {
        let name = format!("params.{}", rhizome_core::text::clip(&k, 80));
        let s = match v {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => {
                return Err(ApiError::bad(
                    &name,
                    format!("{} is not a number, string or boolean", crate::chat::shorten(&other.to_string())),
                    "give each setting a plain value, e.g. {\"hippo.damping\": 0.5}",
                ))
            }
        };
        if !k.contains('.') {
            return Err(ApiError::bad(
                &name,
                "is not a setting name",
                "name settings section.key, e.g. retrieval.top_k",
            ));
        }
        out.push((k, s));
    }
    Ok(out)
}

/// The engine request of a body, checked (question, method, params) before anything runs.
pub fn request(engine: &Engine, body: QueryBody) -> ApiResult<QueryRequest> {
    let method = parse_method(body.method.as_deref().unwrap_or("auto"), "method")?;
    let mut req = QueryRequest::new(&body.question, method);
    req.top_k = body.top_k;
    if body.top_k == Some(0) {
        return Err(ApiError::bad("top_k", "must be at least 1", "ask for 1 or more contexts"));
    }
    req.settings = settings(body.params)?;
    req.filter = rhizome_core::DocFilter::parse(&body.filter.unwrap_or_default())?;
    for (i, m) in body.history.unwrap_or_default().into_iter().enumerate() {
        req.history.push(ChatMessage { role: role(&m.role, &format!("history[{i}].role"))?, content: m.content });
    }
    engine.check_query(&req)?;
    Ok(req)
}

/// What a streamed answer sends: pieces of the answer, then the outcome.
pub enum Piece {
    Token(String),
    Done(Box<ApiResult<QueryOutcome>>),
}

/// Run `req` on a blocking thread, sending the answer's tokens as the LLM writes them
/// and then the outcome. Offline (or when the method wrote its answer itself), the whole
/// answer is sent as one piece before the outcome.
pub fn run_streaming(engine: Arc<Engine>, req: QueryRequest) -> mpsc::UnboundedReceiver<Piece> {
    let (tx, rx) = mpsc::unbounded_channel();
    let span = tracing::Span::current();
    let handle = tokio::task::spawn_blocking({
        let tx = tx.clone();
        move || {
            let _request = span.enter();
            let streamed = Arc::new(AtomicBool::new(false));
            let sink = {
                let (streamed, tx) = (streamed.clone(), tx.clone());
                move |piece: &str| {
                    streamed.store(true, Ordering::Relaxed);
                    let _ = tx.send(Piece::Token(piece.to_string()));
                }
            };
            let out = engine.query(&req, Some(&sink)).map_err(ApiError::from);
            if let Ok(o) = &out {
                if !streamed.load(Ordering::Relaxed) {
                    let _ = tx.send(Piece::Token(o.answer.clone()));
                }
            }
            let _ = tx.send(Piece::Done(Box::new(out)));
        }
    });
    // A panic in the engine still ends the stream, with an error.
    tokio::spawn(async move {
        if let Err(e) = handle.await {
            let _ = tx.send(Piece::Done(Box::new(Err(ApiError::join(e)))));
        }
    });
    rx
}

/// Answer a question from the index. With `stream: true`, server-sent events: `token`
/// (`{text}`) as the answer is written, then `done` with the whole response (or `error`
/// with `{error, hint}`).
#[utoipa::path(post, path = "/query", tag = "query", request_body = QueryBody,
    responses(
        (status = 200, description = "the answer (JSON), or with stream: true an event stream of token, done and error events",
            content((QueryOutcome = "application/json"), (TokenEvent = "text/event-stream"))),
        (status = 400, description = "bad input, naming the field or parameter", body = ErrorBody),
        (status = 404, description = "nothing indexed yet", body = ErrorBody),
    ))]
pub async fn query(State(state): State<AppState>, ApiJson(body): ApiJson<QueryBody>) -> ApiResult<Response> {
    let stream = body.stream.unwrap_or(false);
    let req = request(&state.engine, body)?;
    if !state.engine.exists() {
        return Err(ApiError::empty_index());
    }
    if !stream {
        let out = crate::blocking(&state, move |e| e.query(&req, None)).await?;
        return Ok(Json(out).into_response());
    }
    let rx = run_streaming(state.engine.clone(), req);
    let events = futures_util::stream::unfold((rx, false), |(mut rx, ended)| async move {
        if ended {
            return None;
        }
        let event = match rx.recv().await? {
            Piece::Token(text) => (Event::default().event("token").json_data(TokenEvent { text }), false),
            Piece::Done(out) => match *out {
                Ok(r) => (Event::default().event("done").json_data(r), true),
                Err(e) => (Event::default().event("error").json_data(e.body), true),
            },
        };
        Some((Ok::<_, Infallible>(event.0.unwrap_or_default()), (rx, event.1)))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()).into_response())
}
