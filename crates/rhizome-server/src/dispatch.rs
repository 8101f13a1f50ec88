//! Which workspace a request is for, whether its key may make it, and handing it to that
//! workspace's routes. A request names its workspace by its path (`/w/NAME/...`), or,
//! for clients that cannot change paths, by the header `X-Rhizome-Workspace: NAME`, or, for
//! chat clients that can only pick a model, by the model name (`NAME/rhizome-local`);
//! a request that names none is for `default`, the main index. The model lists of the
//! OpenAI and Ollama routes outside any workspace show every workspace the key reaches
//! times every method.
//!
//! Every request but the public pages goes through [`crate::auth`] here, once, with the
//! workspace it is for: the workspace's own routes never see a request of another's.

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::sync::Arc;
use tower::ServiceExt;

use crate::auth::{self, ApiKey};
use crate::error::ApiError;
use crate::limits::JSON_BODY_MAX;
use crate::workspaces::Registry;
use rhizome_store::DEFAULT_WORKSPACE;

/// The header naming a request's workspace.
pub const WORKSPACE_HEADER: &str = "x-rhizome-workspace";

/// The workspace a request was served by (a request extension, for logs and metrics).
#[derive(Debug, Clone)]
pub struct WorkspaceName(pub Arc<str>);

/// Chat routes whose model may name a workspace.
const CHAT: &[&str] = &["/v1/chat/completions", "/api/chat"];
/// Model lists, which show workspace × method outside a workspace.
const MODEL_LISTS: &[&str] = &["/v1/models", "/api/tags"];

pub(crate) async fn dispatch(State(reg): State<Arc<Registry>>, req: Request) -> Response {
    match route(&reg, req).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

/// The workspace a path names, and the path within it.
fn split_path(path: &str) -> Option<(&str, String)> {
    let after = path.strip_prefix("/w/")?;
    Some(match after.split_once('/') {
        Some((name, rest)) => (name, format!("/{rest}")),
        None => (after, "/".to_string()),
    })
}

fn with_path(uri: &Uri, path: &str) -> Result<Uri, ApiError> {
    let pq = match uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    };
    pq.parse().map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "the request's path is not valid", "check the URL"))
}

async fn route(reg: &Arc<Registry>, req: Request) -> Result<Response, ApiError> {
    let (mut parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let (mut name, rest, mut named) = match split_path(&path) {
        Some((n, r)) => (n.to_string(), r, true),
        None => match parts.headers.get(WORKSPACE_HEADER) {
            Some(h) => {
                let n = h.to_str().map(str::trim).unwrap_or("").to_string();
                (n, path.clone(), true)
            }
            None => (DEFAULT_WORKSPACE.to_string(), path.clone(), false),
        },
    };
    if auth::public(&parts.method, &rest, named) {
        // The same for every workspace: served without opening one.
        if rest != "/health" {
            parts.uri = with_path(&parts.uri, &rest)?;
            return Ok(crate::static_router().oneshot(Request::from_parts(parts, body)).await.into_response());
        }
    }
    let mut body = body;
    // A chat request outside any workspace may name one in its model.
    if !named && parts.method == Method::POST && CHAT.contains(&rest.as_str()) {
        let bytes = to_bytes(body, JSON_BODY_MAX).await.map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body: the request is larger than the 1 MiB a chat request may hold",
                "send a shorter history",
            )
        })?;
        let (ws, rewritten) = model_workspace(&bytes);
        if let Some(ws) = ws {
            name = ws;
            named = true;
        }
        body = Body::from(rewritten.unwrap_or(bytes.to_vec()));
        parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    }
    let public = auth::public(&parts.method, &rest, named);
    let key = match reg.keys.required() && !public {
        true => match auth::identify(&reg.keys, &parts.headers) {
            Ok(k) => Some(k),
            Err(e) => return Err(drained(body, e).await),
        },
        false => None,
    };
    if !named && parts.method == Method::GET && MODEL_LISTS.contains(&rest.as_str()) {
        return model_list(reg, key.as_ref(), parts, body, &rest).await;
    }
    if let Some(k) = &key {
        if let Err(e) = auth::allow(k, &name, &parts.method, &rest) {
            return Err(drained(body, e).await);
        }
        #[cfg(feature = "mcp")]
        if k.read_only() {
            parts.extensions.insert(rhizome_mcp::ReadOnlyKey);
        }
        parts.extensions.insert(auth::Caller { key: k.clone() });
    }
    let ws = match reg.get(&name).await {
        Ok(w) => w,
        Err(e) => return Err(drained(body, e).await),
    };
    parts.uri = with_path(&parts.uri, &rest)?;
    parts.extensions.insert(WorkspaceName(ws.state.workspace.clone()));
    let router = ws.router.clone();
    drop(ws);
    let mut response = router.oneshot(Request::from_parts(parts, body)).await.into_response();
    // For the layers outside (logs, metrics): which workspace answered.
    response.extensions_mut().insert(WorkspaceName(Arc::from(name.as_str())));
    if named {
        if let Ok(v) = HeaderValue::from_str(&name) {
            response.headers_mut().insert(WORKSPACE_HEADER, v);
        }
    }
    Ok(response)
}

