//! `rhizome serve`: the HTTP API over one [`Engine`]. Glue only: every request is parsed,
//! handed to the engine (on a blocking thread, since engine calls compute) and answered as
//! JSON; the index, embedder, LLM and graph are loaded once and shared by concurrent
//! requests. Writes (uploads, deletions) go to one background worker through a queue, so
//! the index has one writer at a time and queries see the last committed state.
//!
//! Errors are one type ([`error::ApiError`]) answering `{error, hint}` with its status; a
//! panic in a handler answers 500 JSON. `GET /openapi.json` is generated from the handlers'
//! annotations and the request/response types; `GET /docs` renders it.

mod auth;
mod chat;
mod error;
mod jobs;
pub mod launch;
mod limits;
mod listen;
pub mod memory;
mod ollama;
mod openai;
mod openapi;
mod routes_documents;
mod routes_graph;
mod routes_query;
mod spool;
mod types;
mod ui;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::{middleware, Router};
use rhizome_core::{Error, Result};
use rhizome_engine::Engine;
use tokio::sync::mpsc;
use tower_http::catch_panic::CatchPanicLayer;

pub use auth::{check_bind, parse_keys, ApiKey};
pub use openapi::document as openapi_document;

use error::{ApiError, ApiResult};

/// How the server listens and what it accepts.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub addr: SocketAddr,
    /// API keys; none: loopback only, no key asked.
    pub keys: Vec<ApiKey>,
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
            max_body_bytes: 64 << 20,
            queue_len: 64,
            header_timeout: Duration::from_secs(30),
            spool: None,
        }
    }
}

/// What every handler shares.
#[derive(Clone)]
pub(crate) struct AppState {
    pub engine: Arc<Engine>,
    pub jobs: Arc<jobs::Jobs>,
    pub queue: mpsc::Sender<jobs::WriteJob>,
    pub keys: Arc<Vec<ApiKey>>,
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
    tokio::task::spawn_blocking(move || f(&engine)).await.map_err(ApiError::join)?.map_err(ApiError::from)
}

fn router(state: AppState, max_body_bytes: usize) -> Router {
    use routes_documents as docs;
    use routes_graph as graph;
    Router::new()
        .route("/", get(ui::index))
        .route("/ui/app.js", get(ui::app_js))
        .route("/ui/app.css", get(ui::app_css))
        .route("/methods", get(routes_query::methods))
        .route("/health", get(graph::health))
        .route("/stats", get(graph::stats))
        .route("/formats", get(docs::formats))
        .route("/documents", post(docs::upload).get(docs::list))
        .route("/documents/{id}", get(docs::get).delete(docs::delete))
        .route("/jobs", get(docs::jobs))
        .route("/jobs/{id}", get(docs::job))
        .route("/jobs/{id}/events", get(docs::job_events))
        .route("/query", post(routes_query::query).layer(DefaultBodyLimit::max(limits::JSON_BODY_MAX)))
        .route("/graph/entities", get(graph::entities))
        .route("/graph/entities/{id}", get(graph::entity))
        .route("/graph/neighbourhood", get(graph::neighbourhood))
        .route("/communities", get(graph::communities))
        .route("/v1/chat/completions", post(openai::completions).layer(DefaultBodyLimit::max(limits::JSON_BODY_MAX)))
        .route("/v1/models", get(openai::models))
        .route("/api/chat", post(ollama::chat).layer(DefaultBodyLimit::max(limits::JSON_BODY_MAX)))
        .route("/api/tags", get(ollama::tags))
        .route("/api/version", get(ollama::version))
        .route("/openapi.json", get(openapi::openapi_json))
        .route("/docs", get(openapi::docs_page))
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), limits::refuse_announced_oversize))
        .layer(middleware::from_fn_with_state(state.clone(), auth::require_key))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(CatchPanicLayer::custom(error::panic_response))
        .with_state(state)
}

/// Load what every query needs (index, embedder, LLM, graph) once, before listening.
fn warm(engine: &Engine) -> Result<()> {
    engine.llm()?;
    if engine.exists() {
        let store = engine.reader()?;
        engine.embedder(&*store)?;
        engine.graph().get(&*store)?;
    }
    Ok(())
}

/// A bound server, ready to run.
pub struct Server {
    listener: tokio::net::TcpListener,
    router: Router,
    header_timeout: Duration,
    worker: tokio::task::JoinHandle<()>,
    cancel: Arc<AtomicBool>,
}

impl Server {
    /// Check the options, load the engine's parts and listen on `opts.addr` (port 0: any
    /// free port, see [`Server::local_addr`]).
    pub async fn bind(engine: Arc<Engine>, opts: ServerOptions) -> Result<Server> {
        check_bind(&opts.addr, &opts.keys)?;
        let e = engine.clone();
        tokio::task::spawn_blocking(move || warm(&e))
            .await
            .map_err(|e| Error::Store(format!("loading the index failed: {e}")))??;
        let listener = tokio::net::TcpListener::bind(opts.addr)
            .await
            .map_err(|e| Error::Config(format!("cannot listen on {}: {e}", opts.addr)))?;
        let cancel = Arc::new(AtomicBool::new(false));
        let (queue, rx) = mpsc::channel(opts.queue_len.max(1));
        let worker = tokio::spawn(jobs::worker(engine.clone(), rx, cancel.clone()));
        let jobs = Arc::new(jobs::Jobs::new(opts.spool.map(spool::Spool::new)));
        // Jobs an earlier run accepted and did not finish go first.
        jobs::resume_pending(&jobs, &queue).await;
        let state = AppState {
            engine,
            jobs,
            queue,
            keys: Arc::new(opts.keys),
            max_body_bytes: opts.max_body_bytes,
            ids: Arc::new(AtomicU64::new(0)),
        };
        let header_timeout = opts.header_timeout;
        Ok(Server { listener, router: router(state, opts.max_body_bytes), header_timeout, worker, cancel })
    }

    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener.local_addr().map_err(|e| Error::Config(format!("the listening socket: {e}")))
    }

    /// Serve until `shutdown` completes; then stop taking connections, let the write job
    /// in progress stop at its next batch boundary (what it committed stays), fail the
    /// queued ones, and return when the worker is done.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<()> {
        let Server { listener, router, header_timeout, worker, cancel } = self;
        let flag = cancel.clone();
        let signal = async move {
            shutdown.await;
            flag.store(true, Ordering::Relaxed);
        };
        listen::serve(listener, router, header_timeout, signal).await;
        // Every sender is gone with the router: the worker ends after the job in progress.
        let _ = worker.await;
        Ok(())
    }
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
