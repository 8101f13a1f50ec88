//! The upload spool: an accepted upload is kept on disk until its job has finished, so a
//! server that dies mid-job (killed, power cut) runs the job again when it restarts,
//! under the same job id. Documents are written in batches that commit whole, and
//! indexing files already indexed writes nothing, so the rerun ends the index exactly as
//! an uninterrupted job would have.
//!
//! Layout, under the spool directory: each `job-*/` holds the uploaded files under names of
//! the server's own and `job.json` (the job id, each file's uploaded name and saved name,
//! or the texts of a JSON upload). `job.json` is written last (synced, then renamed into
//! place): a directory without it is an upload that was never acknowledged, removed at
//! start. `last-id` keeps the last job id given, so ids are not reused after a restart.
//!
//! A spool belongs to one server at a time (`flock` on `spool.lock`, released with the
//! process): replicas of `rhizome serve` over one database each need a spool of their own
//! (`--index DIR`), else one would run, and remove, uploads another is running.

use std::io::Write;
use std::path::{Path, PathBuf};

use rhizome_core::Document;
use rhizome_engine::Upload;

use crate::error::ApiError;
use crate::jobs::{fail, Jobs, UploadDir, Work, WriteJob};
use serde::{Deserialize, Serialize};

/// Where accepted uploads wait for their job.
#[derive(Debug, Clone)]
pub struct Spool {
    root: PathBuf,
    /// Holds the spool's lock for the server's life.
    _lock: Option<std::sync::Arc<std::fs::File>>,
}

/// What a spooled job holds.
#[derive(Debug, Serialize, Deserialize)]
pub struct Journal {
    pub id: u64,
    /// (uploaded name, saved file name inside the job's directory)
    #[serde(default)]
    pub files: Vec<(String, String)>,
    /// Documents given as text (JSON uploads).
    #[serde(default)]
    pub texts: Vec<Document>,
    /// Starts of the server that found this job unfinished: a job that keeps stopping
    /// its server is not run again forever (see [`MAX_RESUMES`]).
    #[serde(default)]
    pub resumes: u32,
}

/// Restarts after which an unfinished job is reported failed instead of run again.
pub const MAX_RESUMES: u32 = 3;

/// A job's directory; removed when dropped unless [`SpoolDir::keep`] was called (a job
/// stopped by shutdown keeps its files for the next start).
#[derive(Debug)]
pub struct SpoolDir {
    path: PathBuf,
    keep: bool,
}

impl SpoolDir {
    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn keep(&mut self) {
        self.keep = true;
    }
}

impl Drop for SpoolDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn io(what: &str, p: &Path, e: std::io::Error) -> String {
    format!("{what} {}: {e}", p.display())
}

impl Spool {
    /// The spool at `root`, without its lock (tests).
    #[cfg(test)]
    pub fn new(root: PathBuf) -> Self {
        Spool { root, _lock: None }
    }

