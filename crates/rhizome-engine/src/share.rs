//! Cores shared between concurrent queries.
//!
//! A query alone uses every core: the embedder and the kernels split their work over
//! rayon's pool, which lowers one query's latency. When several queries run at once that
//! splitting only adds hand-offs — every core is busy anyway — so a query that starts
//! while another is running does its work on one thread of its own (a one-thread rayon
//! pool per calling thread). Throughput under load then grows with the cores, and a lone
//! query keeps its low latency.

use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// This thread's one-thread pool, made the first time it is needed.
    static SOLO: Option<rayon::ThreadPool> =
        rayon::ThreadPoolBuilder::new().num_threads(1).thread_name(|_| "rhizome-query".into()).build().ok();
}

/// Counts the queries in flight and picks the pool each one runs on.
#[derive(Default)]
pub(crate) struct QueryShare {
    in_flight: AtomicUsize,
}

struct Leave<'a>(&'a AtomicUsize);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl QueryShare {
    /// Run `f`, on every core when no other query is in flight, else on one thread.
    pub(crate) fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        let others = self.in_flight.fetch_add(1, Ordering::SeqCst);
        let _leave = Leave(&self.in_flight);
        if others == 0 || rayon::current_thread_index().is_some() {
            return f();
        }
        SOLO.with(|pool| match pool {
            Some(pool) => pool.install(f),
            None => f(),
        })
    }

    /// Queries running now.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_query_uses_every_core_and_a_concurrent_one_uses_one_thread() {
        let share = QueryShare::default();
        let alone = share.run(rayon::current_num_threads);
        assert_eq!(alone, rayon::current_num_threads());
        let (tx, rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let share = &share;
        std::thread::scope(|s| {
            s.spawn(move || {
                share.run(move || {
                    tx.send(()).unwrap();
                    go_rx.recv().unwrap();
                })
            });
            rx.recv().unwrap();
            assert_eq!(share.in_flight(), 1);
            let second = share.run(rayon::current_num_threads);
            assert_eq!(second, 1, "a query beside another runs on one thread");
            go_tx.send(()).unwrap();
        });
        assert_eq!(share.in_flight(), 0);
    }
}
