use std::path::PathBuf;

/// Errors shared by every Rhizome library crate. Messages name the input and the fix.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("model {name} is not installed at {path}; run `rhizome models fetch` first")]
    ModelMissing { name: String, path: PathBuf },
    #[error("embedding model error: {0}")]
    Model(String),
    #[error("index at {path}: {msg}")]
    Index { path: PathBuf, msg: String },
    /// Another process holds the index for writing; `msg` says who and what to do.
    #[error("index at {path} is busy: {msg}")]
    Busy { path: PathBuf, msg: String },
    #[error("store error: {0}")]
    Store(String),
    /// The database reports damage (corrupt pages, not a database). Callers that know the
    /// index's path add it (see [`Error::with_index`]).
    #[error("the index is damaged ({0}); restore it from a backup, or index the documents again into a new --index directory")]
    Damaged(String),
    /// The disk holding the index is full (SQLite's SQLITE_FULL, or ENOSPC writing the
    /// lock): the transaction being written was rolled back, so the index holds what was
    /// committed before it. Callers that know the index's path add it ([`Error::with_index`]).
    #[error("{}", disk_full_msg(.0))]
    DiskFull(String),
    #[error("{input}: {msg}")]
    BadInput { input: String, msg: String },
    #[error("config: {0}")]
    Config(String),
    #[error("not found: {0}")]
    NotFound(String),
    /// An LLM call failed after retries: the provider, what happened, and what to check.
    #[error("LLM {provider}: {msg}")]
    Llm { provider: String, msg: String },
    /// A transient LLM failure (rate limit, 5xx, timeout, malformed body): worth retrying,
    /// after `retry_after_ms` when the server said so.
    #[error("LLM {provider}: {msg}")]
    LlmTransient { provider: String, msg: String, retry_after_ms: Option<u64> },
    #[error("cancelled")]
    Cancelled,
}

/// What a full disk means for the index, and the fix.
fn disk_full_msg(cause: &str) -> String {
    format!(
        "the disk is full ({cause}): the batch being written was rolled back and the index holds \
         what earlier batches committed; free space on the disk that holds the index (or move the \
         index to a larger one), then run the same command again: it goes on from there"
    )
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
    pub fn bad_input(input: impl Into<String>, msg: impl Into<String>) -> Self {
        Error::BadInput { input: input.into(), msg: msg.into() }
    }

    /// Name the index in errors that lack its path (damage found during a query).
    pub fn with_index(self, index: &str) -> Self {
        match self {
            Error::Damaged(msg) => Error::Index {
                path: PathBuf::from(index),
                msg: format!(
                    "the index is damaged ({msg}); restore it from a backup, or index the documents again \
                     into a new --index directory"
                ),
            },
            Error::DiskFull(msg) => Error::Index { path: PathBuf::from(index), msg: disk_full_msg(&msg) },
            Error::Busy { path, msg } if path.as_os_str().is_empty() => Error::Busy { path: PathBuf::from(index), msg },
            other => other,
        }
    }
}