    /// The spool at `root` (made when missing), locked for this process: another server
    /// holding it is an error that says to give each server a directory of its own.
    pub fn open(root: PathBuf) -> Result<Self, String> {
        use std::os::fd::AsRawFd;
        std::fs::create_dir_all(&root).map_err(|e| io("cannot make the upload spool", &root, e))?;
        let path = root.join("spool.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io("cannot open", &path, e))?;
        // SAFETY: flock(2) on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            return Err(format!(
                "the upload spool {} is in use by another rhizome serve ({}); each server needs its \
                 own: start this one with another --index DIR (a database store keeps only the \
                 spool there)",
                root.display(),
                if holder.trim().is_empty() { "pid unknown".to_string() } else { format!("pid {}", holder.trim()) }
            ));
        }
        let _ = file.set_len(0);
        let _ = std::io::Write::write_all(&mut &file, std::process::id().to_string().as_bytes());
        Ok(Spool { root, _lock: Some(std::sync::Arc::new(file)) })
    }

    /// The last job id given by an earlier run (0 when none).
    pub fn last_id(&self) -> u64 {
        std::fs::read_to_string(self.root.join("last-id")).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
    }

    /// Remember `id` as the last given (best effort: ids only need to grow).
    pub fn note_id(&self, id: u64) {
        if std::fs::create_dir_all(&self.root).is_ok() {
            let tmp = self.root.join("last-id.tmp");
            if std::fs::write(&tmp, id.to_string()).is_ok() {
                let _ = std::fs::rename(&tmp, self.root.join("last-id"));
            }
        }
    }

    /// A new, empty directory for an upload's files.
    pub fn create(&self) -> Result<SpoolDir, String> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = self.root.join(format!("job-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).map_err(|e| io("cannot make the upload directory", &path, e))?;
        Ok(SpoolDir { path, keep: false })
    }

    /// Accept the job: its files are in `dir`; sync them, then write `job.json` (synced,
    /// renamed into place). After this the upload survives a crash.
    pub fn commit(&self, dir: &SpoolDir, journal: &Journal) -> Result<(), String> {
        for (_, saved) in &journal.files {
            let p = dir.path.join(saved);
            std::fs::File::open(&p).and_then(|f| f.sync_all()).map_err(|e| io("cannot sync the upload", &p, e))?;
        }
        let tmp = dir.path.join("job.json.tmp");
        let body = serde_json::to_vec(journal).map_err(|e| e.to_string())?;
        let mut f = std::fs::File::create(&tmp).map_err(|e| io("cannot write", &tmp, e))?;
        f.write_all(&body).and_then(|()| f.sync_all()).map_err(|e| io("cannot write", &tmp, e))?;
        std::fs::rename(&tmp, dir.path.join("job.json")).map_err(|e| io("cannot write", &tmp, e))?;
        if let Ok(d) = std::fs::File::open(&dir.path) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Write `journal` again (its count of resumes changed).
    pub fn rewrite(&self, dir: &SpoolDir, journal: &Journal) -> Result<(), String> {
        let tmp = dir.path.join("job.json.tmp");
        let body = serde_json::to_vec(journal).map_err(|e| e.to_string())?;
        std::fs::write(&tmp, body).map_err(|e| io("cannot write", &tmp, e))?;
        std::fs::rename(&tmp, dir.path.join("job.json")).map_err(|e| io("cannot write", &tmp, e))
    }

    /// Jobs accepted by an earlier run that did not finish, oldest first, with their
    /// directories; directories of uploads never accepted are removed.
    pub fn pending(&self) -> Vec<(Journal, SpoolDir)> {
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(&self.root) else { return out };
        for e in entries.flatten() {
            let path = e.path();
            if !path.is_dir() || !e.file_name().to_string_lossy().starts_with("job-") {
                continue;
            }
            let journal =
                std::fs::read(path.join("job.json")).ok().and_then(|b| serde_json::from_slice::<Journal>(&b).ok());
            match journal {
                Some(j) => out.push((j, SpoolDir { path, keep: false })),
                None => {
                    let _ = std::fs::remove_dir_all(&path);
                }
            }
        }
        out.sort_by_key(|(j, _)| j.id);
        out
    }
}

impl Journal {
    /// The uploads of a spooled job, their files inside `dir`.
    pub fn uploads(&self, dir: &SpoolDir) -> Vec<Upload> {
        self.files.iter().map(|(name, saved)| Upload { name: name.clone(), path: dir.path.join(saved) }).collect()
    }
}

/// The jobs an earlier run accepted and did not finish, listed under their ids and
/// queued again (before any new upload).
pub async fn resume_pending(jobs: &Jobs, queue: &tokio::sync::mpsc::Sender<WriteJob>) {
    let Some(spool) = &jobs.spool else { return };
    for (mut journal, dir) in spool.pending() {
        journal.resumes += 1;
        let handle = jobs.resume(journal.id, "index");
        if journal.resumes > MAX_RESUMES {
            // The directory goes with `dir`: the job is over.
            let e = ApiError::internal(format!(
                "the server stopped {MAX_RESUMES} times while running this job; it is not run again: upload the files again"
            ));
            tracing::error!(job = journal.id, "job failed: {}", e.body.error);
            fail(&handle, &e);
            continue;
        }
        if let Err(e) = spool.rewrite(&dir, &journal) {
            tracing::error!(job = journal.id, "job: {e}");
        }
        let Journal { id, files, texts, .. } = &journal;
        let work = if files.is_empty() {
            Work::Texts(texts.clone(), UploadDir::Spooled(dir))
        } else {
            let uploads = journal.uploads(&dir);
            Work::Files { uploads, dir: UploadDir::Spooled(dir) }
        };
        tracing::info!(
            job = id,
            "resuming job {id} ({} file(s), {} text(s)) accepted before the last stop",
            files.len(),
            texts.len()
        );
        if queue.send(WriteJob { job: handle.clone(), work, kept: false }).await.is_err() {
            fail(&handle, &ApiError::from(rhizome_core::Error::Cancelled));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spool_serves_one_server_at_a_time() {
        let tmp = tempfile::tempdir().unwrap();
        let first = Spool::open(tmp.path().join("spool")).unwrap();
        // flock locks belong to the open file: a second open in this process conflicts too.
        let err = Spool::open(tmp.path().join("spool")).unwrap_err();
        assert!(err.contains("in use by another rhizome serve") && err.contains("--index"), "{err}");
        drop(first);
        Spool::open(tmp.path().join("spool")).unwrap();
    }

    #[test]
    fn an_accepted_upload_is_pending_until_dropped_and_an_unacknowledged_one_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let spool = Spool::new(tmp.path().join("spool"));
        let dir = spool.create().unwrap();
        std::fs::write(dir.path().join("upload-0.txt"), "Aage Bohr.").unwrap();
        let journal =
            Journal { id: 7, files: vec![("a.txt".into(), "upload-0.txt".into())], texts: vec![], resumes: 0 };
        spool.commit(&dir, &journal).unwrap();
        let mut kept = dir;
        kept.keep();
        drop(kept);
        // Saved but never acknowledged: no journal.
        let half = spool.create().unwrap();
        std::fs::write(half.path().join("upload-0.txt"), "half").unwrap();
        let half_path = half.path().to_path_buf();
        let mut half = half;
        half.keep();
        drop(half);
        spool.note_id(9);
        let pending = spool.pending();
        assert_eq!(pending.len(), 1);
        let (j, d) = &pending[0];
        assert_eq!((j.id, j.resumes), (7, 0));
        let uploads = j.uploads(d);
        assert_eq!(uploads[0].name, "a.txt");
        assert_eq!(std::fs::read_to_string(&uploads[0].path).unwrap(), "Aage Bohr.");
        assert!(!half_path.exists(), "the unacknowledged upload is removed");
        assert_eq!(spool.last_id(), 9);
        let path = d.path().to_path_buf();
        drop(pending);
        assert!(!path.exists(), "a finished job's upload is removed");
        assert!(spool.pending().is_empty());
    }
}
