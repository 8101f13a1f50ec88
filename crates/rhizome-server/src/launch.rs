//! Setting a process up to serve an index: the engine with the server's writer-lock
//! policy, and enough open files for its connections. `rhizome serve` and the server
//! benchmarks start the same way.

use std::sync::Arc;
use std::time::Duration;

use rhizome_core::{Config, Result};
use rhizome_engine::{Engine, Holder, LockWait, WriteOptions};
use rhizome_store::StoreUrl;

/// The engine on the index at `store`, writing as `command`. With `no_wait` a write
/// refuses at once when another process holds the index; else a write job waits its turn
/// in attempts of 10 s (`jobs::in_writer_turn` tries again until the lock is free or the
/// server stops).
pub fn engine(store: &str, config: Config, no_wait: bool, command: &str) -> Result<Arc<Engine>> {
    engine_at(StoreUrl::parse(store)?, config, no_wait, command)
}

/// [`engine`] on a parsed URL (a workspace's).
pub fn engine_at(url: StoreUrl, config: Config, no_wait: bool, command: &str) -> Result<Arc<Engine>> {
    // Before any server or engine thread allocates (see `memory`).
    crate::memory::limit_arenas();
    let wait = if no_wait { LockWait::No } else { LockWait::Up(Some(Duration::from_secs(10))) };
    let index = url.display();
    let on_wait = Box::new(move |h: &Holder| {
        let msg = format!("waiting: index {index} is being written by {h}; the write job goes on when it finishes");
        // Through the process's logs when it has them (`rhizome serve`), else on stderr.
        if tracing::dispatcher::has_been_set() {
            tracing::warn!("{msg}");
        } else {
            eprintln!("{msg}");
        }
    });
    let write = WriteOptions { wait, command: command.into(), on_wait };
    Ok(Arc::new(Engine::at(url, config, write)?))
}

/// Raise the soft limit on open files to the hard one (each connection is a file): a
/// server started from a shell with the usual 1,024 would refuse clients long before it
/// runs short of memory. Returns the limit in force.
pub fn raise_open_files() -> u64 {
    // SAFETY: getrlimit/setrlimit on a struct owned here.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 0;
        }
        if r.rlim_cur < r.rlim_max {
            let raised = libc::rlimit { rlim_cur: r.rlim_max, rlim_max: r.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return raised.rlim_cur as u64;
            }
        }
        r.rlim_cur as u64
    }
}
