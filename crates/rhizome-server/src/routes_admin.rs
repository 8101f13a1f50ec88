//! Workspaces and keys, outside any workspace: `GET/POST /workspaces`,
//! `DELETE /workspaces/{name}`, `GET/POST /keys`, `DELETE /keys/{name}`. Listing
//! workspaces needs any key (it shows the ones the key reaches); creating and deleting one
//! needs an admin key that reaches it; keys are managed with an admin key for every
//! workspace, in the key file the server was started with.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::keys::Role;
use crate::workspaces::Registry;

/// A workspace.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkspaceInfo {
    pub name: String,
    /// Whether it is loaded in this process now (an idle one is closed, and opened again
    /// by its next request).
    pub open: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WorkspaceList {
    pub workspaces: Vec<WorkspaceInfo>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWorkspace {
    /// 1 to 48 lowercase letters, digits and `-`.
    pub name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WorkspaceChange {
    pub name: String,
    /// `created`, `exists` or `deleted`.
    pub outcome: String,
}

/// The workspaces this key reaches (`default` is the main index).
#[utoipa::path(get, path = "/workspaces", tag = "workspaces", responses((status = 200, body = WorkspaceList), (status = 401, body = ErrorBody)))]
pub async fn list_workspaces(State(reg): State<Arc<Registry>>, headers: HeaderMap) -> ApiResult<Json<WorkspaceList>> {
    let key = if reg.keys.required() { Some(auth::identify(&reg.keys, &headers)?) } else { None };
    let r = reg.clone();
    let names = tokio::task::spawn_blocking(move || r.names()).await.map_err(ApiError::join)??;
    let open = reg.open_names();
    let workspaces = names
        .into_iter()
        .filter(|n| key.as_ref().is_none_or(|k| k.reaches(n)))
        .map(|n| WorkspaceInfo { open: open.contains(&n), name: n })
        .collect();
    Ok(Json(WorkspaceList { workspaces }))
}

/// Create a workspace: an empty index beside the main one (needs an admin key that
/// reaches the name).
#[utoipa::path(post, path = "/workspaces", tag = "workspaces", request_body = NewWorkspace,
    responses((status = 201, body = WorkspaceChange), (status = 200, body = WorkspaceChange, description = "it existed"),
        (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn create_workspace(
    State(reg): State<Arc<Registry>>,
    headers: HeaderMap,
    body: Result<Json<NewWorkspace>, axum::extract::rejection::JsonRejection>,
) -> ApiResult<(StatusCode, Json<WorkspaceChange>)> {
    let caller = auth::admin(&reg.keys, &headers, false, "creating a workspace")?;
    let Json(req) = body?;
    let name = req.name.trim().to_string();
    if let Some(k) = &caller {
        if !k.reaches(&name) {
            tracing::warn!(key = %k.name, workspace = %name, "refused: creating a workspace the key does not reach");
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("this key cannot create workspace {name:?}"),
                "use an admin key whose workspaces include it (or *)",
            ));
        }
    }
    let made = reg.create(&name).await?;
    let (status, outcome) = if made { (StatusCode::CREATED, "created") } else { (StatusCode::OK, "exists") };
    tracing::info!(workspace = %name, key = caller.as_ref().map_or("", |k| k.name.as_str()), outcome, "workspace");
    Ok((status, Json(WorkspaceChange { name, outcome: outcome.into() })))
}

/// Delete a workspace and everything in it (needs an admin key that reaches it).
#[utoipa::path(delete, path = "/workspaces/{name}", tag = "workspaces", params(("name" = String, Path)),
    responses((status = 200, body = WorkspaceChange), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn delete_workspace(
    State(reg): State<Arc<Registry>>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> ApiResult<Json<WorkspaceChange>> {
    let caller = auth::admin(&reg.keys, &headers, false, "deleting a workspace")?;
    if let Some(k) = &caller {
        if !k.reaches(&name) {
            return Err(crate::workspaces::unknown(&name));
        }
    }
    if name == rhizome_store::DEFAULT_WORKSPACE {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "workspace \"default\" is the main index: it cannot be deleted",
            "delete its documents instead",
        ));
    }
    reg.delete(&name).await?;
    tracing::info!(workspace = %name, key = caller.as_ref().map_or("", |k| k.name.as_str()), "workspace deleted");
    Ok(Json(WorkspaceChange { name, outcome: "deleted".into() }))
}

/// A key, as listed: never the key nor its digest.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyInfo {
    pub name: String,
    pub role: Role,
    pub workspaces: Vec<String>,
    /// `file` (the key file: revocable), `database` (the store's key table, shared by
    /// replicas: revocable) or `flag` (--api-key, RHIZOME_API_KEYS).
    pub source: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKey {
    pub name: String,
    pub role: Role,
    /// Workspace names, or `*` (the default) for every one.
    #[serde(default)]
    pub workspaces: Vec<String>,
}

/// A new key: shown this once, kept by the server only as its digest.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedKey {
    pub name: String,
    pub key: String,
    pub role: Role,
    pub workspaces: Vec<String>,
}

fn key_store(reg: &Registry) -> ApiResult<&crate::key_ring::KeyStore> {
    reg.keys.store().ok_or_else(|| {
        ApiError::new(
            StatusCode::CONFLICT,
            "this server keeps no key file: its keys are the --api-key flags",
            "start it with --keys-file FILE (or on a PostgreSQL store, whose key table replicas share) to create and revoke keys while it runs",
        )
    })
}

/// Every key (needs an admin key for every workspace).
#[utoipa::path(get, path = "/keys", tag = "keys", responses((status = 200, body = [KeyInfo]), (status = 403, body = ErrorBody)))]
pub async fn list_keys(State(reg): State<Arc<Registry>>, headers: HeaderMap) -> ApiResult<Json<Vec<KeyInfo>>> {
    auth::admin(&reg.keys, &headers, true, "listing keys")?;
    let ring = reg.keys.clone();
    let (source, stored) = tokio::task::spawn_blocking(move || -> rhizome_core::Result<_> {
        Ok(match ring.store() {
            Some(s) => (s.kind(), s.records()?.into_iter().map(|r| r.name).collect()),
            None => ("flag", Vec::<String>::new()),
        })
    })
    .await
    .map_err(ApiError::join)??;
    let keys = reg.keys.current()?;
    Ok(Json(
        keys.iter()
            .map(|k| KeyInfo {
                name: k.name.clone(),
                role: k.role,
                workspaces: k.workspaces.clone(),
                source: if stored.contains(&k.name) { source } else { "flag" }.into(),
            })
            .collect(),
    ))
}

/// Make a key in the key file or key table; it works at once on this server, and on
/// every server reading the same file or table (a replica reads the table every second).
#[utoipa::path(post, path = "/keys", tag = "keys", request_body = NewKey,
    responses((status = 201, body = CreatedKey), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn create_key(
    State(reg): State<Arc<Registry>>,
    headers: HeaderMap,
    body: Result<Json<NewKey>, axum::extract::rejection::JsonRejection>,
) -> ApiResult<(StatusCode, Json<CreatedKey>)> {
    let caller = auth::admin(&reg.keys, &headers, true, "creating a key")?;
    let Json(req) = body?;
    key_store(&reg)?;
    let (ring, name, role) = (reg.keys.clone(), req.name.clone(), req.role);
    let (key, made) = tokio::task::spawn_blocking(move || -> rhizome_core::Result<_> {
        let key = ring.add(&name, role, req.workspaces)?;
        let made =
            ring.store().map(|s| s.records()).transpose()?.unwrap_or_default().into_iter().find(|r| r.name == name);
        Ok((key, made))
    })
    .await
    .map_err(ApiError::join)??;
    tracing::info!(key = %req.name, by = caller.as_ref().map_or("", |k| k.name.as_str()), "key created");
    Ok((
        StatusCode::CREATED,
        Json(CreatedKey {
            name: req.name,
            key,
            role: req.role,
            workspaces: made.map(|r| r.workspaces).unwrap_or_default(),
        }),
    ))
}

/// Revoke a key of the key file or key table; this server refuses it from the next
/// request on, the other replicas reading the table within a second.
#[utoipa::path(delete, path = "/keys/{name}", tag = "keys", params(("name" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn revoke_key(
    State(reg): State<Arc<Registry>>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    let caller = auth::admin(&reg.keys, &headers, true, "revoking a key")?;
    let store = key_store(&reg)?.describe();
    let (ring, n) = (reg.keys.clone(), name.clone());
    let gone = tokio::task::spawn_blocking(move || ring.revoke(&n)).await.map_err(ApiError::join)??;
    if !gone {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("key {name:?}: no such key in {store}"),
            "GET /keys lists them; keys given with --api-key go with a restart without them",
        ));
    }
    tracing::info!(key = %name, by = caller.as_ref().map_or("", |k| k.name.as_str()), "key revoked");
    Ok(StatusCode::NO_CONTENT)
}

/// A method the admin routes do not take: 401 first for a request without a valid key,
/// as on every other route.
pub async fn method_not_allowed(State(reg): State<Arc<Registry>>, headers: HeaderMap) -> ApiError {
    if reg.keys.required() {
        if let Err(e) = auth::identify(&reg.keys, &headers) {
            return e;
        }
    }
    crate::error::method_not_allowed().await
}
