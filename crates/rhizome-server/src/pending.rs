//! Pending uploads kept in the store, for replicas over one PostgreSQL database: an upload
//! answered 202 is in the job board's `serve_uploads` before the answer (its files' bytes
//! and names, or its texts, under its job id), leased to the replica that accepted it.
//! Each replica renews its leases every [`RENEW_EVERY`] while the upload waits or is
//! indexed, and removes the row once its job has ended. A replica that dies lets its
//! leases run out after [`LEASE_SECS`]; any other replica with the workspace open claims
//! the upload (`FOR UPDATE SKIP LOCKED`: one claimant) within [`CLAIM_EVERY`] and runs it
//! under the same job id. A run cut short and run again writes nothing twice (documents
//! already indexed are skipped), so an upload claimed while its first replica was only
//! slow is still indexed once.
//!
//! A store without a job board (SQLite) keeps the disk spool instead ([`crate::spool`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use rhizome_core::Document;
use rhizome_engine::{upload_extension, JobBoard, Upload};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::error::ApiError;
use crate::jobs::{Jobs, UploadDir, Work, WriteJob};
use crate::spool::MAX_RESUMES;

/// Seconds a lease lasts without being renewed.
pub const LEASE_SECS: u64 = 15;
/// How often a replica renews its leases.
pub const RENEW_EVERY: Duration = Duration::from_secs(5);
/// How often a replica looks for uploads whose lease ran out.
pub const CLAIM_EVERY: Duration = Duration::from_secs(2);

/// What a kept upload holds, before its files' bytes.
#[derive(Serialize, Deserialize)]
struct Head {
    /// (uploaded name, length in bytes), in the order of the bytes that follow.
    files: Vec<(String, u64)>,
    texts: Vec<Document>,
}

/// An upload as kept: the length of its head (8 bytes, little-endian), the head (JSON),
/// then each file's bytes.
fn encode(work: &Work) -> Result<Vec<u8>, String> {
    let (files, texts) = match work {
        Work::Files { uploads, .. } => {
            let mut files = Vec::new();
            for u in uploads {
                let bytes = std::fs::read(&u.path).map_err(|e| format!("reading the upload {}: {e}", u.name))?;
                files.push((u.name.clone(), bytes));
            }
            (files, Vec::new())
        }
        Work::Texts(docs, _) => (Vec::new(), docs.clone()),
        Work::Delete { .. } => return Err("a deletion is not kept".into()),
    };
    let head = Head { files: files.iter().map(|(n, b)| (n.clone(), b.len() as u64)).collect(), texts };
    let head = serde_json::to_vec(&head).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(8 + head.len() + files.iter().map(|(_, b)| b.len()).sum::<usize>());
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(&head);
    for (_, b) in files {
        out.extend_from_slice(&b);
    }
    Ok(out)
}

