//! Writing one batch while the next one is embedded (imports).
//!
//! An import's batch needs nothing from the store between staging and writing (no LLM, no
//! merging by similarity), so [`alongside`] hands the store to a writer thread for batch
//! k-1 while the calling thread embeds batch k. Embedding keeps both cores busy but for
//! short gaps (the embedder's serial steps, the ends of parallel loops: ~4% of a MuSiQue
//! import's core time); the write (~0.4 s of one core per 256 documents) is meant to fill
//! those gaps, not to take cores from the embedding. So the writer runs at Linux's
//! `SCHED_IDLE` priority while the embedding runs, and is set back to normal priority as
//! soon as the embedding is done (so that it is not starved by other processes while this
//! one waits for it).
//!
//! Why not simply a second thread at normal priority: three runnable threads on two cores
//! make the scheduler preempt an embedding worker in the middle of its share of a parallel
//! loop, and the other worker then waits for it at the loop's end, which gives nothing.
//!
//! Setting a thread back from `SCHED_IDLE` needs `CAP_SYS_NICE` (or an `RLIMIT_NICE` of
//! at least 20); [`permitted`] probes that once. Where it is not permitted (or not Linux),
//! [`alongside`] writes first and then runs the work, as the pipeline did before.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use rhizome_core::{Error, Result, StoreWrite, WriteBatch};

/// A batch to write and the progress units it accounts for.
pub(crate) type Pending = (WriteBatch, u64);

/// What writing a [`Pending`] batch took.
pub(crate) struct Written {
    /// Its progress units.
    pub units: u64,
    /// The write's own time: the writer thread's CPU time when it ran alongside (its wall
    /// time then mostly waited for idle cores), else the wall time.
    pub took: Duration,
    /// How long the caller waited for the write: after its own work was done, or all of
    /// the write when it ran first.
    pub waited: Duration,
}

/// Run `work` on this thread while `pending` (if any) is written to `store` by a
/// low-priority thread; returns `work`'s result and the write's. Without [`permitted`], the
/// write runs first on this thread.
pub(crate) fn alongside<T>(
    store: &mut dyn StoreWrite,
    pending: Option<Pending>,
    work: impl FnOnce() -> T,
) -> (T, Option<Result<Written>>) {
    let Some((batch, units)) = pending else { return (work(), None) };
    if !permitted() {
        let t = Instant::now();
        let written = store.write_batch(&batch).map(|()| Written { units, took: t.elapsed(), waited: t.elapsed() });
        drop(batch);
        return (work(), Some(written));
    }
    std::thread::scope(|s| {
        let (tid_tx, tid_rx) = mpsc::channel::<Option<i32>>();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let writer = s.spawn(move || {
            let _ = tid_tx.send(priority::lower());
            let cpu = priority::thread_cpu();
            let written = store.write_batch(&batch);
            let took = priority::thread_cpu().saturating_sub(cpu);
            drop(batch);
            // Stay alive until the caller has set this thread's priority back (its id must
            // not name another thread by then).
            let _ = release_rx.recv();
            written.map(|()| took)
        });
        let out = work();
        let t = Instant::now();
        if let Ok(Some(tid)) = tid_rx.recv() {
            priority::restore(tid);
        }
        drop(release_tx);
        let written = writer.join().unwrap_or_else(|_| Err(Error::Store("the batch writer thread panicked".into())));
        let waited = t.elapsed();
        (out, Some(written.map(|took| Written { units, took, waited })))
    })
}

/// Whether this process may lower a thread to `SCHED_IDLE` and set it back (probed once).
pub(crate) fn permitted() -> bool {
    static PERMITTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PERMITTED
        .get_or_init(|| std::thread::spawn(|| priority::lower().is_some_and(priority::restore)).join().unwrap_or(false))
}

#[cfg(target_os = "linux")]
mod priority {
    /// Put the calling thread at `SCHED_IDLE`; its thread id if that worked.
    pub(super) fn lower() -> Option<i32> {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: plain system calls on the calling thread with a valid parameter.
        unsafe {
            let tid = libc::gettid();
            (libc::sched_setscheduler(tid, libc::SCHED_IDLE, &param) == 0).then_some(tid)
        }
    }

    /// CPU time of the calling thread.
    pub(super) fn thread_cpu() -> std::time::Duration {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid out-parameter.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
            return std::time::Duration::ZERO;
        }
        std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }

    /// Put thread `tid` back at `SCHED_OTHER`; whether that worked.
    pub(super) fn restore(tid: i32) -> bool {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: a plain system call with a valid parameter; `tid` is a live thread of this
        // process (see `alongside`).
        unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &param) == 0 }
    }
}

#[cfg(not(target_os = "linux"))]
mod priority {
    pub(super) fn lower() -> Option<i32> {
        None
    }

    pub(super) fn restore(_: i32) -> bool {
        false
    }

    pub(super) fn thread_cpu() -> std::time::Duration {
        std::time::Duration::ZERO
    }
}
