//! The graph for viewers (entity search, neighbourhoods, one entity, communities), stats
//! and health.

use axum::extract::State;
use axum::Json;
use rhizome_core::Stats;
use rhizome_engine::{CommunityWithReport, EntityDetail, GraphNode, Subgraph};

use crate::error::{ApiError, ApiPath, ApiQuery, ApiResult, ErrorBody};
use crate::types::*;
use crate::{blocking, AppState};

fn at_most(field: &str, value: usize, max: usize) -> ApiResult<usize> {
    if value > max {
        return Err(ApiError::bad(field, format!("{value} is more than {max}"), format!("ask for at most {max}")));
    }
    Ok(value)
}

fn require_index(state: &AppState) -> ApiResult<()> {
    if state.engine.exists() {
        Ok(())
    } else {
        Err(ApiError::empty_index())
    }
}

/// Entities whose name, or a word of it, starts with `q`: exact names first, then by degree.
#[utoipa::path(get, path = "/graph/entities", tag = "graph", params(EntitiesQuery),
    responses((status = 200, body = Vec<GraphNode>), (status = 400, body = ErrorBody)))]
pub async fn entities(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<EntitiesQuery>,
) -> ApiResult<Json<Vec<GraphNode>>> {
    let limit = at_most("limit", q.limit.unwrap_or(20), 200)?;
    require_index(&state)?;
    let nodes = blocking(&state, move |e| e.search_entities(&q.q, limit)).await?;
    Ok(Json(nodes))
}

/// The entities within `depth` hops of one entity, with the edges among them.
#[utoipa::path(get, path = "/graph/neighbourhood", tag = "graph", params(NeighbourhoodQuery),
    responses((status = 200, body = Subgraph), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn neighbourhood(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<NeighbourhoodQuery>,
) -> ApiResult<Json<Subgraph>> {
    let depth = at_most("depth", q.depth.unwrap_or(1), 4)?;
    let max_nodes = at_most("max_nodes", q.max_nodes.unwrap_or(50), 5000)?;
    if q.entity.trim().is_empty() {
        return Err(ApiError::bad(
            "entity",
            "is empty",
            "give an entity id or name (GET /graph/entities?q=... finds one)",
        ));
    }
    require_index(&state)?;
    let g = blocking(&state, move |e| e.neighbourhood(&q.entity, depth, max_nodes)).await?;
    Ok(Json(g))
}

/// One entity: description, aliases, the chunks that mention it, its communities.
#[utoipa::path(get, path = "/graph/entities/{id}", tag = "graph", params(("id" = String, Path), EntityQuery),
    responses((status = 200, body = EntityDetail), (status = 404, body = ErrorBody)))]
pub async fn entity(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<EntityQuery>,
) -> ApiResult<Json<EntityDetail>> {
    let max = at_most("max_mentions", q.max_mentions.unwrap_or(10), 100)?;
    require_index(&state)?;
    let d = blocking(&state, move |e| e.entity_detail(&id, max)).await?;
    Ok(Json(d))
}

/// Communities (at `level`, or all) with their reports.
#[utoipa::path(get, path = "/communities", tag = "graph", params(CommunitiesQuery),
    responses((status = 200, body = Vec<CommunityWithReport>)))]
pub async fn communities(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<CommunitiesQuery>,
) -> ApiResult<Json<Vec<CommunityWithReport>>> {
    if !state.engine.exists() {
        return Ok(Json(vec![]));
    }
    let list = blocking(&state, move |e| e.communities_with_reports(q.level)).await?;
    Ok(Json(list))
}

/// Nodes per label and edges per type, as `rhizome stats --json`.
#[utoipa::path(get, path = "/stats", tag = "index", responses((status = 200, body = Stats)))]
pub async fn stats(State(state): State<AppState>) -> ApiResult<Json<Stats>> {
    if !state.engine.exists() {
        return Ok(Json(Stats::default()));
    }
    let s = blocking(&state, |e| e.stats()).await?;
    Ok(Json(s))
}

/// Liveness, with the number of documents indexed. Needs no key.
#[utoipa::path(get, path = "/health", tag = "index", responses((status = 200, body = Health)))]
pub async fn health(State(state): State<AppState>) -> ApiResult<Json<Health>> {
    let documents = if state.engine.exists() { blocking(&state, |e| e.documents(None, 0, 0)).await?.total } else { 0 };
    Ok(Json(Health {
        status: "ok".into(),
        documents,
        version: env!("CARGO_PKG_VERSION").into(),
        key_required: state.keys.required(),
    }))
}
