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
pub mod jobs;
pub mod keys;
pub mod lock;
#[cfg(feature = "postgres")]
pub mod pg;
pub mod sqlite;
pub mod traced;
pub mod vectors;
pub mod workspace;

pub use backend::{Reader, StoreUrl, Writer};
#[cfg(feature = "falkordb")]
pub use falkor::{FalkorStore, FalkorUrl};
pub use jobs::{JobBoard, PendingUpload, SharedJob};
pub use keys::{KeyRow, KeyTable};
pub use lock::{Holder, LockWait};
#[cfg(feature = "postgres")]
pub use pg::PgStore;
pub use sqlite::{SqliteLlmCache, SqliteStore, WriterLock, DB_FILE};
pub use traced::Traced;
pub use workspace::DEFAULT_WORKSPACE;

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

/// A document's pages as stored (JSON of its [`rhizome_core::Pagination`]); None without pages.
pub(crate) fn pages_json(d: &rhizome_core::Document) -> Option<String> {
    d.pages.as_ref().and_then(|p| serde_json::to_string(p).ok())
}

/// A document's metadata as stored (JSON of its [`rhizome_core::DocumentMeta`]); None
/// when nothing is known.
pub(crate) fn meta_json(m: &rhizome_core::DocumentMeta) -> Option<String> {
    (!m.is_empty()).then(|| serde_json::to_string(m).ok()).flatten()
}

/// The metadata stored by [`meta_json`]; empty when absent or unreadable.
pub(crate) fn meta_from_json(s: Option<String>) -> rhizome_core::DocumentMeta {
    s.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default()
}

/// How many pages a stored [`pages_json`] lists; None without pages.
pub(crate) fn page_count(s: Option<String>) -> Option<u32> {
    pages_from_json(s).map(|p| p.pages.len() as u32)
}

/// The pages stored by [`pages_json`]; None when absent or unreadable.
pub(crate) fn pages_from_json(s: Option<String>) -> Option<rhizome_core::Pagination> {
    s.and_then(|s| serde_json::from_str(&s).ok())
}

/// A chunk's pages as stored (two nullable columns).
pub(crate) fn page_range(first: Option<i64>, last: Option<i64>) -> Option<rhizome_core::PageRange> {
    match (first, last) {
        (Some(f), Some(l)) if f >= 0 && l >= f => Some(rhizome_core::PageRange { first: f as u32, last: l as u32 }),
        _ => None,
    }
}
