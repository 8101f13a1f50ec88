//! Write jobs: one background worker takes uploads and deletions from a queue and runs
//! them one after another (the index has one writer at a time), while queries go on
//! against the last committed state. Each job's progress is a `watch` value that
//! `GET /jobs/{id}` reads and `GET /jobs/{id}/events` streams. Uploads wait in the
//! [`crate::spool`] until their job ends, so a job cut short by a crash runs again, under
//! its id, when the server restarts (`resumed` in its view).
//!
//! Replicas: on a store several servers share (PostgreSQL), job ids come from the store's
//! job board ([`rhizome_engine::JobBoard`]) and each job's progress is written there too
//! (on change, at most every [`MIRROR_EVERY`], and every [`HEARTBEAT`] while it lasts), so
//! any replica answers `GET /jobs/{id}` for a job another accepted. The upload itself is
//! kept there too, leased to the replica running it, which another takes over when it
//! stops ([`crate::pending`]); writes of all replicas take turns on the store's writer lock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rhizome_core::Document;
use rhizome_engine::{upload_runs, DeleteOutcome, Engine, IndexInput, JobBoard, Progress, Upload};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::spool::{Spool, SpoolDir};

/// Jobs kept for `GET /jobs/{id}` after they finish.
const KEEP_FINISHED: usize = 1000;

/// Shortest time between two writes of a job's progress to the job board.
const MIRROR_EVERY: Duration = Duration::from_millis(300);
/// A job's progress is written to the board this often even when unchanged, so that a
/// job not written for [`SILENT_AFTER`] is known to have lost its replica.
const HEARTBEAT: Duration = Duration::from_secs(5);
const SILENT_AFTER: u64 = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
}

/// A file or document that was not indexed, or a warning.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct JobError {
    /// The uploaded name (`upload:NAME`), or empty for a warning about the whole job.
    pub file: String,
    pub error: String,
}

/// A write job's progress (`GET /jobs/{id}`, and each event of `/events`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct JobView {
    pub id: u64,
    /// `index` or `delete`.
    pub kind: String,
    pub state: JobState,
    /// Units done of the current stage (documents, bytes of text, items).
    pub done: u64,
    pub total: u64,
    /// The pipeline stage running (`indexing`, `synonymy`, ...).
    pub stage: String,
    /// Where the stage is in a document with pages (`report.pdf: page 120 of 500`);
    /// empty otherwise.
    #[serde(default)]
    pub place: String,
    pub errors: Vec<JobError>,
    /// What the job did when done (`report`, `skipped`, `stats`, ... for an upload;
    /// `deleted`, ... for a deletion); for a failed job, null.
    #[schema(value_type = Object)]
    pub outcome: Option<Value>,
    /// True when the server that accepted this job (an earlier run of this one, or
    /// another replica) stopped before it finished: it runs again from the upload kept on
    /// disk or in the database, and documents already committed are not written twice.
    pub resumed: bool,
}

impl JobView {
    /// A job just accepted, waiting its turn.
    pub fn queued(id: u64, kind: &str, resumed: bool) -> JobView {
        JobView {
            id,
            kind: kind.into(),
            state: JobState::Queued,
            done: 0,
            total: 0,
            stage: "queued".into(),
            place: String::new(),
            errors: vec![],
            outcome: None,
            resumed,
        }
    }

    pub fn finished(&self) -> bool {
        matches!(self.state, JobState::Done | JobState::Failed)
    }
}

/// All jobs, by id.
#[derive(Default)]
pub struct Jobs {
    next: AtomicU64,
    map: Mutex<BTreeMap<u64, watch::Sender<JobView>>>,
    /// Where uploads wait for their job (none: a temporary directory, lost in a crash).
    pub spool: Option<Spool>,
    /// The store's job board when several servers may share the store: ids and progress there.
    board: Option<Arc<dyn JobBoard>>,
    /// This server, as the board names it (host, pid, address).
    replica: String,
    /// Most bytes of uploads kept in the board, all replicas together.
    max_kept: u64,
}

/// A job found by id: run here, or known from the job board.
pub enum Found {
    Here(watch::Sender<JobView>),
    Elsewhere(JobView),
}

impl Jobs {
    /// Jobs numbered by `board` when given, else after those of earlier runs that used
    /// the same spool.
    pub fn new(spool: Option<Spool>, board: Option<Arc<dyn JobBoard>>, replica: String, max_kept: u64) -> Self {
        let last = spool.as_ref().map_or(0, Spool::last_id);
        Jobs { next: AtomicU64::new(last), map: Mutex::default(), spool, board, replica, max_kept }
    }

