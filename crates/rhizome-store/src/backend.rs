//! Opening a store from a URL (`store.url`): the one place that knows which backends
//! exist. Callers get trait objects ([`StoreRead`], [`StoreWrite`], [`LlmCache`]) and never
//! name a backend type.
//!
//! A directory (or `sqlite://DIR`): the embedded SQLite index. `postgres://user@host:port/db`
//! (or `postgresql://`): PostgreSQL + pgvector ([`crate::pg`]). `falkordb://host:port/graph`:
//! a graph on a FalkorDB server ([`crate::falkor`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rhizome_core::llm::LlmCache;
use rhizome_core::{Error, Result, StoreRead, StoreWrite};

#[cfg(feature = "falkordb")]
use crate::falkor::{FalkorLlmCache, FalkorStore, FalkorUrl};
use crate::lock::{Holder, LockWait};
#[cfg(feature = "postgres")]
use crate::pg::{PgLlmCache, PgStore};
use crate::{SqliteLlmCache, SqliteStore, Traced, DB_FILE};

/// A store for reading, movable to another thread.
pub type Reader = Box<dyn StoreRead + Send>;
/// A store for writing (holding the index's writer lock), movable to another thread.
pub type Writer = Box<dyn StoreWrite + Send>;

/// Where an index lives.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreUrl {
    /// The embedded SQLite index in this directory.
    Dir(PathBuf),
    /// A PostgreSQL database with pgvector (`postgres://user@host:port/db`).
    #[cfg(feature = "postgres")]
    Postgres(String),
    /// A graph on a FalkorDB server, with Rhizome's other state in keys beside it.
    #[cfg(feature = "falkordb")]
    Falkor(FalkorUrl),
}

/// The refusal of a URL whose backend this build leaves out.
#[allow(dead_code)]
fn not_built(url: &str, backend: &str, feature: &str) -> Error {
    Error::Config(format!(
        "store.url {url:?}: this build of rhizome has no {backend} backend; build it with the \
         `{feature}` feature (`cargo build --release --features {feature}`), or use an index directory"
    ))
}

