//! Concurrent embedding calls share one forward pass.
//!
//! A short text (a question, a handful of sentences) costs a forward pass that is mostly
//! fixed overhead: every layer's weights are read and every operation dispatched whatever
//! the batch holds. When several queries run at once, [`CoalescingEmbedder`] gathers the
//! small calls that arrive while a pass is running and embeds them together in the next
//! one, on every core, then hands each caller its own vectors. Nothing waits for company:
//! a call that finds no pass running starts one at once (a lone query pays one mutex), and
//! the calls queued behind it are taken by the next caller in line. Large calls (indexing)
//! go straight through. Each text is embedded on its own inside the packed batch (no
//! attention across texts), so a caller gets the vectors the wrapped embedder gives it
//! alone, up to float rounding in the larger matrix products.

use std::sync::{Arc, Condvar, Mutex};

use rhizome_core::{EmbedKind, Embedder, Error, Result};

/// Calls with more texts than this are not coalesced: they fill a batch on their own.
pub const COALESCE_MAX_TEXTS: usize = 64;

type Outcome = std::result::Result<Vec<Vec<f32>>, String>;

struct Pending {
    kind: EmbedKind,
    texts: Vec<String>,
    out: Arc<Mutex<Option<Outcome>>>,
}

#[derive(Default)]
struct State {
    queue: Vec<Pending>,
    /// A caller is running a pass now.
    running: bool,
}

/// An [`Embedder`] that merges concurrent small calls into shared forward passes.
pub struct CoalescingEmbedder {
    inner: Arc<dyn Embedder>,
    /// Every core: a merged pass is the only embedding work in flight.
    pool: Option<rayon::ThreadPool>,
    state: Mutex<State>,
    wake: Condvar,
}

impl CoalescingEmbedder {
    pub fn new(inner: Arc<dyn Embedder>) -> CoalescingEmbedder {
        let pool = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("rhizome-embed-{i}")).build().ok();
        CoalescingEmbedder { inner, pool, state: Mutex::new(State::default()), wake: Condvar::new() }
    }

    /// The wrapped embedder.
    pub fn inner(&self) -> &Arc<dyn Embedder> {
        &self.inner
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Embed everything queued, one pass per kind, and hand out the results.
    fn run_pass(&self, batch: Vec<Pending>) {
        for kind in [EmbedKind::Query, EmbedKind::Passage] {
            let mine: Vec<&Pending> = batch.iter().filter(|p| p.kind == kind).collect();
            if mine.is_empty() {
                continue;
            }
            let texts: Vec<String> = mine.iter().flat_map(|p| p.texts.iter().cloned()).collect();
            let run = || self.inner.embed(&texts, kind);
            let result = match &self.pool {
                Some(pool) => pool.install(run),
                None => run(),
            };
            let mut at = 0;
            for p in mine {
                let n = p.texts.len();
                let piece: Outcome = match &result {
                    Ok(vs) if vs.len() == texts.len() => Ok(vs[at..at + n].to_vec()),
                    Ok(vs) => Err(format!("the embedder returned {} vectors for {} texts", vs.len(), texts.len())),
                    Err(e) => Err(e.to_string()),
                };
                at += n;
                *p.out.lock().unwrap_or_else(|x| x.into_inner()) = Some(piece);
            }
        }
    }
}

impl Embedder for CoalescingEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn cosine_scale(&self) -> f32 {
        self.inner.cosine_scale()
    }

    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        if texts.len() > COALESCE_MAX_TEXTS {
            return self.inner.embed(texts, kind);
        }
        let out = Arc::new(Mutex::new(None));
        let mut st = self.lock();
        st.queue.push(Pending { kind, texts: texts.to_vec(), out: out.clone() });
        loop {
            if let Some(done) = out.lock().unwrap_or_else(|x| x.into_inner()).take() {
                return done.map_err(Error::Model);
            }
            if !st.running {
                // Nobody is embedding: run a pass for everything queued (this call included).
                st.running = true;
                let batch = std::mem::take(&mut st.queue);
                let outs: Vec<_> = batch.iter().map(|p| p.out.clone()).collect();
                drop(st);
                // A panic inside the model must not leave `running` set for ever, nor a
                // caller of this pass waiting for a result that never comes.
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_pass(batch)));
                if ran.is_err() {
                    for o in &outs {
                        let mut o = o.lock().unwrap_or_else(|x| x.into_inner());
                        if o.is_none() {
                            *o = Some(Err("the embedding model panicked on this batch".into()));
                        }
                    }
                }
                st = self.lock();
                st.running = false;
                self.wake.notify_all();
                continue;
            }
            st = self.wake.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::embed::WordHashEmbedder;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts calls and slows each down, so that concurrent callers pile up.
    struct Slow(AtomicUsize);

    impl Embedder for Slow {
        fn model_id(&self) -> &str {
            "test-words"
        }
        fn dim(&self) -> usize {
            64
        }
        fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(30));
            WordHashEmbedder.embed(texts, kind)
        }
    }

    #[test]
    fn concurrent_calls_share_passes_and_each_gets_its_own_vectors() {
        let slow = Arc::new(Slow(AtomicUsize::new(0)));
        let e = CoalescingEmbedder::new(slow.clone());
        let texts: Vec<Vec<String>> =
            (0..16).map(|i| vec![format!("question number {i}"), format!("sentence {i} about Bohr")]).collect();
        let got: Vec<Vec<Vec<f32>>> = std::thread::scope(|s| {
            let hs: Vec<_> = texts.iter().map(|t| s.spawn(|| e.embed(t, EmbedKind::Query).unwrap())).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (t, v) in texts.iter().zip(&got) {
            assert_eq!(*v, WordHashEmbedder.embed(t, EmbedKind::Query).unwrap(), "{t:?}");
        }
        let passes = slow.0.load(Ordering::SeqCst);
        assert!(passes < 16, "16 concurrent calls ran {passes} passes");
        // Alone, a call runs at once; large calls go straight through.
        let many: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
        assert_eq!(e.embed(&many, EmbedKind::Passage).unwrap(), WordHashEmbedder.embed(&many, EmbedKind::Passage).unwrap());
        assert!(e.embed(&[], EmbedKind::Query).unwrap().is_empty());
    }
}
