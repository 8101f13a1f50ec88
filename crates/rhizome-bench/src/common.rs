//! What every benchmark shares: the index and settings it runs on ([`Bench`]), its error
//! type, and printing.

use std::sync::Arc;

use rhizome_core::Config;
use rhizome_engine::{Engine, WriteOptions};

/// A benchmark's failure. A store, model or settings error keeps its own type
/// ([`Error::Core`]), so that the caller can name the index in it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Core(#[from] rhizome_core::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
    #[error(transparent)]
    Addr(#[from] std::net::AddrParseError),
    /// A benchmark's own refusal or failure, said in full.
    #[error("{0}")]
    Failed(String),
    /// What was being done when `source` failed.
    #[error("{what}")]
    Context {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

/// Return early with [`Error::Failed`] and a formatted message.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::common::Error::Failed(format!($($arg)*)))
    };
}
pub(crate) use bail;

/// Say what was being done when a step failed (or found nothing).
pub(crate) trait Context<T> {
    fn context(self, what: &str) -> Result<T>;
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> Context<T> for std::result::Result<T, E> {
    fn context(self, what: &str) -> Result<T> {
        self.with_context(|| what.to_string())
    }

    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::Context { what: what(), source: Box::new(e) })
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, what: &str) -> Result<T> {
        self.ok_or_else(|| Error::Failed(what.to_string()))
    }

    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.ok_or_else(|| Error::Failed(what()))
    }
}

/// What every benchmark is given: the index, the settings and how to print.
pub struct Bench {
    /// Where the index lives: a directory or a store URL.
    pub store: String,
    pub config: Config,
    /// Print one JSON object instead of text.
    pub json: bool,
    /// Refuse at once when another process writes the index (`--no-wait`).
    pub no_wait: bool,
}

impl Bench {
    /// The engine on the index, for benchmarks that only read it.
    pub(crate) fn reading_engine(&self) -> Result<Engine> {
        Ok(Engine::open(&self.store, self.config.clone(), WriteOptions::default())?)
    }

    /// The engine on the index as `rhizome serve` opens it, writing as `command`.
    pub(crate) fn serving_engine(&self, command: &str) -> Result<Arc<Engine>> {
        Ok(rhizome_server::launch::engine(&self.store, self.config.clone(), self.no_wait, command)?)
    }
}

/// Print a value as pretty JSON on stdout.
pub(crate) fn print_json(v: &serde_json::Value) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// Peak resident memory of this process in MiB (VmHWM), where /proc has it.
pub(crate) fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Parse `--methods` values.
pub(crate) fn parse_methods(methods: &[String]) -> Result<Vec<rhizome_engine::Method>> {
    methods.iter().map(|m| m.parse::<rhizome_engine::Method>().map_err(Error::Failed)).collect()
}
