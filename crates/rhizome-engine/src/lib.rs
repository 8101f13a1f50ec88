//! The one engine facade. Everything a caller can do with an index — index files or
//! texts, import other tools' outputs, delete, query, analyze, browse — goes through
//! [`Engine`], so that the CLI, the server and the Python package are glue: they parse
//! their input, call the engine and present what it returns.
//!
//! The store is opened from `store.url` through the store traits ([`rhizome_store::StoreUrl`]):
//! no caller names a backend. Writers take the index's writer lock for the duration of one
//! call; readers come from a small pool and see the last committed state. The embedder,
//! the LLM stack and the in-memory graph are loaded once per engine and shared by
//! concurrent queries.

mod browse;
mod browse_around;
mod copy;
mod describe;
mod documents;
mod embedder;
mod eval;
mod export;
mod index;
pub mod llm;
mod methods;
mod query;
mod scope;
mod share;
mod upload;

use std::sync::{Arc, Mutex};

use rhizome_core::{Config, Embedder, Error, Result, StoreRead};
use rhizome_retrieve::GraphCache;
use rhizome_store::{Reader, StoreUrl, Writer};

pub use browse::{Alias, CommunityWithReport, EntityDetail, GraphEdge, GraphNode, Mention, Subgraph};
pub use copy::CopyOutcome;
pub use documents::{DocumentDetail, DocumentPage};
pub use embedder::load as load_embedder;
pub use eval::EvalOutcome;
pub use export::{ExportFormat, ExportOutcome};
#[cfg(feature = "graphrag-parquet")]
pub use index::GraphragOutcome;
pub use index::{DeleteOutcome, DryRun, IndexInput, IndexOutcome, Skip};
pub use methods::{MethodInfo, MethodParam};
pub use query::{query_sections, QueryOutcome, QueryRequest, MAX_QUESTION_BYTES};
pub use rhizome_community::CommunityOutcome;
pub use rhizome_ingest::describe::DescribeReport;
pub use rhizome_ingest::load::{Format, MediaKind};
pub use rhizome_ingest::pipeline::{IndexReport, NoProgress, Progress};
pub use rhizome_retrieve::{AnswerKind, Context, ContextKind, Method};
/// What [`WriteOptions`] is made of: how a second writer waits, and who holds the lock.
pub use rhizome_store::{Holder, LockWait};
/// Write jobs shared by the servers of one store (`rhizome serve` replicas).
pub use rhizome_store::{JobBoard, SharedJob};
pub use scope::matching_documents;
pub use upload::{is_edge_list, load_uploads, text_document, upload_base_name, upload_extension, upload_runs, Upload};

/// How the engine writes: what a second writer does, and how this one is named in the
/// other's message.
pub struct WriteOptions {
    pub wait: LockWait,
    /// This process, as the lock file tells others (e.g. the command line).
    pub command: String,
    /// Called once when a write has to wait for another writer, with the holder.
    pub on_wait: Box<dyn Fn(&Holder) + Send + Sync>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions { wait: LockWait::Up(None), command: "rhizome".into(), on_wait: Box::new(|_| {}) }
    }
}

/// An index and everything needed to work on it.
pub struct Engine {
    url: StoreUrl,
    /// Where readers read (`store.read_url`, a streaming replica of `url`), else `url`.
    read: StoreUrl,
    config: Config,
    write: WriteOptions,
    embedder: Mutex<Option<Arc<dyn Embedder>>>,
    llm: Mutex<Option<Option<Arc<llm::Llm>>>>,
    graph: GraphCache,
    /// Idle readers, each with the [`freshness`] stamp it was lent out at.
    readers: Mutex<Vec<(Reader, (u64, u64))>>,
    /// Queries in flight, and the cores they share.
    share: share::QueryShare,
    /// The documents filters matched, and their scopes.
    scopes: scope::ScopeCache,
}

/// Every config section defined above core, each once: ingestion's steps' (`[describe]`),
/// then the retrieval methods', in the registry's order. What a configuration must hold
/// for every part to run with its settings ([`Config::load_with_sections`]).
pub fn settings() -> Vec<&'static rhizome_core::config::SectionKind> {
    let mut out = rhizome_ingest::settings();
    out.extend(rhizome_retrieve::settings());
    out
}

/// Every prompt defined above rhizome-llm, `(name, text)`: ingestion's steps', then
/// retrieval's. The LLM's prompt set takes them in.
pub fn prompts() -> Vec<(&'static str, &'static str)> {
    let mut out = rhizome_ingest::prompts();
    out.extend(rhizome_retrieve::prompts());
    out
}

impl Engine {
    /// The engine for the index at `url` (a directory for the embedded index). Nothing is
    /// opened or loaded yet: an index that does not exist is created by the first write.
    /// `config` gets every section of [`settings`] it lacks, at its defaults.
    pub fn open(url: &str, config: Config, write: WriteOptions) -> Result<Engine> {
        Engine::at(StoreUrl::parse(url)?, config, write)
    }

    /// [`Engine::open`] on a parsed URL (e.g. a workspace's, [`StoreUrl::workspace`]).
    pub fn at(url: StoreUrl, config: Config, write: WriteOptions) -> Result<Engine> {
        let read = read_url(&url, &config.store.read_url)?;
        Ok(Engine {
            url,
            read,
            config: config.with_sections(&settings()),
            write,
            embedder: Mutex::new(None),
            llm: Mutex::new(None),
            graph: GraphCache::new(),
            readers: Mutex::new(Vec::new()),
            share: share::QueryShare::default(),
            scopes: scope::ScopeCache::default(),
        })
    }

