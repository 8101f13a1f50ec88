//! The SQLite index's writer lock: an advisory lock (`flock`) on `rhizome.lock` in the
//! index directory, driven by [`crate::lock::acquire`]. It goes with the process, so a
//! killed writer never leaves a stale lock behind. Readers take no lock: SQLite's
//! write-ahead log gives them the last committed state while a writer works. The holder
//! writes who it is into the lock file ([`Holder::to_text`]).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rhizome_core::{Error, Result};

use crate::lock::{self, Contended, Holder, LockWait};

/// File name of the writer lock inside an index directory.
pub const LOCK_FILE: &str = "rhizome.lock";

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
    pub fn acquire(dir: &Path, command: &str, wait: LockWait, on_wait: &mut dyn FnMut(&Holder)) -> Result<WriterLock> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        // Not a `WriterLock` until taken: dropping one empties the holder's lines.
        let mut pending = Pending { file, path };
        lock::acquire(&mut pending, dir.to_path_buf(), wait, on_wait)?;
        let mut lock = WriterLock { file: pending.file, path: pending.path };
        lock.write_holder(command)?;
        Ok(lock)
    }

    fn write_holder(&mut self, command: &str) -> Result<()> {
        let text = Holder::me(command, String::new()).to_text();
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

/// The lock file of a writer that has not taken the lock yet.
struct Pending {
    file: File,
    path: PathBuf,
}

impl Contended for Pending {
    fn try_take(&mut self) -> Result<Option<Holder>> {
        match self.file.try_lock() {
            Ok(()) => Ok(None),
            Err(TryLockError::Error(e)) => Err(Error::io(&self.path, e)),
            Err(TryLockError::WouldBlock) => Ok(Some(read_holder(&self.path))),
        }
    }

    fn take(&mut self) -> Result<()> {
        self.file.lock().map_err(|e| Error::io(&self.path, e))
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
    Holder::from_text(&text)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

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
        let err = WriterLock::acquire(dir.path(), "b", LockWait::Up(Some(Duration::from_millis(200))), &mut |h| {
            waited = Some(h.clone())
        })
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