    /// The job board and this server's name in it, when the store is shared: uploads are
    /// then kept there ([`crate::pending`]), not in the spool.
    pub fn shared(&self) -> Option<(Arc<dyn JobBoard>, String)> {
        self.board.clone().map(|b| (b, self.replica.clone()))
    }

    /// The spool new uploads go to: none when they are kept in the job board.
    pub fn spool_for_new(&self) -> Option<&Spool> {
        self.spool.as_ref().filter(|_| self.board.is_none())
    }

    /// Keep upload `id` in the job board (a shared store) before it is answered.
    pub async fn keep(&self, id: u64, work: &Work) -> Result<bool, ApiError> {
        let Some((board, replica)) = self.shared() else { return Ok(false) };
        crate::pending::keep(board, id, replica, work, self.max_kept).await?;
        Ok(true)
    }

    pub async fn create(&self, kind: &str) -> Result<watch::Sender<JobView>, ApiError> {
        let id = match &self.board {
            Some(b) => {
                let (b, replica) = (b.clone(), self.replica.clone());
                tokio::task::spawn_blocking(move || b.create(&replica)).await.map_err(ApiError::join)??
            }
            None => {
                let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(s) = &self.spool {
                    s.note_id(id);
                }
                id
            }
        };
        Ok(self.insert(id, kind, false))
    }

    /// A job of an earlier run, under its own id.
    pub fn resume(&self, id: u64, kind: &str) -> watch::Sender<JobView> {
        self.next.fetch_max(id, Ordering::Relaxed);
        self.insert(id, kind, true)
    }

    fn insert(&self, id: u64, kind: &str, resumed: bool) -> watch::Sender<JobView> {
        let view = JobView::queued(id, kind, resumed);
        crate::telemetry::metrics::job(kind, "queued");
        let (tx, rx) = watch::channel(view);
        if let Some(b) = &self.board {
            tokio::spawn(mirror(b.clone(), rx));
        }
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(id, tx.clone());
        // Forget the oldest finished jobs beyond the ones kept.
        let finished: Vec<u64> = map.iter().filter(|(_, t)| t.borrow().finished()).map(|(k, _)| *k).collect();
        for k in finished.iter().take(finished.len().saturating_sub(KEEP_FINISHED)) {
            map.remove(k);
        }
        tx
    }

    pub fn get(&self, id: u64) -> Option<watch::Sender<JobView>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).get(&id).cloned()
    }

    /// The job `id`: one of this server's, else one the job board knows (None: unknown).
    pub async fn find(&self, id: u64) -> Result<Option<Found>, ApiError> {
        if let Some(tx) = self.get(id) {
            return Ok(Some(Found::Here(tx)));
        }
        Ok(self.elsewhere(id).await?.map(Found::Elsewhere))
    }

    /// The job `id` as the job board has it (None: no board, or unknown there).
    pub async fn elsewhere(&self, id: u64) -> Result<Option<JobView>, ApiError> {
        let Some(b) = self.board.clone() else { return Ok(None) };
        let found = tokio::task::spawn_blocking(move || b.get(id)).await.map_err(ApiError::join)??;
        Ok(found.map(|j| {
            let mut view = j
                .view
                .and_then(|v| serde_json::from_str::<JobView>(&v).ok())
                .unwrap_or_else(|| JobView::queued(id, "index", false));
            if !view.finished() && j.age_secs > SILENT_AFTER {
                view.stage = format!(
                    "{} (as last reported {} s ago by the server running it, {}; if that server \
                     stopped, another replica takes the job over within {} s)",
                    view.stage,
                    j.age_secs,
                    j.replica,
                    crate::pending::LEASE_SECS + crate::pending::CLAIM_EVERY.as_secs()
                );
            }
            view
        }))
    }

    pub fn list(&self) -> Vec<JobView> {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).values().rev().map(|t| t.borrow().clone()).collect()
    }
}

