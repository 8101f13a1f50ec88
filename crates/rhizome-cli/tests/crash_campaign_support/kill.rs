//! Runs killed with SIGKILL: after a delay, or once every document is committed; runs
//! completed; documents committed so far.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::Store;

/// Documents committed so far (0 when there is no index yet).
fn documents(store: &Store) -> u64 {
    match store {
        Store::Sqlite(dir) => rusqlite::Connection::open_with_flags(
            dir.join("rhizome.sqlite"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .and_then(|c| c.query_row("SELECT count(*) FROM documents", [], |r| r.get::<_, i64>(0)))
        .map_or(0, |n| n as u64),
        Store::Postgres { url, .. } => rhizome_testdb::postgres::psql(url, "SELECT count(*) FROM documents")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0),
    }
}

/// Start `c`; once every document is committed (the run is in its global steps:
/// synonymy, communities), SIGKILL it after `delay`. True when it was still running.
pub fn kill_late(mut c: Command, store: &Store, docs: u64, delay: Duration) -> bool {
    c.stderr(Stdio::null());
    let mut child: Child = c.spawn().unwrap();
    while documents(store) < docs {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(delay);
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    running
}

/// Start `c`, SIGKILL it after `delay`; true when it was still running (a kill), false
/// when it had finished first (its duration then goes into `finished`).
pub fn kill_after(mut c: Command, delay: Duration, finished: &mut Option<f64>) -> bool {
    c.stderr(Stdio::null());
    let mut child: Child = c.spawn().unwrap();
    let t = Instant::now();
    while t.elapsed() < delay {
        if child.try_wait().unwrap().is_some() {
            *finished = Some(t.elapsed().as_secs_f64());
            return false;
        }
        std::thread::sleep(Duration::from_millis(5).min(delay.saturating_sub(t.elapsed())));
    }
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    running
}

/// Run to completion; the error is the run's stderr.
pub fn complete(mut c: Command) -> Result<(), String> {
    let out = c.output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr)))
    }
}
