//! Workspaces: named indexes served side by side by one process, isolated from each
//! other. Each open workspace has everything a single-index server has, of its own: its
//! engine (graph, reader pool, caches), its write queue and worker, its jobs and their
//! spool, and its own copy of the API's routes ([`crate::workspace_router`]), the MCP
//! endpoint among them. A request reaches one workspace only ([`crate::dispatch`]), so
//! nothing one workspace holds can answer another's request.
//!
//! A workspace is opened on its first request and closed when idle (no request for
//! `idle`, no job queued or running): its memory goes with its engine. The main index is
//! the workspace `default`, always open. Where workspaces live is the store's business
//! ([`rhizome_store::workspace`]: a directory, a schema or a graph each).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::Router;
use rhizome_core::Result;
use rhizome_engine::Engine;
use rhizome_store::{StoreUrl, DEFAULT_WORKSPACE};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::ApiError;
use crate::key_ring::KeyRing;
use crate::{jobs, spool, AppState};

/// One open workspace.
pub(crate) struct Workspace {
    pub state: AppState,
    pub router: Router,
    /// Milliseconds after the registry's start of the last request.
    last_used: AtomicU64,
}

impl Workspace {
    /// Whether a write job is queued or running.
    fn busy(&self) -> bool {
        self.state.queue.capacity() < self.state.queue.max_capacity()
            || self.state.jobs.list().iter().any(|j| !j.finished())
    }
}

/// What a workspace is opened with.
pub(crate) struct Setup {
    pub queue_len: usize,
    /// This server, as the job board names it to other replicas.
    pub replica: String,
    pub max_body_bytes: usize,
    /// The main index's upload spool (none: temporary directories).
    pub spool: Option<PathBuf>,
    /// A workspace unused this long is closed.
    pub idle: Duration,
}

/// The open workspaces, and how to open the others.
pub(crate) struct Registry {
    base: StoreUrl,
    default: Arc<Engine>,
    setup: Setup,
    pub keys: Arc<KeyRing>,
    ids: Arc<AtomicU64>,
    cancel: Arc<AtomicBool>,
    open: Mutex<BTreeMap<String, Arc<Workspace>>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    start: Instant,
}

/// The answer for a workspace that does not exist, or that the caller's key does not
/// reach (the same answer, so that a name says nothing of other tenants).
pub(crate) fn unknown(name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("workspace {name:?}: no such workspace"),
        "GET /workspaces lists the workspaces your key reaches; an admin key creates one with POST /workspaces",
    )
}

