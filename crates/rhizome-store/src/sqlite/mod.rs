//! The embedded SQLite index: one file (`rhizome.sqlite`) in the index directory holding
//! documents, chunks, the graph (entities, relations, facts, mentions, SYNONYM and
//! SIMILAR_TO edges), embeddings and BM25 postings.
//!
//! Crash safety comes from SQLite's write-ahead log: every [`WriteBatch`] is one
//! transaction, so a process killed at any point leaves an index that opens with every
//! committed batch intact. Vector search is exact (brute force over an in-memory matrix
//! loaded on first use), which is both the fastest and the most accurate choice at the
//! sizes an embedded index holds (up to a few hundred thousand vectors).
//!
//! [`WriteBatch`]: rhizome_core::WriteBatch

mod aliases;
mod communities;
mod delete;
mod export;
pub mod file_lock;
mod graph_read;
mod llm_cache;
mod meta;
mod neighbourhood;
mod postings;
mod read;
mod rows;
mod schema;
mod scoped;
mod tags;
mod walk;
mod write;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rhizome_core::{Error, Result, VectorKind};
use rusqlite::Connection;

pub use file_lock::WriterLock;
pub use llm_cache::SqliteLlmCache;

use crate::bm25::DocLengths;
use crate::lock::{Holder, LockWait};
use crate::vectors::VectorMatrix;

/// File name of the database inside an index directory.
pub const DB_FILE: &str = "rhizome.sqlite";

/// The SQLite-backed store. Implements [`rhizome_core::StoreRead`] and
/// [`rhizome_core::StoreWrite`].
pub struct SqliteStore {
    conn: Connection,
    dir: PathBuf,
    vector_cache: RefCell<HashMap<VectorKind, Arc<VectorMatrix>>>,
    bm25_cache: RefCell<Option<Arc<DocLengths>>>,
    /// Held by a store opened with [`SqliteStore::open_writer`]; released on drop.
    lock: Option<WriterLock>,
}

impl SqliteStore {
    /// Open the index in `dir` for writing: take the writer lock first ([`lock`]), so
    /// that a second writer waits (or, with [`LockWait::No`], is refused) before it has
    /// written anything. `command` names this writer in the other's message; `on_wait` is
    /// called once, with the holder, if this call has to wait.
    pub fn open_writer(
        dir: &Path,
        create: bool,
        command: &str,
        wait: LockWait,
        on_wait: &mut dyn FnMut(&Holder),
    ) -> Result<Self> {
        not_a_file(dir)?;
        if !dir.join(DB_FILE).exists() {
            // Refuse a missing index before making a directory for its lock.
            if !create {
                return Self::open(dir, false);
            }
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let lock = WriterLock::acquire(dir, command, wait, on_wait)?;
        let mut store = Self::open(dir, create)?;
        store.lock = Some(lock);
        Ok(store)
    }

    /// Open the index in `dir`, creating it when `create` is true. Without `create`, a
    /// missing index is an error that says how to make one. Takes no writer lock: use
    /// [`SqliteStore::open_writer`] to write.
    pub fn open(dir: &Path, create: bool) -> Result<Self> {
        let db = dir.join(DB_FILE);
        not_a_file(dir)?;
        // A reader that comes while a writer is creating the index (the file there, its
        // schema not yet written) is told there is no index yet, and never touches the
        // schema itself (which would race the writer's).
        if !create && db.is_file() && !schema::is_ready(&db) {
            if let Some(h) = file_lock::holder(dir) {
                return Err(Error::Index {
                    path: dir.to_path_buf(),
                    msg: format!(
                        "no Rhizome index here yet: {h} is creating it; ask again when it has \
                         written its first batch"
                    ),
                });
            }
        }
        if db.is_file() && std::fs::metadata(&db).map(|m| m.len()).unwrap_or(1) == 0 {
            return Err(Error::Index {
                path: dir.to_path_buf(),
                msg: format!(
                    "{} is empty (0 bytes): not a Rhizome index; remove it and index again, or point \
                     --index at another directory",
                    db.display()
                ),
            });
        }
        if !db.exists() {
            if !create {
                return Err(Error::Index {
                    path: dir.to_path_buf(),
                    msg: "no Rhizome index here; create one with `rhizome index PATH` or an \
                          import, or point --index / RHIZOME_INDEX at an existing index"
                        .into(),
                });
            }
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let conn = Connection::open(&db).map_err(|e| index_err(dir, e))?;
        // Room for every statement a batch write runs (see `write::exec`).
        conn.set_prepared_statement_cache_capacity(64);
        schema::prepare(&conn).map_err(|e| match e {
            // Another writer holds the database: busy, never "corrupt".
            Error::Busy { msg, .. } => Error::Busy { path: dir.to_path_buf(), msg },
            Error::Damaged(msg) | Error::Store(msg) => Error::Index {
                path: dir.to_path_buf(),
                msg: format!(
                    "cannot open the index ({msg}); it is damaged or not a Rhizome index: restore it \
                     from a backup, or move it away and index the documents again"
                ),
            },
            other => other,
        })?;
        // Postings made with older term rules are rebuilt from the stored chunks.
        postings::ensure_current(&conn)?;
        Ok(SqliteStore {
            conn,
            dir: dir.to_path_buf(),
            vector_cache: RefCell::new(HashMap::new()),
            bm25_cache: RefCell::new(None),
            lock: None,
        })
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Read a free-form metadata value (e.g. the extractor used, token accounting).
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        meta::get_meta(&self.conn, key)
    }

    /// Write a free-form metadata value.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        meta::set_meta(&self.conn, key, value)
    }

    fn invalidate_caches(&self) {
        self.vector_cache.borrow_mut().clear();
        *self.bm25_cache.borrow_mut() = None;
    }
}

pub(crate) fn sql(e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode::{DatabaseBusy, DatabaseCorrupt, DatabaseLocked, DiskFull, NotADatabase};
    match e.sqlite_error_code() {
        Some(DatabaseCorrupt | NotADatabase) => Error::Damaged(e.to_string()),
        Some(DiskFull) => Error::DiskFull(e.to_string()),
        Some(DatabaseBusy | DatabaseLocked) => Error::Busy {
            path: PathBuf::new(),
            msg: format!("{e}: another process is writing it; try again when it finishes"),
        },
        _ => Error::Store(e.to_string()),
    }
}

/// An index path that is a plain file is named as such (not "File exists").
fn not_a_file(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::Index {
            path: dir.to_path_buf(),
            msg: "is a file, not an index directory; point --index (or RHIZOME_INDEX) at a directory \
                  (`rhizome index` creates a new one)"
                .into(),
        });
    }
    Ok(())
}

fn index_err(dir: &Path, e: rusqlite::Error) -> Error {
    Error::Index { path: dir.to_path_buf(), msg: e.to_string() }
}
