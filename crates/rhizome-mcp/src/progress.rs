//! Progress of a write, for a client that asked for it (a `progressToken` in the request's
//! `_meta`): the write's stages become `notifications/progress`. The engine reports each
//! stage from zero with its own total; the client is told units done over every stage so
//! far (so the figure only grows), units known so far, and what runs, at most every
//! [`EVERY`], the last state always, before the tool's result.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rhizome_engine::Progress;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;

/// Least time between two notifications of one write.
const EVERY: Duration = Duration::from_millis(100);

/// Where a write is, as the client is told it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    /// Units done, over every stage so far.
    pub done: u64,
    /// Units known so far: the stages done and the one running.
    pub total: u64,
    /// The stage running and how far it is (`indexing: 3 of 10`, with the page when known).
    pub message: String,
}

#[derive(Default)]
struct State {
    /// Units of the stages before the running one.
    before: u64,
    stage: String,
    done: u64,
    total: u64,
    place: String,
}

/// A write's progress: what the writer tells it goes to the client, if one asked
/// ([`Tracker::none`] otherwise). Clones report to the same client.
#[derive(Clone, Default)]
pub struct Tracker(Option<Arc<(Mutex<State>, watch::Sender<Step>)>>);

impl Tracker {
    /// Nobody asked: reports go nowhere.
    pub fn none() -> Tracker {
        Tracker(None)
    }

    /// True when a client is told.
    pub fn wanted(&self) -> bool {
        self.0.is_some()
    }

    /// The writer is at `done` of `total` units of `stage` (`place`: where in a document
    /// with pages, or empty). A new stage name, or a count that went back, starts a stage.
    pub fn stage(&self, stage: &str, done: u64, total: u64, place: &str) {
        self.update(|s| {
            if s.stage != stage || done < s.done {
                s.before += s.total.max(s.done);
                s.stage = stage.to_string();
            }
            s.done = done;
            s.total = total;
            s.place = place.to_string();
        });
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        let Some(inner) = &self.0 else { return };
        let Ok(mut s) = inner.0.lock() else { return };
        f(&mut s);
        let mut message = format!("{}: {} of {}", s.stage, s.done, s.total);
        if !s.place.is_empty() {
            message = format!("{message} ({})", s.place);
        }
        let step = Step { done: s.before + s.done, total: s.before + s.total.max(s.done), message };
        inner.1.send_replace(step);
    }
}

/// For the engine's writes (`rhizome mcp`).
impl Progress for Tracker {
    fn start(&self, stage: &str, total: u64) {
        self.update(|s| {
            s.before += s.total.max(s.done);
            *s = State { before: s.before, stage: stage.to_string(), total, ..State::default() };
        });
    }
    fn advance(&self, n: u64) {
        self.update(|s| s.done += n);
    }
    fn finish(&self) {
        self.update(|s| s.done = s.total.max(s.done));
    }
    fn warn(&self, msg: &str) {
        eprintln!("warning: {msg}");
    }
    fn at(&self, place: &str) {
        self.update(|s| s.place = place.to_string());
    }
}

/// A tracker for a request with `token`, and the task that notifies `peer`: it ends
/// (after the last notification) when every clone of the tracker is dropped.
pub fn notifier(token: ProgressToken, peer: Peer<RoleServer>) -> (Tracker, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = watch::channel(Step::default());
    let tracker = Tracker(Some(Arc::new((Mutex::new(State::default()), tx))));
    let task = tokio::spawn(async move {
        while rx.changed().await.is_ok() {
            let step = rx.borrow_and_update().clone();
            let note = ProgressNotificationParam::new(token.clone(), step.done as f64)
                .with_total(step.total as f64)
                .with_message(step.message);
            if peer.notify_progress(note).await.is_err() {
                return;
            }
            tokio::time::sleep(EVERY).await;
        }
    });
    (tracker, task)
}