impl Registry {
    pub fn new(default: Arc<Engine>, setup: Setup, keys: Arc<KeyRing>, cancel: Arc<AtomicBool>) -> Registry {
        Registry {
            base: default.url().clone(),
            default,
            setup,
            keys,
            ids: Arc::new(AtomicU64::new(0)),
            cancel,
            open: Mutex::default(),
            workers: Mutex::default(),
            start: Instant::now(),
        }
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// Where a workspace's uploads wait for their job.
    fn spool_of(&self, name: &str, url: &StoreUrl) -> Option<PathBuf> {
        if name == DEFAULT_WORKSPACE {
            return self.setup.spool.clone();
        }
        #[allow(unreachable_patterns)]
        match url {
            StoreUrl::Dir(d) => Some(d.join("uploads-pending")),
            _ => self
                .setup
                .spool
                .as_ref()
                .and_then(|s| s.parent())
                .map(|p| rhizome_store::workspace::workspaces_dir(p).join(name).join("uploads-pending")),
        }
    }

    /// Every workspace that exists, `default` first.
    pub fn names(&self) -> Result<Vec<String>> {
        let mut out = vec![DEFAULT_WORKSPACE.to_string()];
        out.extend(self.base.workspaces()?);
        Ok(out)
    }

    /// The open workspace `name`, opened now when it exists; 404 otherwise.
    pub async fn get(&self, name: &str) -> std::result::Result<Arc<Workspace>, ApiError> {
        if let Some(w) = self.open.lock().unwrap_or_else(|p| p.into_inner()).get(name) {
            w.last_used.store(self.now_ms(), Ordering::Relaxed);
            return Ok(w.clone());
        }
        if rhizome_store::workspace::check_name(name).is_err() {
            return Err(unknown(name));
        }
        let base = self.base.clone();
        let n = name.to_string();
        let exists = tokio::task::spawn_blocking(move || base.workspaces().map(|all| all.contains(&n)))
            .await
            .map_err(ApiError::join)??;
        if name != DEFAULT_WORKSPACE && !exists {
            return Err(unknown(name));
        }
        self.open_now(name).await.map_err(ApiError::from)
    }

    /// Open workspace `name` (which exists) unless it is open already.
    pub async fn open_now(&self, name: &str) -> Result<Arc<Workspace>> {
        let url = self.base.workspace(name)?;
        let engine = if name == DEFAULT_WORKSPACE {
            self.default.clone()
        } else {
            let no_wait = !self.default.waits_for_writers();
            let mut config = self.default.config().clone();
            // A read replica holds the same workspaces as the primary.
            if !config.store.read_url.trim().is_empty() {
                config.store.read_url = StoreUrl::parse(&config.store.read_url)?.workspace(name)?.to_url();
            }
            let e = crate::launch::engine_at(url.clone(), config, no_wait, "rhizome serve")?;
            // One embedder for every workspace of the same model.
            if let Some(shared) = self.default.loaded_embedder() {
                e.set_embedder(shared);
            }
            e
        };
        let spool = match self.spool_of(name, &url) {
            Some(root) => Some(spool::Spool::open(root).map_err(rhizome_core::Error::Config)?),
            None => None,
        };
        // Replicas over one database share its job board: ids and progress of every job.
        let e = engine.clone();
        let board = tokio::task::spawn_blocking(move || e.job_board())
            .await
            .map_err(|e| rhizome_core::Error::Store(format!("opening the job table failed: {e}")))??;
        let w = {
            let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(w) = open.get(name) {
                return Ok(w.clone());
            }
            let (queue, rx) = mpsc::channel(self.setup.queue_len.max(1));
            // Uploads kept in a shared store: as many as the queue holds, each of the largest size.
            let max_kept = (self.setup.queue_len.max(1) as u64).saturating_mul(self.setup.max_body_bytes as u64);
            let jobs = Arc::new(jobs::Jobs::new(spool, board, self.setup.replica.clone(), max_kept));
            let worker = tokio::spawn(jobs::worker(engine.clone(), jobs.clone(), rx, self.cancel.clone()));
            self.workers.lock().unwrap_or_else(|p| p.into_inner()).push(worker);
            if jobs.shared().is_some() {
                tokio::spawn(crate::pending::leases(Arc::downgrade(&jobs), queue.downgrade(), self.cancel.clone()));
            }
            let state = AppState {
                engine,
                jobs,
                queue,
                keys: self.keys.clone(),
                max_body_bytes: self.setup.max_body_bytes,
                ids: self.ids.clone(),
                workspace: Arc::from(name),
            };
            let w = Arc::new(Workspace {
                router: crate::workspace_router(state.clone()),
                state,
                last_used: AtomicU64::new(self.now_ms()),
            });
            open.insert(name.to_string(), w.clone());
            w
        };
        // Jobs an earlier run accepted and did not finish go first.
        spool::resume_pending(&w.state.jobs, &w.state.queue).await;
        Ok(w)
    }

    /// Open, at start, every workspace with uploads an earlier run (or, on a shared store,
    /// another replica) did not finish.
    pub async fn resume_all(&self) -> Result<()> {
        let base = self.base.clone();
        let names = tokio::task::spawn_blocking(move || base.workspaces())
            .await
            .map_err(|e| rhizome_core::Error::Store(e.to_string()))??;
        for name in names {
            let url = self.base.workspace(&name)?;
            let mut pending = self
                .spool_of(&name, &url)
                .and_then(|d| std::fs::read_dir(d).ok())
                .is_some_and(|mut rd| rd.next().is_some());
            // Or uploads kept in a shared store, whichever replica accepted them.
            if !pending {
                let u = url.clone();
                let kept = tokio::task::spawn_blocking(move || u.job_board()?.map_or(Ok(0), |b| b.pending_uploads()))
                    .await
                    .map_err(|e| rhizome_core::Error::Store(e.to_string()))??;
                pending = kept > 0;
            }
            if pending {
                self.open_now(&name).await?;
            }
        }
        Ok(())
    }

    /// Make workspace `name` (an empty index); false when it existed.
    pub async fn create(&self, name: &str) -> std::result::Result<bool, ApiError> {
        rhizome_store::workspace::check_name(name)?;
        if name == DEFAULT_WORKSPACE || self.open.lock().unwrap_or_else(|p| p.into_inner()).contains_key(name) {
            return Ok(false);
        }
        let base = self.base.clone();
        let n = name.to_string();
        let config = self.default.config().clone();
        let made = tokio::task::spawn_blocking(move || -> Result<bool> {
            if base.workspaces()?.contains(&n) {
                return Ok(false);
            }
            let url = base.prepare_workspace(&n)?;
            // The index itself, empty: its first write (or this) makes it.
            Engine::at(url, config, Default::default())?.create_empty()?;
            Ok(true)
        })
        .await
        .map_err(ApiError::join)??;
        Ok(made)
    }

    /// Delete workspace `name` and its index; refused while a write job of it runs.
    pub async fn delete(&self, name: &str) -> std::result::Result<(), ApiError> {
        let w = self.get(name).await?;
        if w.busy() {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                format!("workspace {name:?} has a write job queued or running"),
                "wait for its jobs to finish (GET /w/NAME/jobs), then delete it",
            ));
        }
        self.open.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
        drop(w);
        let base = self.base.clone();
        let n = name.to_string();
        tokio::task::spawn_blocking(move || base.drop_workspace(&n)).await.map_err(ApiError::join)??;
        Ok(())
    }

    /// Close the workspaces unused for the idle time (never `default`, nor one with a job
    /// or a request in progress). Returns their names.
    pub fn close_idle(&self) -> Vec<String> {
        let now = self.now_ms();
        let idle = self.setup.idle.as_millis() as u64;
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let closing: Vec<String> = open
            .iter()
            .filter(|(n, w)| {
                n.as_str() != DEFAULT_WORKSPACE
                    && now.saturating_sub(w.last_used.load(Ordering::Relaxed)) >= idle
                    && Arc::strong_count(w) == 1
                    && !w.busy()
            })
            .map(|(n, _)| n.clone())
            .collect();
        for n in &closing {
            open.remove(n);
        }
        closing
    }

    /// The open workspaces' states, by name.
    pub fn open_workspaces(&self) -> Vec<(String, AppState)> {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|(n, w)| (n.clone(), w.state.clone())).collect()
    }

    /// The names of the open workspaces.
    pub fn open_names(&self) -> Vec<String> {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).keys().cloned().collect()
    }

    /// Close every workspace (at shutdown) and return their workers, to wait for.
    pub fn close_all(&self) -> Vec<JoinHandle<()>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).clear();
        std::mem::take(&mut *self.workers.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub fn idle_check_every(&self) -> Duration {
        (self.setup.idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(30))
    }
}

/// Close idle workspaces now and then, until the registry is gone.
pub(crate) async fn sweep(registry: std::sync::Weak<Registry>) {
    loop {
        let Some(every) = registry.upgrade().map(|r| r.idle_check_every()) else { return };
        tokio::time::sleep(every).await;
        let Some(r) = registry.upgrade() else { return };
        for name in r.close_idle() {
            tracing::info!(workspace = %name, "workspace closed after being idle; its memory is released");
        }
    }
}
