//! One writer at a time, on every backend: the waiting protocol and its messages.
//!
//! Every command that writes an index holds its backend's writer lock from before it
//! opens the index for writing until it is done, so two writers never interleave their
//! batches and global steps (synonymy, communities). Each backend supplies the primitive
//! (SQLite: `flock` on a file, [`crate::sqlite::file_lock`]; PostgreSQL: a session advisory
//! lock; FalkorDB: a key with a time to live) as a [`Contended`] lock; [`acquire`] does the
//! rest the same way for all: refuse or wait ([`LockWait`]), tell the caller whom it waits
//! for, and name the holder in the refusal. Every primitive goes with its process, so a
//! killed writer never leaves a stale lock for long. Readers take no lock.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rhizome_core::{Error, Result};

/// What a second writer does when the index is held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LockWait {
    /// Refuse at once with [`Error::Busy`], before anything is written.
    No,
    /// Wait until the holder finishes (or at most this long, then refuse).
    Up(Option<Duration>),
}

/// Who holds an index for writing, as its lock says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Holder {
    pub pid: u32,
    /// The holder's host, when it may be another machine (a database server's lock).
    pub host: String,
    pub command: String,
    /// Seconds since the Unix epoch when the holder took the lock.
    pub since: u64,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.pid == 0 {
            return write!(f, "another process");
        }
        let ago = now_secs().saturating_sub(self.since);
        if self.host.is_empty() {
            write!(f, "process {} (`{}`, for {ago} s)", self.pid, self.command)
        } else {
            write!(f, "process {} on {} (`{}`, for {ago} s)", self.pid, self.host, self.command)
        }
    }
}

impl Holder {
    /// This process, as it describes itself in a lock it takes.
    pub fn me(command: &str, host: String) -> Holder {
        Holder { pid: std::process::id(), host, command: one_line(command), since: now_secs() }
    }

    /// The lines a holder writes: pid, start, then the command (`COMMAND @ HOST` when
    /// the host is known).
    pub fn to_text(&self) -> String {
        if self.host.is_empty() {
            format!("{}\n{}\n{}\n", self.pid, self.since, self.command)
        } else {
            format!("{}\n{}\n{} @ {}\n", self.pid, self.since, self.command, self.host)
        }
    }

    /// Inverse of [`Holder::to_text`]; whatever cannot be read stays empty (pid 0:
    /// "another process").
    pub fn from_text(text: &str) -> Holder {
        let mut lines = text.lines();
        let pid = lines.next().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
        let since = lines.next().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
        let line = lines.next().unwrap_or("");
        let (command, host) = match line.rsplit_once(" @ ") {
            Some((c, h)) => (c.to_string(), h.to_string()),
            None => (line.to_string(), String::new()),
        };
        Holder { pid, host, command, since }
    }
}

/// A backend's lock primitive, as [`acquire`] drives it.
pub(crate) trait Contended {
    /// Take the lock if it is free: `None` once taken, else who holds it.
    fn try_take(&mut self) -> Result<Option<Holder>>;

    /// Wait until the lock is free and take it. By default polls [`Contended::try_take`].
    fn take(&mut self) -> Result<()> {
        while self.try_take()?.is_some() {
            std::thread::sleep(self.poll());
        }
        Ok(())
    }

    /// How often a bounded wait asks again.
    fn poll(&self) -> Duration {
        Duration::from_millis(50)
    }
}

/// Take `lock` as `wait` says. `place` names the index in a refusal; `on_wait` is called
/// once, with the current holder, before waiting.
pub(crate) fn acquire(
    lock: &mut impl Contended,
    place: PathBuf,
    wait: LockWait,
    on_wait: &mut dyn FnMut(&Holder),
) -> Result<()> {
    let Some(mut holder) = lock.try_take()? else { return Ok(()) };
    // The holder writes who it is just after it takes the lock: give it a moment.
    for _ in 0..40 {
        if holder.pid != 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
        match lock.try_take()? {
            None => return Ok(()),
            Some(h) => holder = h,
        }
    }
    let busy = |holder: &Holder| Error::Busy {
        path: place.clone(),
        msg: format!(
            "{holder} is writing it; wait for it to finish (or run again without --no-wait to \
             wait), then run this command again"
        ),
    };
    match wait {
        LockWait::No => Err(busy(&holder)),
        LockWait::Up(None) => {
            on_wait(&holder);
            lock.take()
        }
        LockWait::Up(Some(limit)) => {
            on_wait(&holder);
            let start = Instant::now();
            loop {
                std::thread::sleep(lock.poll());
                match lock.try_take()? {
                    None => return Ok(()),
                    Some(h) if start.elapsed() >= limit => return Err(busy(&h)),
                    Some(_) => {}
                }
            }
        }
    }
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// This machine's name, for holders on a database server shared by several machines.
#[cfg(any(feature = "postgres", feature = "falkordb"))]
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A command line fit for one line of a lock: control characters blanked, at most 200
/// characters.
pub(crate) fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_text_round_trips() {
        let h = Holder { pid: 42, host: "db1".into(), command: "rhizome index docs".into(), since: 7 };
        assert_eq!(Holder::from_text(&h.to_text()), h);
        let h = Holder { host: String::new(), ..h };
        assert_eq!(Holder::from_text(&h.to_text()), h);
        assert_eq!(Holder::from_text("garbage").pid, 0);
    }
}