/// A refusal, after reading what the client sends of a small body (up to 1 MiB, 2 s), so
/// that the client reads the answer rather than a connection reset while it writes.
async fn drained(body: Body, e: ApiError) -> ApiError {
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), to_bytes(body, 1 << 20)).await;
    e
}

/// The workspace a chat request's model names (`NAME/model`), and the body with the
/// model without it; (None, None) when it names none (or the body is not JSON: the
/// route answers that).
fn model_workspace(bytes: &[u8]) -> (Option<String>, Option<Vec<u8>>) {
    let Ok(mut v) = serde_json::from_slice::<Value>(bytes) else { return (None, None) };
    let Some(model) = v.get("model").and_then(Value::as_str) else { return (None, None) };
    let Some((ws, m)) = model.split_once('/') else { return (None, None) };
    let (ws, m) = (ws.trim().to_string(), m.to_string());
    v["model"] = Value::String(m);
    (Some(ws), serde_json::to_vec(&v).ok())
}

/// A model list outside any workspace: the first reachable workspace's list, then the
/// same models of every other workspace the key reaches, named `NAME/model`.
async fn model_list(
    reg: &Arc<Registry>,
    key: Option<&ApiKey>,
    mut parts: axum::http::request::Parts,
    body: Body,
    rest: &str,
) -> Result<Response, ApiError> {
    let r = reg.clone();
    let names = tokio::task::spawn_blocking(move || r.names()).await.map_err(ApiError::join)??;
    let names: Vec<String> = names.into_iter().filter(|n| key.is_none_or(|k| k.reaches(n))).collect();
    let Some(first) = names.first() else {
        if let Some(k) = key {
            tracing::warn!(key = %k.name, "refused: the key reaches no workspace");
        }
        return Err(crate::workspaces::unknown(DEFAULT_WORKSPACE));
    };
    let ws = reg.get(first).await?;
    parts.uri = with_path(&parts.uri, rest)?;
    let response = ws.router.clone().oneshot(Request::from_parts(parts, body)).await.into_response();
    if !response.status().is_success() {
        return Ok(response);
    }
    let bytes = to_bytes(response.into_body(), 4 << 20).await.map_err(|e| ApiError::internal(e.to_string()))?;
    let mut list: Value = serde_json::from_slice(&bytes).map_err(|e| ApiError::internal(e.to_string()))?;
    let (field, name_keys): (&str, &[&str]) =
        if rest == "/v1/models" { ("data", &["id"]) } else { ("models", &["name", "model"]) };
    let Some(Value::Array(models)) = list.get(field).cloned() else {
        return Ok(axum::Json(list).into_response());
    };
    let mut all = Vec::new();
    for n in &names {
        for m in &models {
            let mut m = m.clone();
            if n != DEFAULT_WORKSPACE {
                for k in name_keys {
                    if let Some(s) = m.get(*k).and_then(Value::as_str) {
                        m[*k] = Value::String(format!("{n}/{s}"));
                    }
                }
            }
            all.push(m);
        }
    }
    list[field] = Value::Array(all);
    Ok(axum::Json(list).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_models_name_workspaces() {
        assert_eq!(split_path("/w/team-a/query"), Some(("team-a", "/query".to_string())));
        assert_eq!(split_path("/w/team-a"), Some(("team-a", "/".to_string())));
        assert_eq!(split_path("/w/team-a/"), Some(("team-a", "/".to_string())));
        assert_eq!(split_path("/query"), None);
        let (ws, body) = model_workspace(br#"{"model":"team-a/rhizome-local","messages":[]}"#);
        assert_eq!(ws.as_deref(), Some("team-a"));
        let v: Value = serde_json::from_slice(&body.unwrap()).unwrap();
        assert_eq!(v["model"], "rhizome-local");
        assert_eq!(model_workspace(br#"{"model":"rhizome"}"#), (None, None));
        assert_eq!(model_workspace(b"not json"), (None, None));
    }
}