/// The work of a kept upload, its files written to a temporary directory.
fn decode(payload: &[u8]) -> Result<Work, String> {
    let bad = || "a kept upload is damaged".to_string();
    let n = u64::from_le_bytes(payload.get(..8).ok_or_else(bad)?.try_into().map_err(|_| bad())?) as usize;
    let head: Head = serde_json::from_slice(payload.get(8..8usize.saturating_add(n)).ok_or_else(bad)?)
        .map_err(|e| format!("a kept upload is damaged: {e}"))?;
    if head.files.is_empty() {
        return Ok(Work::Texts(head.texts, UploadDir::None));
    }
    let dir = tempfile::Builder::new()
        .prefix("rhizome-upload-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let mut at = 8 + n;
    let mut uploads = Vec::new();
    for (i, (name, len)) in head.files.into_iter().enumerate() {
        let end = at.saturating_add(len as usize);
        let bytes = payload.get(at..end).ok_or_else(bad)?;
        at = end;
        let ext = upload_extension(&name).map_err(|e| e.to_string())?;
        let path = dir.path().join(format!("upload-{i}.{ext}"));
        std::fs::write(&path, bytes).map_err(|e| format!("cannot save an upload: {e}"))?;
        uploads.push(Upload { name, path });
    }
    Ok(Work::Files { uploads, dir: UploadDir::Temp(dir) })
}

/// Keep upload `id` in the job board before it is answered 202. Err: 503 when the
/// uploads kept would exceed `max_bytes`, 500 when it could not be written.
pub async fn keep(
    board: Arc<dyn JobBoard>,
    id: u64,
    replica: String,
    work: &Work,
    max_bytes: u64,
) -> Result<(), ApiError> {
    let payload = encode(work).map_err(ApiError::internal)?;
    let kept = tokio::task::spawn_blocking(move || board.keep_upload(id, &replica, &payload, LEASE_SECS, max_bytes))
        .await
        .map_err(ApiError::join)??;
    if !kept {
        return Err(ApiError::new(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            format!("too many uploads are waiting to be indexed (over {} MiB in all)", max_bytes >> 20),
            "retry when the jobs queued have finished",
        ));
    }
    Ok(())
}

/// Remove upload `id` from the board (its job ended); a failure is logged (the upload
/// would run again elsewhere, writing nothing twice).
pub fn forget(board: &dyn JobBoard, id: u64) {
    if let Err(e) = board.forget_upload(id) {
        tracing::warn!(job = id, "removing the finished upload from the database: {e}");
    }
}

/// A replica's leases: renewed while the workspace is open, given up at shutdown; and
/// uploads of replicas that stopped renewing claimed and queued here, under their ids.
pub async fn leases(jobs: Weak<Jobs>, queue: mpsc::WeakSender<WriteJob>, cancel: Arc<AtomicBool>) {
    let mut renewed = Instant::now();
    loop {
        tokio::time::sleep(CLAIM_EVERY).await;
        let Some(j) = jobs.upgrade() else { return };
        let Some((board, replica)) = j.shared() else { return };
        if cancel.load(Ordering::Relaxed) {
            // Stopping: the uploads not finished may be claimed at once by another replica.
            let _ = tokio::task::spawn_blocking(move || board.release(&replica)).await;
            return;
        }
        if renewed.elapsed() >= RENEW_EVERY {
            let (b, r) = (board.clone(), replica.clone());
            match tokio::task::spawn_blocking(move || b.renew(&r, LEASE_SECS)).await {
                Ok(Ok(())) => renewed = Instant::now(),
                Ok(Err(e)) => tracing::warn!("renewing the leases of this server's uploads: {e}"),
                Err(_) => {}
            }
        }
        let Some(queue) = queue.upgrade() else { return };
        // Claim while the queue has room: one upload at a time, oldest first.
        while queue.capacity() > 0 && !cancel.load(Ordering::Relaxed) {
            let (b, r) = (board.clone(), replica.clone());
            let claimed = match tokio::task::spawn_blocking(move || b.claim(&r, LEASE_SECS)).await {
                Ok(Ok(Some(c))) => c,
                Ok(Ok(None)) | Err(_) => break,
                Ok(Err(e)) => {
                    tracing::warn!("looking for uploads of stopped servers: {e}");
                    break;
                }
            };
            let id = claimed.id;
            let handle = j.resume(id, "index");
            let work = if claimed.claims > MAX_RESUMES {
                Err(format!(
                    "servers stopped {MAX_RESUMES} times while running this job; it is not run again: upload the files again"
                ))
            } else {
                decode(&claimed.payload)
            };
            match work {
                Ok(work) => {
                    tracing::info!(job = id, "taking over job {id}: the server that accepted it stopped renewing it");
                    if queue.send(WriteJob { job: handle.clone(), work, kept: true }).await.is_err() {
                        return;
                    }
                }
                Err(e) => {
                    crate::jobs::fail(&handle, &ApiError::internal(e));
                    let b = board.clone();
                    let _ = tokio::task::spawn_blocking(move || forget(b.as_ref(), id)).await;
                }
            }
        }
    }
}

/// `RHIZOME_TEST_JOB_DELAY_SECS` (tests only): each write job waits this long before it
/// runs, so that a test can stop a server while a job is pending.
pub async fn test_delay(cancel: &AtomicBool) {
    let secs: f64 = std::env::var("RHIZOME_TEST_JOB_DELAY_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let until = std::time::Instant::now() + Duration::from_secs_f64(secs.clamp(0.0, 86400.0));
    while std::time::Instant::now() < until && !cancel.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_upload_reads_back_whole_and_a_damaged_one_is_an_error() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::write(&a, "Aage Bohr.").unwrap();
        std::fs::write(&b, [0u8, 1, 2, 255]).unwrap();
        let uploads = vec![Upload { name: "x.txt".into(), path: a }, Upload { name: "dir/y.md".into(), path: b }];
        let payload = encode(&Work::Files { uploads, dir: UploadDir::None }).unwrap();
        let Work::Files { uploads, dir: _dir } = decode(&payload).unwrap() else { panic!("files") };
        assert_eq!((uploads[0].name.as_str(), uploads[1].name.as_str()), ("x.txt", "dir/y.md"));
        assert_eq!(std::fs::read_to_string(&uploads[0].path).unwrap(), "Aage Bohr.");
        assert_eq!(std::fs::read(&uploads[1].path).unwrap(), [0u8, 1, 2, 255]);
        for cut in [0, 5, 8, 20, payload.len() - 1] {
            assert!(decode(&payload[..cut]).is_err(), "cut at {cut}");
        }
    }
}
