//! `rhizome serve`: the HTTP API over one [`Engine`]. Glue only: every request is parsed,
//! handed to the engine (on a blocking thread, since engine calls compute) and answered as
//! JSON; the index, embedder, LLM and graph are loaded once and shared by concurrent
//! requests. Writes (uploads, deletions) go to one background worker through a queue, so
//! the index has one writer at a time and queries see the last committed state.
//!
//! Errors are one type ([`error::ApiError`]) answering `{error, hint}` with its status; a
//! panic in a handler answers 500 JSON. `GET /openapi.json` is generated from the routes of
//! [`api`] (each handler's annotation) and the request/response types, the engine's
//! included; `GET /docs` renders it.

mod auth;
mod chat;
mod dispatch;
mod error;
mod jobs;
pub mod key_ring;
pub mod keys;
pub mod launch;
mod limits;
mod listen;
#[cfg(feature = "mcp")]
mod mcp;
pub mod memory;
mod ollama;
mod openai;
mod openapi;
mod pending;
mod routes_admin;
mod routes_documents;
mod routes_graph;
mod routes_query;
mod spool;
pub mod telemetry;
mod types;
mod ui;
mod workspaces;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::{middleware, Router};
use rhizome_core::{Error, Result};
use rhizome_engine::Engine;
use tokio::sync::mpsc;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa::OpenApi;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

pub use auth::{check_bind, parse_keys, ApiKey, Caller};
pub use dispatch::{WorkspaceName, WORKSPACE_HEADER};
pub use key_ring::{KeyRing, KeyStore, TABLE_REFRESH};
pub use keys::{KeyFile, Role};
pub use openapi::document as openapi_document;

use error::{ApiError, ApiResult};

/// How the server listens and what it accepts.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub addr: SocketAddr,
    /// API keys; none (and no key file): loopback only, no key asked.
    pub keys: Vec<ApiKey>,
    /// Keys with names, roles and workspaces: a key file, read again when it changes,
    /// or the store's key table, shared by replicas.
    pub key_store: Option<KeyStore>,
    /// A workspace without requests or jobs this long is closed (its memory released).
    pub workspace_idle: Duration,
    /// Largest request body (uploads included), in bytes.
    pub max_body_bytes: usize,
    /// Write jobs that may wait in the queue before uploads are refused with 503.
    pub queue_len: usize,
    /// A connection whose request head has not fully arrived this long after it was
    /// opened (or after its previous answer) is closed: slow or idle clients do not hold
    /// connections for ever.
    pub header_timeout: Duration,
    /// Where accepted uploads wait until their job ends, so that a job cut short by a
    /// crash runs again at the next start (see `spool.rs`); none: a temporary directory.
    pub spool: Option<std::path::PathBuf>,
}

impl ServerOptions {
    pub fn new(addr: SocketAddr) -> Self {
        ServerOptions {
            addr,
            keys: Vec::new(),
            key_store: None,
            workspace_idle: Duration::from_secs(600),
            max_body_bytes: 64 << 20,
            queue_len: 64,
            header_timeout: Duration::from_secs(30),
            spool: None,
        }
    }
}

/// What every handler of one workspace shares.
#[derive(Clone)]
pub(crate) struct AppState {
    pub engine: Arc<Engine>,
    pub jobs: Arc<jobs::Jobs>,
    pub queue: mpsc::Sender<jobs::WriteJob>,
    pub keys: Arc<KeyRing>,
    /// The workspace's name (`default`: the main index).
    pub workspace: Arc<str>,
    /// The request body limit (uploads included).
    pub max_body_bytes: usize,
    ids: Arc<AtomicU64>,
}

impl AppState {
    /// A number for response ids (chat completions).
    pub fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// Run an engine call on a blocking thread.
pub(crate) async fn blocking<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&Engine) -> Result<T> + Send + 'static,
) -> ApiResult<T> {
    let engine = state.engine.clone();
    // The request's span goes with the call, so that the engine's spans are its children.
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(|| f(&engine)))
        .await
        .map_err(ApiError::join)?
        .map_err(ApiError::from)
}

/// The routes of the API document, each registered with its OpenAPI entry: a route
/// added here is documented at `/openapi.json`. JSON-only POST routes take a smaller body
/// than uploads.
pub(crate) fn api() -> OpenApiRouter<AppState> {
    use routes_documents as docs;
    use routes_graph as graph;
    use routes_query as query;
    let json_body = || DefaultBodyLimit::max(limits::JSON_BODY_MAX);
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(query::methods))
        .routes(routes!(graph::health))
        .routes(routes!(graph::stats))
        .routes(routes!(docs::formats))
        .routes(routes!(docs::upload, docs::list))
        .routes(routes!(docs::get, docs::delete))
        .routes(routes!(docs::jobs))
        .routes(routes!(docs::job))
        .routes(routes!(docs::job_events))
        .routes(routes!(query::query).layer(json_body()))
        .routes(routes!(graph::entities))
        .routes(routes!(graph::entity))
        .routes(routes!(graph::neighbourhood))
        .routes(routes!(graph::communities))
        .routes(routes!(openai::completions).layer(json_body()))
        .routes(routes!(openai::models))
        .routes(routes!(ollama::chat).layer(json_body()))
        .routes(routes!(ollama::tags))
        .routes(routes!(ollama::version))
}

/// The routes outside any workspace: workspaces and keys, each registered with its
/// OpenAPI entry.
pub(crate) fn admin_api() -> OpenApiRouter<Arc<workspaces::Registry>> {
    use routes_admin as admin;
    let json_body = || DefaultBodyLimit::max(limits::JSON_BODY_MAX);
    OpenApiRouter::new()
        .routes(routes!(admin::list_workspaces, admin::create_workspace).layer(json_body()))
        .routes(routes!(admin::delete_workspace))
        .routes(routes!(admin::list_keys, admin::create_key).layer(json_body()))
        .routes(routes!(admin::revoke_key))
        .routes(routes!(telemetry::metrics::metrics))
}