impl StoreUrl {
    /// A directory path, `sqlite://DIR`, `postgres://…` / `postgresql://…` (feature
    /// `postgres`) or `falkordb://…` / `redis://…` (feature `falkordb`).
    pub fn parse(url: &str) -> Result<StoreUrl> {
        let url = url.trim();
        if url.is_empty() {
            return Err(Error::Config("store.url is empty: give an index directory".into()));
        }
        if let Some(dir) = url.strip_prefix("sqlite://") {
            return Ok(StoreUrl::Dir(PathBuf::from(dir)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            return Ok(StoreUrl::Postgres(url.to_string()));
            #[cfg(not(feature = "postgres"))]
            return Err(not_built(url, "PostgreSQL", "postgres"));
        }
        if url.starts_with("falkordb://") || url.starts_with("redis://") {
            #[cfg(feature = "falkordb")]
            return Ok(StoreUrl::Falkor(FalkorUrl::parse(url)?));
            #[cfg(not(feature = "falkordb"))]
            return Err(not_built(url, "FalkorDB", "falkordb"));
        }
        if url.contains("://") {
            return Err(Error::Config(format!(
                "store.url {url:?}: unknown scheme; use an index directory, sqlite://DIR, \
                 postgres://USER@HOST:PORT/DB or falkordb://HOST:PORT/GRAPH"
            )));
        }
        Ok(StoreUrl::Dir(PathBuf::from(url)))
    }

    /// For messages: the directory or URL (without a password).
    pub fn display(&self) -> String {
        match self {
            StoreUrl::Dir(d) => d.display().to_string(),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => crate::pg::redact(u),
            #[cfg(feature = "falkordb")]
            StoreUrl::Falkor(u) => u.display(),
        }
    }

    /// Whether an index exists there.
    pub fn exists(&self) -> bool {
        match self {
            StoreUrl::Dir(d) => d.join(DB_FILE).exists(),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => PgStore::exists(u),
            #[cfg(feature = "falkordb")]
            StoreUrl::Falkor(u) => FalkorStore::exists(u),
        }
    }

    /// The index directory, for backends that have one (the LLM cache of a directory
    /// index lives in it).
    pub fn dir(&self) -> Option<&Path> {
        match self {
            StoreUrl::Dir(d) => Some(d),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Bytes the index takes on disk: the files of a directory index (the database and
    /// its write-ahead log), a PostgreSQL database's size; None where the backend does not
    /// say (FalkorDB keeps its graph in memory).
    pub fn disk_bytes(&self) -> Result<Option<u64>> {
        match self {
            StoreUrl::Dir(d) => {
                let mut n = 0;
                for e in std::fs::read_dir(d).map_err(|e| Error::io(d, e))? {
                    let m = e.and_then(|e| e.metadata()).map_err(|e| Error::io(d, e))?;
                    n += if m.is_file() { m.len() } else { 0 };
                }
                Ok(Some(n))
            }
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => PgStore::database_bytes(u).map(Some),
            #[cfg(feature = "falkordb")]
            StoreUrl::Falkor(_) => Ok(None),
        }
    }

    /// Open for reading: no lock, the last committed state.
    pub fn open_reader(&self) -> Result<Reader> {
        match self {
            StoreUrl::Dir(d) => Ok(Box::new(Traced(SqliteStore::open(d, false)?))),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => Ok(Box::new(Traced(PgStore::open(u, false)?))),
            #[cfg(feature = "falkordb")]
            StoreUrl::Falkor(u) => Ok(Box::new(Traced(FalkorStore::open(u, false)?))),
        }
    }

    /// Open for writing, holding the writer lock ([`crate::lock`]): a second writer waits
    /// (`on_wait` is told whom for) or, with [`LockWait::No`], is refused.
    pub fn open_writer(
        &self,
        create: bool,
        command: &str,
        wait: LockWait,
        on_wait: &mut dyn FnMut(&Holder),
    ) -> Result<Writer> {
        match self {
            StoreUrl::Dir(d) => Ok(Box::new(SqliteStore::open_writer(d, create, command, wait, on_wait)?)),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => Ok(Box::new(PgStore::open_writer(u, create, command, wait, on_wait)?)),
            #[cfg(feature = "falkordb")]
            StoreUrl::Falkor(u) => Ok(Box::new(FalkorStore::open_writer(u, create, command, wait, on_wait)?)),
        }
    }

    /// The job board of a store several servers may share (PostgreSQL), or None: see
    /// [`crate::jobs`].
    pub fn job_board(&self) -> Result<Option<Arc<dyn crate::JobBoard>>> {
        match self {
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => Ok(Some(Arc::new(crate::pg::PgJobBoard::open(u)?))),
            #[allow(unreachable_patterns)]
            _ => Ok(None),
        }
    }

    /// The API keys of a store several servers may share (PostgreSQL: tables in the
    /// schema of this URL), or None: see [`crate::keys`].
    pub fn key_table(&self) -> Result<Option<Arc<dyn crate::KeyTable>>> {
        match self {
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => Ok(Some(Arc::new(crate::pg::PgKeys::open(u)?))),
            #[allow(unreachable_patterns)]
            _ => Ok(None),
        }
    }

    /// The LLM response cache kept with the index.
    pub fn llm_cache(&self) -> Result<Arc<dyn LlmCache>> {
        match self {
            StoreUrl::Dir(d) => Ok(Arc::new(SqliteLlmCache::open(d)?)),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => Ok(Arc::new(PgLlmCache::open(u)?)),
            #[cfg(feature = "falkordb")]
            StoreUrl::Falkor(u) => Ok(Arc::new(FalkorLlmCache::open(u)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(StoreUrl::parse("./idx").unwrap(), StoreUrl::Dir("./idx".into()));
        assert_eq!(StoreUrl::parse("sqlite:///tmp/x").unwrap(), StoreUrl::Dir("/tmp/x".into()));
        assert!(StoreUrl::parse("ftp://x").is_err());
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn postgres_urls() {
        assert_eq!(StoreUrl::parse("postgres://u@h/db").unwrap(), StoreUrl::Postgres("postgres://u@h/db".into()));
        assert_eq!(StoreUrl::parse("postgresql://u:pw@h/db").unwrap().display(), "postgresql://u@h/db");
    }

    #[cfg(feature = "falkordb")]
    #[test]
    fn falkordb_urls() {
        let f = StoreUrl::parse("falkordb://127.0.0.1:6390/g").unwrap();
        assert_eq!(f.display(), "falkordb://127.0.0.1:6390/g");
        assert!(f.dir().is_none());
    }

    #[cfg(not(feature = "postgres"))]
    #[test]
    fn a_backend_left_out_of_the_build_is_named_with_the_fix() {
        let e = StoreUrl::parse("postgres://u@h/db").unwrap_err().to_string();
        assert!(e.contains("no PostgreSQL backend") && e.contains("--features postgres"), "{e}");
    }
}
