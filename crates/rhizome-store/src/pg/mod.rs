//! The PostgreSQL + pgvector store (`store.url = postgres://user@host:port/db`).
//!
//! Plain tables and B-tree indexes (nothing a managed service lacks besides pgvector),
//! with the same layout and the same rules as the SQLite store: every [`WriteBatch`] is
//! one transaction (rows sent with binary COPY, aggregates refreshed set-based for the
//! touched ids), full text with the same terms and BM25 scoring ([`search`]), vectors in
//! pgvector columns. Several processes may share a database: schema creation runs under a
//! transaction advisory lock, the writer lock is a session advisory lock ([`lock`]), and
//! the graph version lives in the database, so every process sees another's writes.
//!
//! Connections are pooled per URL ([`pool`]): the engine opens readers often, and a
//! pooled connection keeps what it read (vector matrices, BM25 lengths) while the data
//! version it was read at holds.
//!
//! [`WriteBatch`]: rhizome_core::WriteBatch

mod aliases;
mod communities;
mod delete;
mod export;
mod graph_read;
mod jobs;
mod keys;
mod llm_cache;
pub mod lock;
mod neighbourhood;
pub(crate) mod pool;
mod read;
mod refresh;
mod rows;
mod schema;
mod scoped;
mod search;
mod snapshot;
mod tags;
mod terms;
mod vector;
mod walk;
mod write;

use std::cell::RefCell;

use rhizome_core::{Error, Result};

pub use crate::bm25::{read_all_max as bm25_read_all_max, set_read_all_max as set_bm25_read_all_max};
pub use jobs::PgJobBoard;
pub use keys::PgKeys;
pub use llm_cache::PgLlmCache;
pub use lock::PgWriterLock;
pub use pool::Conn;
pub use search::{hnsw_min, set_hnsw_min};
pub(crate) use snapshot::Snapshot;

/// A store URL split into what is shown (never the password) and what connects.
#[derive(Debug, Clone, PartialEq)]
pub struct PgUrl {
    pub full: String,
}

impl PgUrl {
    pub fn new(url: &str) -> PgUrl {
        PgUrl { full: url.to_string() }
    }

    /// The URL without its password (`postgres://user@host:port/db`).
    pub fn display(&self) -> String {
        redact(&self.full)
    }
}

/// `scheme://user:secret@host/db?password=x` -> `scheme://user@host/db`.
pub fn redact(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (s, r),
        None => return url.to_string(),
    };
    let (auth_end, _) = rest.char_indices().find(|&(_, c)| c == '/' || c == '?').unwrap_or((rest.len(), ' '));
    let (authority, tail) = rest.split_at(auth_end);
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => format!("{}@{host}", user.split(':').next().unwrap_or("")),
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query.split('&').filter(|kv| !kv.starts_with("password=")).collect();
            if kept.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// A `postgres` error as ours, naming the database (without its password).
/// A read-only repeatable-read transaction: every read in it sees one snapshot (what a
/// read made of several queries needs to be consistent with itself).
fn snapshot(c: &mut postgres::Client) -> std::result::Result<postgres::Transaction<'_>, postgres::Error> {
    c.build_transaction().isolation_level(postgres::IsolationLevel::RepeatableRead).read_only(true).start()
}

pub(crate) fn pg_err(url: &PgUrl, e: postgres::Error) -> Error {
    let msg = match e.as_db_error() {
        Some(db) => {
            let mut m = format!("{}: {}", db.severity(), db.message());
            if let Some(d) = db.detail() {
                m.push_str(&format!(" ({d})"));
            }
            m
        }
        None => e.to_string(),
    };
    // 53100 disk_full: a data file could not be extended. The statement's transaction is
    // rolled back, so the database holds what was committed before it.
    if e.code() == Some(&postgres::error::SqlState::DISK_FULL) || msg.contains("No space left on device") {
        return Error::DiskFull(format!("{}: {msg}", url.display()));
    }
    if e.is_closed() || msg.contains("connection closed") || msg.contains("error communicating") {
        return Error::Store(format!(
            "{}: the connection to the server was lost ({msg}); is the server running? run the command again",
            url.display()
        ));
    }
    Error::Store(format!("{}: {msg}", url.display()))
}

/// The PostgreSQL store. Implements [`rhizome_core::StoreRead`] and
/// [`rhizome_core::StoreWrite`]; a writer holds the database's writer lock.
pub struct PgStore {
    url: PgUrl,
    conn: RefCell<Option<Conn>>,
    /// Set by [`rhizome_core::StoreRead::freshness`] (the start of a reader loan).
    snap: RefCell<Option<Snapshot>>,
    /// A writer's knowledge that the database holds no document: an import into an empty
    /// database asks [`rhizome_core::StoreRead::has_document`] and `find_document` for
    /// every document it is given, a round trip each, all answered "no". Only a writer
    /// keeps it (it holds the writer lock, so nobody else writes meanwhile), until its own
    /// next write.
    no_documents: std::cell::Cell<Option<bool>>,
    /// Held by a store opened with [`PgStore::open_writer`]; released on drop.
    lock: Option<PgWriterLock>,
    /// A bulk load is under way ([`rhizome_core::StoreWrite::bulk_load`]).
    bulk: bool,
}

