//! What every command shares: the index and its configuration ([`App`]), the engine on
//! it, Ctrl-C and printing. Everything a command does to an index goes through
//! [`rhizome_engine::Engine`]; the commands parse arguments and print.

use std::sync::atomic::AtomicBool;

use anyhow::Result;
use rhizome_core::Config;
use rhizome_engine::{Engine, WriteOptions};
use rhizome_store::LockWait;

/// Set by Ctrl-C: long operations stop at their next batch boundary.
pub static CANCEL: AtomicBool = AtomicBool::new(false);

pub struct App {
    /// Where the index lives: `store.url`, else `--index`.
    pub store: String,
    /// `--index`: the local directory (also when the index lives in a database).
    pub dir: std::path::PathBuf,
    pub json: bool,
    pub config: Config,
    /// Refuse at once when another process writes the index (`--no-wait`).
    pub no_wait: bool,
}

impl App {
    /// The engine on this index. A write that has to wait for another writer says whom
    /// for (or, with `--no-wait`, is refused before it writes anything).
    pub fn engine(&self) -> Result<Engine> {
        let command: Vec<String> = std::env::args().collect();
        let index = shown(&self.store);
        let write = WriteOptions {
            wait: if self.no_wait { LockWait::No } else { LockWait::Up(None) },
            command: command.join(" "),
            on_wait: Box::new(move |holder| {
                eprintln!(
                    "waiting: index {index} is being written by {holder}; this command goes on when it \
                     finishes (Ctrl-C to stop, or --no-wait to refuse instead of waiting)"
                );
            }),
        };
        Ok(Engine::open(&self.store, self.config.clone(), write)?)
    }

    pub fn progress(&self) -> crate::progress::Bars {
        crate::progress::Bars::new(!self.json)
    }
}

/// The store as messages name it: a store URL without its password.
pub(crate) fn shown(store: &str) -> String {
    rhizome_store::StoreUrl::parse(store).map(|u| u.display()).unwrap_or_else(|_| store.to_string())
}

/// Print a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}