    /// Make the index, empty, when it does not exist yet (an existing one is left as it is).
    pub fn create_empty(&self) -> Result<()> {
        drop(self.writer(true)?);
        Ok(())
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn url(&self) -> &StoreUrl {
        &self.url
    }

    /// Whether the index exists yet.
    pub fn exists(&self) -> bool {
        self.url.exists()
    }

    /// A reader from the pool (opened on demand), returned to it when dropped. A reader
    /// keeps its vector and BM25 caches between loans, so a pooled reader is only lent
    /// again while the index has not changed since its last loan (a write in this process
    /// or another one); otherwise it is dropped and a fresh one opened.
    pub fn reader(&self) -> Result<PooledReader<'_>> {
        let _loan = tracing::info_span!("store.reader").entered();
        loop {
            let pooled = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let (store, stamp) = match pooled {
                Some((s, then)) => {
                    let now = freshness(&*s)?;
                    if now != then {
                        continue;
                    }
                    (s, now)
                }
                None => {
                    let s = self.read.open_reader()?;
                    let now = freshness(&*s)?;
                    (s, now)
                }
            };
            return Ok(PooledReader { store: Some(store), stamp, pool: &self.readers });
        }
    }

    /// The index for writing, holding its writer lock until the returned store is dropped.
    pub(crate) fn writer(&self, create: bool) -> Result<Writer> {
        let on_wait = &self.write.on_wait;
        self.url.open_writer(create, &self.write.command, self.write.wait, &mut |h| on_wait(h))
    }

    /// The embedder whose vectors the index holds (`embed.model = auto`), or the
    /// configured one for a new index; loaded once.
    pub fn embedder(&self, store: &dyn StoreRead) -> Result<Arc<dyn Embedder>> {
        self.embedder_for(store.embedding_model()?)
    }

    /// [`Engine::embedder`] for an index holding vectors of model `held` (None: none yet).
    pub(crate) fn embedder_for(&self, held: Option<String>) -> Result<Arc<dyn Embedder>> {
        embedder::check_held(&self.config, held.as_deref(), &self.url.display())?;
        let mut slot = self.embedder.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = slot.as_ref() {
            if held.as_deref().is_none_or(|m| m == e.model_id()) {
                return Ok(e.clone());
            }
        }
        let e: Arc<dyn Embedder> = Arc::new(embedder::Observed(embedder::load(&self.config, held.as_deref())?));
        *slot = Some(e.clone());
        Ok(e)
    }

    /// The embedder loaded so far, if any (to share it with another engine).
    pub fn loaded_embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.embedder.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Use `embedder` for this index instead of loading the configured model (e.g. one
    /// embedder shared by several engines). It must be the model the index holds.
    pub fn set_embedder(&self, embedder: Arc<dyn Embedder>) {
        *self.embedder.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(embedder::Observed(embedder)));
    }

    /// The configured LLM stack (cached with the index), built once; None without one.
    pub fn llm(&self) -> Result<Option<Arc<llm::Llm>>> {
        let mut slot = self.llm.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = slot.as_ref() {
            return Ok(l.clone());
        }
        let built = llm::build(&self.config, || self.url.llm_cache())?.map(Arc::new);
        *slot = Some(built.clone());
        Ok(built)
    }

    /// The store's job board when several servers may share the store (PostgreSQL), else
    /// None; see [`JobBoard`].
    pub fn job_board(&self) -> Result<Option<Arc<dyn JobBoard>>> {
        self.url.job_board()
    }

    /// Whether a write waits for another writer (false: `--no-wait`, refused at once).
    pub fn waits_for_writers(&self) -> bool {
        !matches!(self.write.wait, LockWait::No)
    }

    /// The graph cache shared by this engine's queries.
    pub fn graph(&self) -> &GraphCache {
        &self.graph
    }

    /// Node and edge counts.
    pub fn stats(&self) -> Result<rhizome_core::Stats> {
        self.reader()?.stats()
    }
}

/// Where readers read: `store.read_url` when given (a PostgreSQL URL beside a PostgreSQL
/// store), else the store itself.
fn read_url(url: &StoreUrl, read_url: &str) -> Result<StoreUrl> {
    let read_url = read_url.trim();
    if read_url.is_empty() {
        return Ok(url.clone());
    }
    let read = StoreUrl::parse(read_url).map_err(|e| Error::Config(format!("store.read_url: {e}")))?;
    let both_pg = read.display().starts_with("postgres") && url.display().starts_with("postgres");
    if !both_pg {
        return Err(Error::Config(format!(
            "store.read_url {}: a read replica is a PostgreSQL URL beside a PostgreSQL store.url              (store.url is {}); remove store.read_url, or give postgres://USER@HOST:PORT/DB of a              streaming replica of store.url",
            read.display(),
            url.display()
        )));
    }
    Ok(read)
}

/// What a reader's caches depend on: the graph version (every committed batch,
/// deletion and synonymy rebuild moves it) and the reports version.
fn freshness(store: &dyn StoreRead) -> Result<(u64, u64)> {
    store.freshness()
}

/// A reader on loan from the engine's pool.
pub struct PooledReader<'a> {
    store: Option<Reader>,
    stamp: (u64, u64),
    pool: &'a Mutex<Vec<(Reader, (u64, u64))>>,
}

impl std::ops::Deref for PooledReader<'_> {
    type Target = dyn StoreRead + Send;
    fn deref(&self) -> &Self::Target {
        self.store.as_deref().expect("a pooled reader holds its store until dropped")
    }
}

impl Drop for PooledReader<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.store.take() {
            let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
            if pool.len() < 8 {
                pool.push((s, self.stamp));
            }
        }
    }
}

/// An empty question, named with what to do.
pub(crate) fn empty_question(example_cmd: &str) -> Error {
    Error::bad_input(
        "question",
        format!("the question is empty; ask something, e.g. {example_cmd} \"Who founded OpenAI?\""),
    )
}