/// The pages that are the same for every workspace and need no key: the web UI and the
/// API's own documentation (not part of the document).
fn pages<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(ui::index))
        .route("/ui/app.js", get(ui::app_js))
        .route("/ui/app.css", get(ui::app_css))
        .route("/openapi.json", get(openapi::openapi_json))
        .route("/docs", get(openapi::docs_page))
}

/// [`pages`] alone, for public requests served without opening a workspace.
pub(crate) fn static_router() -> Router {
    pages().fallback(error::not_found)
}

/// One workspace's routes (the API, `/mcp`, the web UI): what a request of that
/// workspace reaches once [`dispatch`] has checked its key.
pub(crate) fn workspace_router(state: AppState) -> Router {
    let (api, _) = api().split_for_parts();
    // The MCP endpoint speaks its own protocol (JSON-RPC), outside the API document.
    #[cfg(feature = "mcp")]
    let api = api.route_service("/mcp", mcp::service(&state));
    let max_body_bytes = state.max_body_bytes;
    api.merge(pages())
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), limits::refuse_announced_oversize))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(middleware::from_fn(telemetry::request::label_route))
        .with_state(state)
}

/// The whole server: the routes outside workspaces, then every other request handed to
/// its workspace.
fn router(registry: Arc<workspaces::Registry>) -> Router {
    let (admin, _) = admin_api().split_for_parts();
    admin
        .fallback(dispatch::dispatch)
        .method_not_allowed_fallback(routes_admin::method_not_allowed)
        .layer(CatchPanicLayer::custom(error::panic_response))
        .layer(middleware::from_fn(telemetry::request::observe))
        .with_state(registry)
}

/// Load what every query needs (index, embedder, LLM, and the graph up to
/// `retrieval.whole_graph_up_to` entities) once, before listening.
fn warm(engine: &Engine) -> Result<()> {
    engine.llm()?;
    if engine.exists() {
        let store = engine.reader()?;
        engine.embedder(&*store)?;
        engine.graph().whole(&*store, engine.config().retrieval.whole_graph_up_to)?;
    }
    Ok(())
}

/// A bound server, ready to run.
pub struct Server {
    listener: tokio::net::TcpListener,
    router: Router,
    header_timeout: Duration,
    registry: Arc<workspaces::Registry>,
    cancel: Arc<AtomicBool>,
}

impl Server {
    /// Check the options, load the engine's parts and listen on `opts.addr` (port 0: any
    /// free port, see [`Server::local_addr`]). `engine` is the main index, the workspace
    /// `default`; the other workspaces are opened beside it on demand.
    pub async fn bind(engine: Arc<Engine>, opts: ServerOptions) -> Result<Server> {
        let (flags, store) = (opts.keys, opts.key_store);
        let keys = tokio::task::spawn_blocking(move || KeyRing::new(flags, store))
            .await
            .map_err(|e| Error::Config(format!("reading the keys failed: {e}")))??;
        check_bind(&opts.addr, keys.required())?;
        let e = engine.clone();
        tokio::task::spawn_blocking(move || warm(&e))
            .await
            .map_err(|e| Error::Store(format!("loading the index failed: {e}")))??;
        let listener = tokio::net::TcpListener::bind(opts.addr)
            .await
            .map_err(|e| Error::Config(format!("cannot listen on {}: {e}", opts.addr)))?;
        let cancel = Arc::new(AtomicBool::new(false));
        let replica = format!(
            "{} pid {}, {}",
            host_name(),
            std::process::id(),
            listener.local_addr().map(|a| a.to_string()).unwrap_or_default()
        );
        let setup = workspaces::Setup {
            queue_len: opts.queue_len,
            replica,
            max_body_bytes: opts.max_body_bytes,
            spool: opts.spool,
            idle: opts.workspace_idle,
        };
        let registry = Arc::new(workspaces::Registry::new(engine, setup, keys, cancel.clone()));
        // The main index is always open; so is every workspace with unfinished uploads.
        registry.open_now(rhizome_store::DEFAULT_WORKSPACE).await?;
        registry.resume_all().await?;
        tokio::spawn(workspaces::sweep(Arc::downgrade(&registry)));
        let header_timeout = opts.header_timeout;
        Ok(Server { listener, router: router(registry.clone()), header_timeout, registry, cancel })
    }

    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener.local_addr().map_err(|e| Error::Config(format!("the listening socket: {e}")))
    }

    /// Serve until `shutdown` completes; then stop taking connections, let the write jobs
    /// in progress stop at their next batch boundary (what they committed stays), fail the
    /// queued ones, and return when the workers are done.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<()> {
        let Server { listener, router, header_timeout, registry, cancel } = self;
        let flag = cancel.clone();
        let signal = async move {
            shutdown.await;
            flag.store(true, Ordering::Relaxed);
        };
        listen::serve(listener, router, header_timeout, signal).await;
        // (The boards only: a workspace's state holds its queue, which must close.)
        let boards: Vec<_> = registry.open_workspaces().into_iter().filter_map(|(_, s)| s.jobs.shared()).collect();
        // Every sender goes with its workspace: each worker ends after the job in progress.
        for worker in registry.close_all() {
            let _ = worker.await;
        }
        // Uploads kept in a shared store and not finished: another replica may take them now.
        for (board, replica) in boards {
            let _ = tokio::task::spawn_blocking(move || board.release(&replica)).await;
        }
        Ok(())
    }
}

/// This machine's name, naming a replica in the job board.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

/// Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