impl PgStore {
    /// Open the store at `url` for reading (`create`: make the schema when missing).
    pub fn open(url: &str, create: bool) -> Result<PgStore> {
        let url = PgUrl::new(url);
        let mut conn = pool::take(&url)?;
        schema::ensure(&url, &mut conn.client, create)?;
        Ok(PgStore {
            url,
            conn: RefCell::new(Some(conn)),
            snap: RefCell::new(None),
            no_documents: Default::default(),
            lock: None,
            bulk: false,
        })
    }

    /// Open for writing: the writer lock is taken first (a second writer waits or is
    /// refused before it writes anything), on a connection of its own held for the
    /// writer's life.
    pub fn open_writer(
        url: &str,
        create: bool,
        command: &str,
        wait: crate::LockWait,
        on_wait: &mut dyn FnMut(&crate::Holder),
    ) -> Result<PgStore> {
        let parsed = PgUrl::new(url);
        if !create {
            // Refuse a missing index before waiting for anybody.
            let mut probe = pool::take(&parsed)?;
            schema::ensure(&parsed, &mut probe.client, false)?;
            pool::give(&parsed, probe);
        }
        let lock = PgWriterLock::acquire(&parsed, command, wait, on_wait)?;
        let mut store = PgStore::open(url, create)?;
        store.lock = Some(lock);
        Ok(store)
    }

    /// Whether a Rhizome schema exists at `url` (false also when it cannot be reached).
    pub fn exists(url: &str) -> bool {
        // On a thread of its own: the synchronous client drives a runtime of its own, which
        // cannot start on a thread that drives an async runtime (the server asks this from
        // its handlers; everything else it runs in spawn_blocking).
        let url = PgUrl::new(url);
        let probe = || {
            let Ok(mut conn) = pool::take(&url) else { return false };
            let found = schema::exists_prepared(&mut conn).unwrap_or(false);
            pool::give(&url, conn);
            found
        };
        std::thread::scope(|s| s.spawn(probe).join().unwrap_or(false))
    }

    /// Bytes the database at `url` takes on disk (`pg_database_size`: tables, indexes,
    /// TOAST; not the server's write-ahead log).
    pub fn database_bytes(url: &str) -> Result<u64> {
        let parsed = PgUrl::new(url);
        let mut conn = pool::take(&parsed)?;
        let n: i64 = conn
            .client
            .query_one("SELECT pg_database_size(current_database())", &[])
            .map_err(|e| Error::Store(format!("{}: size of the database: {e}", parsed.display())))?
            .get(0);
        pool::give(&parsed, conn);
        Ok(n.max(0) as u64)
    }

    /// The database, as messages name it.
    pub fn url(&self) -> String {
        self.url.display()
    }

    /// Run `f` on this store's connection and its caches.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        let mut slot = self.conn.borrow_mut();
        let conn = slot.as_mut().ok_or_else(|| Error::Store("connection in use".into()))?;
        f(conn)
    }

    /// The loan's snapshot, if one was taken.
    pub(crate) fn snap(&self) -> Option<Snapshot> {
        self.snap.borrow().clone()
    }

    pub(crate) fn set_snap(&self, snap: Option<Snapshot>) {
        *self.snap.borrow_mut() = snap;
    }

    /// True when this store is a writer and the database holds no document (read once
    /// per write, see `no_documents`).
    pub(crate) fn known_empty(&self) -> Result<bool> {
        if self.lock.is_none() {
            return Ok(false);
        }
        if let Some(b) = self.no_documents.get() {
            return Ok(b);
        }
        let empty = self
            .with(|c| c.query("SELECT NOT EXISTS (SELECT 1 FROM documents)", &[]).map_err(|e| self.err(e)))?
            .first()
            .is_some_and(|r| r.get::<_, bool>(0));
        self.no_documents.set(Some(empty));
        Ok(empty)
    }

    pub(crate) fn forget_empty(&self) {
        self.no_documents.set(None);
    }

    pub(crate) fn err(&self, e: postgres::Error) -> Error {
        pg_err(&self.url, e)
    }

    pub(crate) fn pgurl(&self) -> &PgUrl {
        &self.url
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.get_mut().take() {
            pool::give(&self.url, conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_are_never_shown() {
        assert_eq!(redact("postgres://u:secret@127.0.0.1:5432/db"), "postgres://u@127.0.0.1:5432/db");
        assert_eq!(redact("postgresql://u@h/db?sslmode=disable&password=x"), "postgresql://u@h/db?sslmode=disable");
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
    }
}
