//! Where an index is kept. Every backend implements [`rhizome_core::StoreRead`] and
//! [`rhizome_core::StoreWrite`] and answers exactly as the others do (same scores, same
//! ties): [`sqlite`] (an index directory, always built), [`pg`] (PostgreSQL + pgvector,
//! feature `postgres`) and [`falkor`] (FalkorDB, feature `falkordb`). [`backend`] opens
//! one from a URL. The parts every backend shares: [`aggregate`] (an entity's or relation's
//! row from its support), [`bm25`] (term rules and scoring), [`vectors`] (the in-memory
//! matrix, exact search, kNN) and [`lock`] (one writer at a time: the waiting protocol and
//! its messages).

mod aggregate;
pub mod backend;
mod bm25;
#[cfg(feature = "falkordb")]
pub mod falkor;
pub mod lock;
#[cfg(feature = "postgres")]
pub mod pg;
pub mod sqlite;
pub mod vectors;

pub use backend::{Reader, StoreUrl, Writer};
#[cfg(feature = "falkordb")]
pub use falkor::{FalkorStore, FalkorUrl};
pub use lock::{Holder, LockWait};
#[cfg(feature = "postgres")]
pub use pg::PgStore;
pub use sqlite::{SqliteLlmCache, SqliteStore, WriterLock, DB_FILE};

/// `%text%` for LIKE (SQLite) and ILIKE (PostgreSQL), with `%`, `_` and `\` in `text`
/// taken literally.
pub(crate) fn like_pattern(text: &str) -> String {
    let mut p = String::from("%");
    for ch in text.chars() {
        if matches!(ch, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(ch);
    }
    p.push('%');
    p
}