/// Write a job's progress to the job board as it changes, until it is finished.
async fn mirror(board: Arc<dyn JobBoard>, mut rx: watch::Receiver<JobView>) {
    rx.mark_changed();
    loop {
        // A change, or the heartbeat; the sender gone (job forgotten): stop.
        tokio::select! {
            r = rx.changed() => if r.is_err() { return },
            _ = tokio::time::sleep(HEARTBEAT) => {}
        }
        let view = rx.borrow_and_update().clone();
        let (id, done) = (view.id, view.finished());
        let Ok(json) = serde_json::to_string(&view) else { return };
        // The last state is retried a while: a job must not stay "running" on the board.
        let tries = if done { 20 } else { 1 };
        for attempt in 0..tries {
            let (b, json) = (board.clone(), json.clone());
            match tokio::task::spawn_blocking(move || b.update(id, &json)).await {
                Ok(Ok(())) => break,
                Ok(Err(e)) if attempt == 0 => eprintln!("rhizome serve: job {id}: writing its progress: {e}"),
                _ => {}
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        if done {
            return;
        }
        tokio::time::sleep(MIRROR_EVERY).await;
    }
}

/// Where a job's uploaded files wait: the spool (kept across a crash) or a temporary
/// directory. Either is removed when the job ends, unless it was stopped by shutdown.
pub enum UploadDir {
    /// Held only to be removed when the job is dropped.
    Temp(#[allow(dead_code)] tempfile::TempDir),
    Spooled(SpoolDir),
    /// JSON texts: nothing on disk.
    None,
}

impl UploadDir {
    /// Keep the spooled upload for the next start (the job was stopped, not finished).
    fn keep(&mut self) {
        if let UploadDir::Spooled(d) = self {
            d.keep();
        }
    }
}

/// What a write job does.
pub enum Work {
    /// Uploaded files, saved in `dir` (removed when the job is dropped).
    Files { uploads: Vec<Upload>, dir: UploadDir },
    /// Documents given as text (spooled in `dir` when the server has a spool).
    Texts(Vec<Document>, UploadDir),
    /// Delete a document by id or source; the answer goes back to the waiting request.
    Delete { doc: String, reply: oneshot::Sender<Result<DeleteOutcome, ApiError>> },
}

pub struct WriteJob {
    pub job: watch::Sender<JobView>,
    pub work: Work,
    /// The upload is kept in the job board until the job ends ([`crate::pending`]).
    pub kept: bool,
}

/// Pipeline progress into a job's view.
struct JobProgress<'a>(&'a watch::Sender<JobView>);

impl Progress for JobProgress<'_> {
    fn start(&self, stage: &str, total: u64) {
        self.0.send_modify(|v| {
            v.stage = stage.to_string();
            v.total = total;
            v.done = 0;
            v.place.clear();
        });
    }
    fn at(&self, place: &str) {
        self.0.send_modify(|v| v.place = place.to_string());
    }
    fn advance(&self, n: u64) {
        self.0.send_modify(|v| v.done += n);
    }
    fn finish(&self) {
        self.0.send_modify(|v| v.done = v.total);
    }
    fn warn(&self, msg: &str) {
        // "skipped upload:x.txt: reason" names its file; other warnings concern the job.
        let (file, error) = match msg.strip_prefix("skipped ").and_then(|m| m.split_once(": ")) {
            Some((f, e)) => (f.to_string(), e.to_string()),
            None => (String::new(), msg.to_string()),
        };
        self.0.send_modify(|v| v.errors.push(JobError { file, error }));
    }
}

pub(crate) fn fail(job: &watch::Sender<JobView>, e: &ApiError) {
    let (id, kind) = {
        let v = job.borrow();
        (v.id, v.kind.clone())
    };
    crate::telemetry::metrics::job(&kind, "failed");
    tracing::warn!(job = id, kind, "job failed: {}", e.body.error);
    job.send_modify(|v| {
        v.state = JobState::Failed;
        v.errors.push(JobError { file: String::new(), error: e.body.error.clone() });
    });
}

fn succeed<T: Serialize>(job: &watch::Sender<JobView>, outcome: &T) {
    let value = serde_json::to_value(outcome).ok();
    crate::telemetry::metrics::job(&job.borrow().kind, "done");
    job.send_modify(|v| {
        v.state = JobState::Done;
        v.stage = "done".into();
        v.outcome = value;
    });
}

/// Run `write` until another writer's lock stops refusing it: an accepted job waits its
/// turn however long a CLI run (`rhizome index` of a large folder) holds the index, saying
/// so in its stage; the engine waits a while each time (`cmd_serve::engine`), and between
/// attempts the shutdown flag is looked at, so a stop ends the wait as a cancellation
/// (an upload's files stay spooled for the next start). Nothing is written before the
/// lock is taken, so a refused attempt leaves nothing to undo.
/// With `--no-wait` (the engine does not wait for writers) a refusal fails the job at once.
fn in_writer_turn<T>(
    engine: &Engine,
    job: &watch::Sender<JobView>,
    cancel: &AtomicBool,
    mut write: impl FnMut() -> rhizome_core::Result<T>,
) -> rhizome_core::Result<T> {
    loop {
        match write() {
            Err(rhizome_core::Error::Busy { msg, .. }) if engine.waits_for_writers() => {
                if cancel.load(Ordering::Relaxed) {
                    return Err(rhizome_core::Error::Cancelled);
                }
                job.send_modify(|v| v.stage = format!("waiting for the writer lock ({msg})"));
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            r => return r,
        }
    }
}

/// A job that ended in error: failed, unless shutdown stopped it and its upload is kept
/// in the job board, where another replica (or this one, started again) takes it over:
/// it then stays queued, so that a client polling it does not give up.
fn stopped(job: &watch::Sender<JobView>, e: rhizome_core::Error, kept: bool) {
    if kept && matches!(e, rhizome_core::Error::Cancelled) {
        job.send_modify(|v| {
            v.state = JobState::Queued;
            v.stage = "queued (its server stopped: another replica takes it over)".into();
        });
    } else {
        fail(job, &ApiError::from(e));
    }
}

/// Run one job to its end (on a blocking thread).
fn run(engine: &Engine, job: WriteJob, cancel: &AtomicBool) {
    let WriteJob { job, work, kept } = job;
    job.send_modify(|v| {
        v.state = JobState::Running;
        v.stage = "starting".into();
    });
    let progress = JobProgress(&job);
    match work {
        Work::Delete { doc, reply } => {
            let r = in_writer_turn(engine, &job, cancel, || engine.delete(&doc, cancel)).map_err(ApiError::from);
            match &r {
                Ok(o) => succeed(&job, o),
                Err(e) => fail(&job, e),
            }
            let _ = reply.send(r);
        }
        Work::Files { uploads, mut dir } => {
            // Documents first, then each edge list (an import of its own).
            let (runs, skipped) = upload_runs(uploads, &|place| progress.at(place));
            for s in &skipped {
                progress.warn(&format!("skipped {}: {}", s.path, s.reason));
            }
            if runs.is_empty() {
                fail(&job, &ApiError::bad("files", "nothing to index: every file was skipped", "see the errors"));
                return;
            }
            let mut outcomes = Vec::new();
            for input in runs {
                match in_writer_turn(engine, &job, cancel, || engine.index(input.clone(), &progress, cancel)) {
                    Ok(o) => outcomes.push(o),
                    Err(e) => {
                        if matches!(e, rhizome_core::Error::Cancelled) {
                            dir.keep();
                        }
                        drop(dir);
                        return stopped(&job, e, kept);
                    }
                }
            }
            drop(dir);
            match outcomes.len() {
                1 => succeed(&job, &outcomes[0]),
                _ => succeed(&job, &outcomes),
            }
        }
        Work::Texts(docs, mut dir) => match in_writer_turn(engine, &job, cancel, || {
            engine.index(IndexInput::Documents(docs.clone()), &progress, cancel)
        }) {
            Ok(o) => succeed(&job, &o),
            Err(e) => {
                if matches!(e, rhizome_core::Error::Cancelled) {
                    dir.keep();
                }
                stopped(&job, e, kept)
            }
        },
    }
}

/// The worker: jobs one after another until the queue closes. After `cancel` is set, a
/// job in progress stops at its next batch boundary and queued jobs fail at once.
pub async fn worker(engine: Arc<Engine>, jobs: Arc<Jobs>, mut rx: mpsc::Receiver<WriteJob>, cancel: Arc<AtomicBool>) {
    while let Some(job) = rx.recv().await {
        crate::pending::test_delay(&cancel).await;
        let kept = job.kept.then(|| (jobs.shared(), job.job.clone()));
        if cancel.load(Ordering::Relaxed) {
            let e = ApiError::from(rhizome_core::Error::Cancelled);
            stopped(&job.job, rhizome_core::Error::Cancelled, job.kept);
            match job.work {
                Work::Delete { reply, .. } => {
                    let _ = reply.send(Err(e));
                }
                // A spooled upload runs at the next start.
                Work::Files { mut dir, .. } | Work::Texts(_, mut dir) => dir.keep(),
            }
            continue;
        }
        let (engine, stop) = (engine.clone(), cancel.clone());
        let handle = job.job.clone();
        // Each job is a span of its own: its log lines carry its id, its trace groups its work.
        let span = {
            let v = handle.borrow();
            tracing::info_span!("job", id = v.id, kind = %v.kind)
        };
        if let Err(e) = tokio::task::spawn_blocking(move || span.in_scope(|| run(&engine, job, &stop))).await {
            tracing::error!(job = handle.borrow().id, "write job did not finish: {e}");
            fail(&handle, &ApiError::join(e));
        }
        // A kept upload whose job ended is removed; one stopped by shutdown stays, for
        // another replica (or this one's next start) to run.
        if let Some((Some((board, _)), job)) = kept {
            let (id, ended) = (job.borrow().id, job.borrow().finished());
            if ended {
                let _ = tokio::task::spawn_blocking(move || crate::pending::forget(board.as_ref(), id)).await;
            }
        }
        crate::memory::trim();
    }
}
