//! One writer at a time: an advisory lock on `rhizome.lock` in the index directory.
//!
//! Every command that writes an index (index, imports, delete, communities; later the
//! server's write jobs) holds [`WriterLock`] from before it opens the index for writing
//! until it is done, so two writers never interleave their batches and global steps
//! (synonymy, communities). The lock is the operating system's (`flock` on Linux): it goes
//! with the process, so a killed writer never leaves a stale lock behind. Readers take no
//! lock: SQLite's write-ahead log gives them the last committed state while a writer works.
//!
//! The holder writes who it is (pid, command, start time) into the lock file, so that a
//! second writer can say whom it waits for.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rhizome_core::{Error, Result};

/// File name of the writer lock inside an index directory.
pub const LOCK_FILE: &str = "rhizome.lock";

/// What a second writer does when the index is held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LockWait {
    /// Refuse at once with [`Error::Busy`], before anything is written.
    No,
    /// Wait until the holder finishes (or at most this long, then refuse).
    Up(Option<Duration>),
}

/// Who holds an index for writing, as its lock file says.
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

/// The held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct WriterLock {
    file: File,
    path: PathBuf,
}

impl WriterLock {
    /// Take the writer lock of the index in `dir` (the directory must exist). `command`
    /// describes the holder for others' messages; `on_wait` is called once, with the
    /// current holder, before waiting.
    pub fn acquire(dir: &Path, command: &str, wait: LockWait, on_wait: &mut dyn FnMut(&Holder))
        -> Result<WriterLock> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            Err(TryLockError::WouldBlock) => {
                // The holder writes who it is just after it takes the lock: give it a moment.
                let mut holder = read_holder(&path);
                for _ in 0..40 {
                    if holder.pid != 0 {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(25));
                    holder = read_holder(&path);
                }
                let busy = |holder: &Holder| Error::Busy {
                    path: dir.to_path_buf(),
                    msg: format!(
                        "{holder} is writing it; wait for it to finish (or run again without \
                         --no-wait to wait), then run this command again"
                    ),
                };
                match wait {
                    LockWait::No => return Err(busy(&holder)),
                    LockWait::Up(None) => {
                        on_wait(&holder);
                        file.lock().map_err(|e| Error::io(&path, e))?;
                    }
                    LockWait::Up(Some(limit)) => {
                        on_wait(&holder);
                        let start = Instant::now();
                        loop {
                            match file.try_lock() {
                                Ok(()) => break,
                                Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
                                Err(TryLockError::WouldBlock) if start.elapsed() >= limit => {
                                    return Err(busy(&read_holder(&path)));
                                }
                                Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(50)),
                            }
                        }
                    }
                }
            }
        }
        let mut lock = WriterLock { file, path };
        lock.write_holder(command)?;
        Ok(lock)
    }

    fn write_holder(&mut self, command: &str) -> Result<()> {
        let text = format!("{}\n{}\n{}\n", std::process::id(), now_secs(), one_line(command));
        let f = &mut self.file;
        let io = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::StorageFull => Error::DiskFull(format!("{}: {e}", self.path.display())),
            _ => Error::io(&self.path, e),
        };
        f.set_len(0).map_err(io)?;
        f.seek(SeekFrom::Start(0)).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.flush().map_err(io)
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Say nobody holds it; the lock itself goes with the file handle.
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

/// Who holds the writer lock of `dir`, if anybody (None: free, or no index there).
pub fn holder(dir: &Path) -> Option<Holder> {
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new().read(true).write(true).open(&path).ok()?;
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(_) => Some(read_holder(&path)),
    }
}

fn read_holder(path: &Path) -> Holder {
    let mut text = String::new();
    if let Ok(mut f) = File::open(path) {
        let _ = f.read_to_string(&mut text);
    }
    let mut lines = text.lines();
    let pid = lines.next().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
    let since = lines.next().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
    let command = lines.next().unwrap_or("").to_string();
    Holder { pid, host: String::new(), command, since }
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn one_line(s: &str) -> String {
    let s: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_writer_is_refused_or_waits_and_the_holder_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let first = WriterLock::acquire(dir.path(), "rhizome index docs", LockWait::No, &mut |_| {}).unwrap();
        assert_eq!(holder(dir.path()).unwrap().pid, std::process::id());
        // flock locks belong to the open file: a second handle in this process conflicts too.
        let err = WriterLock::acquire(dir.path(), "rhizome delete x", LockWait::No, &mut |_| {}).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("is busy") && msg.contains("rhizome index docs"), "{msg}");
        let mut waited = None;
        let err = WriterLock::acquire(
            dir.path(), "b", LockWait::Up(Some(Duration::from_millis(200))),
            &mut |h| waited = Some(h.clone()),
        )
        .unwrap_err();
        assert!(err.to_string().contains("is busy"));
        assert_eq!(waited.unwrap().command, "rhizome index docs");
        let t = std::thread::spawn({
            let d = dir.path().to_path_buf();
            move || WriterLock::acquire(&d, "waiter", LockWait::Up(None), &mut |_| {}).map(|_| ())
        });
        std::thread::sleep(Duration::from_millis(100));
        drop(first);
        t.join().unwrap().unwrap();
        assert!(holder(dir.path()).is_none());
    }
}
