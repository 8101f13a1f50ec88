//! The loop: make inputs from a target's seeds, run each in a worker thread under
//! `catch_unwind`, bounded in time (no answer within the limit: a hang) and in memory
//! (live bytes above the limit at any moment: a failure), and keep one input per
//! distinct failure (saved to disk when an output folder is given, so it replays).

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use crate::mutate::mutate;
use crate::rng::Rng;
use crate::{alloc, Target};

/// How long and how hard to fuzz.
#[derive(Debug, Clone)]
pub struct Options {
    /// Wall-clock budget of this target.
    pub seconds: f64,
    pub seed: u64,
    /// An input taking longer than this is a hang.
    pub time_limit: Duration,
    /// Live bytes an input may add over what was live before it.
    pub mem_limit: usize,
    /// Where failing inputs are saved (`DIR/TARGET/KIND-HASH.bin` and `.txt`), and where
    /// the input being run is kept (`DIR/TARGET/current.bin`, for a crash that ends the
    /// process).
    pub out: Option<PathBuf>,
    /// Stop after this many executions (0: no limit).
    pub max_execs: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seconds: 10.0,
            seed: 1,
            time_limit: Duration::from_secs(10),
            mem_limit: 512 << 20,
            out: None,
            max_execs: 0,
        }
    }
}

/// What went wrong with one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Panic,
    Hang,
    Memory,
    /// The target's own check failed (e.g. an HTTP 500, a write let in without a key).
    Check,
    /// Not a failure: a panic inside `rhizome_core::panic_guard` became an error (used to
    /// name saved inputs).
    Guarded,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Panic => "panic",
            Kind::Hang => "hang",
            Kind::Memory => "memory",
            Kind::Check => "check",
            Kind::Guarded => "guarded",
        }
    }
}

/// A distinct failure and the first input that showed it.
#[derive(Debug, Clone)]
pub struct Failure {
    pub kind: Kind,
    pub message: String,
    pub input: Vec<u8>,
    /// Inputs that failed the same way.
    pub count: u64,
    pub saved: Option<PathBuf>,
}

/// One target's run.
#[derive(Debug, Clone)]
pub struct Report {
    pub target: &'static str,
    pub execs: u64,
    pub seconds: f64,
    pub failures: Vec<Failure>,
    /// Largest live-memory growth seen over one input.
    pub max_extra_bytes: usize,
    /// Slowest input.
    pub max_input_ms: f64,
    /// Inputs on which a third-party reader panicked inside Rhizome's guard (the target
    /// returned an error naming the input: not a failure), and the distinct places.
    pub guarded: u64,
    pub guarded_places: Vec<String>,
}

impl Report {
    pub fn per_second(&self) -> f64 {
        self.execs as f64 / self.seconds.max(1e-9)
    }
}

static PANICS: AtomicU64 = AtomicU64::new(0);
/// Panics caught by `rhizome_core::panic_guard` (reported, not failures).
pub static GUARDED: AtomicU64 = AtomicU64::new(0);
static LAST_GUARDED: Mutex<String> = Mutex::new(String::new());
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());
static HOOK: Once = Once::new();

/// Count panics on every thread (the worker's, and threads it starts, e.g. the server's),
/// keeping the last message instead of printing it.
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            // A panic that Rhizome's guard turns into an error (inside a third-party reader
            // given a damaged file) is the error the target returns, not a failure.
            if rhizome_core::panic_guard::active() {
                let place = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
                *LAST_GUARDED.lock().unwrap_or_else(|p| p.into_inner()) = place;
                GUARDED.fetch_add(1, Ordering::SeqCst);
                return;
            }
            let payload = info.payload();
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string panic payload)".into());
            let place = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            *LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()) = format!("{place}: {msg}");
            PANICS.fetch_add(1, Ordering::SeqCst);
        }));
    });
}

type Outcome = Result<(), String>;

/// A thread running inputs one at a time.
struct Worker {
    tx: Sender<Vec<u8>>,
    rx: Receiver<(Outcome, bool)>,
}

impl Worker {
    fn start(target: &'static Target) -> Worker {
        let (tx, inputs) = channel::<Vec<u8>>();
        let (done, rx) = channel();
        std::thread::Builder::new()
            .name(format!("fuzz-{}", target.name))
            .stack_size(64 << 20)
            .spawn(move || {
                while let Ok(input) = inputs.recv() {
                    let r = catch_unwind(AssertUnwindSafe(|| (target.run)(&input)));
                    let panicked = r.is_err();
                    let outcome = r.unwrap_or(Ok(()));
                    if done.send((outcome, panicked)).is_err() {
                        return;
                    }
                }
            })
            .expect("starting a fuzz worker thread");
        Worker { tx, rx }
    }
}

/// The result of running one input.
pub struct Verdict {
    pub failure: Option<(Kind, String)>,
    /// Where a guarded panic happened (see [`GUARDED`]).
    pub guarded: Option<String>,
    pub extra_bytes: usize,
    pub elapsed: Duration,
}

/// Runs inputs of one target in a worker thread; a worker stuck on a hang is abandoned
/// and replaced.
pub struct Executor {
    target: &'static Target,
    worker: Worker,
    pub abandoned: usize,
}

impl Executor {
    pub fn new(target: &'static Target) -> Executor {
        install_panic_hook();
        Executor { target, worker: Worker::start(target), abandoned: 0 }
    }

    pub fn run(&mut self, input: &[u8], opts: &Options) -> Verdict {
        let panics = PANICS.load(Ordering::SeqCst);
        let guarded = GUARDED.load(Ordering::SeqCst);
        let base = alloc::reset_peak();
        let t = Instant::now();
        if self.worker.tx.send(input.to_vec()).is_err() {
            self.worker = Worker::start(self.target);
            let _ = self.worker.tx.send(input.to_vec());
        }
        let limit = opts.time_limit.max(Duration::from_secs(self.target.min_time_limit_s));
        let got = self.worker.rx.recv_timeout(limit);
        let elapsed = t.elapsed();
        let extra = alloc::peak().saturating_sub(base);
        let failure = match got {
            Err(RecvTimeoutError::Timeout) => {
                self.abandoned += 1;
                self.worker = Worker::start(self.target);
                Some((Kind::Hang, format!("no result within {limit:?}")))
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.worker = Worker::start(self.target);
                Some((Kind::Panic, "the worker thread ended".into()))
            }
            Ok((outcome, panicked)) => {
                if panicked || PANICS.load(Ordering::SeqCst) != panics {
                    let msg = LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    Some((Kind::Panic, msg))
                } else if extra > opts.mem_limit {
                    Some((
                        Kind::Memory,
                        format!("{} MiB live over the input's start (limit {} MiB)", extra >> 20, opts.mem_limit >> 20),
                    ))
                } else {
                    outcome.err().map(|m| (Kind::Check, m))
                }
            }
        };
        let guarded = (GUARDED.load(Ordering::SeqCst) != guarded)
            .then(|| LAST_GUARDED.lock().unwrap_or_else(|p| p.into_inner()).clone());
        Verdict { failure, guarded, extra_bytes: extra, elapsed }
    }
}

/// A key that tells failures apart: the kind and the message up to the first digit run
/// that is not part of a location (values vary, places do not).
fn key(kind: Kind, msg: &str) -> String {
    let head: String = msg.lines().next().unwrap_or("").chars().take(160).collect();
    let stable = match kind {
        // `file:line: message`: the place is the failure.
        Kind::Panic => {
            head.split(": ").next().unwrap_or("").to_string() + &head.split(": ").nth(1).map(short).unwrap_or_default()
        }
        _ => short(&head),
    };
    format!("{}:{stable}", kind.as_str())
}

fn short(s: &str) -> String {
    s.chars().filter(|c| !c.is_ascii_digit()).take(60).collect()
}

fn hash(data: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    data.hash(&mut h);
    h.finish()
}

/// Save a failing input and its message; returns the input's path.
pub fn save(dir: &Path, target: &str, kind: Kind, msg: &str, input: &[u8]) -> Option<PathBuf> {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join(format!("{}-{:016x}.bin", kind.as_str(), hash(input)));
    std::fs::write(&path, input).ok()?;
    std::fs::write(path.with_extension("txt"), format!("{}: {msg}\n", kind.as_str())).ok()?;
    Some(path)
}

/// Fuzz `target` for `opts.seconds`.
pub fn fuzz(target: &'static Target, opts: &Options) -> Report {
    let start = Instant::now();
    let mut rng = Rng::new(opts.seed ^ hash(target.name.as_bytes()));
    let mut corpus = (target.seeds)();
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let current = opts.out.as_ref().map(|d| {
        let dir = d.join(target.name);
        let _ = std::fs::create_dir_all(&dir);
        dir.join("current.bin")
    });
    let mut exec = Executor::new(target);
    let mut failures: BTreeMap<String, Failure> = BTreeMap::new();
    let (mut execs, mut max_extra, mut max_ms) = (0u64, 0usize, 0f64);
    let (mut guarded, mut guarded_places) = (0u64, Vec::<String>::new());
    let mut last: Vec<u8> = Vec::new();
    loop {
        if start.elapsed().as_secs_f64() >= opts.seconds || (opts.max_execs > 0 && execs >= opts.max_execs) {
            break;
        }
        // Every seed once as it is, then mutations of a seed or of the last input.
        let input = if (execs as usize) < corpus.len() {
            corpus[execs as usize].clone()
        } else {
            let mut data =
                if !last.is_empty() && rng.one_in(4) { last.clone() } else { corpus[rng.below(corpus.len())].clone() };
            mutate(&mut rng, &mut data, &corpus, target.dict, target.max_len);
            data
        };
        if let Some(path) = &current {
            let _ = std::fs::write(path, &input);
        }
        let v = exec.run(&input, opts);
        execs += 1;
        max_extra = max_extra.max(v.extra_bytes);
        max_ms = max_ms.max(v.elapsed.as_secs_f64() * 1e3);
        if let Some(place) = v.guarded {
            guarded += 1;
            if !guarded_places.contains(&place) {
                // Kept like a failure's input, so that it can join the regressions.
                if let Some(d) = &opts.out {
                    save(d, target.name, Kind::Guarded, &place, &input);
                }
                eprintln!("[{}] guarded panic (an error, not a failure) at {place}", target.name);
                guarded_places.push(place);
            }
        }
        if let Some((kind, msg)) = v.failure {
            let k = key(kind, &msg);
            match failures.get_mut(&k) {
                Some(f) => f.count += 1,
                None => {
                    let saved = opts.out.as_ref().and_then(|d| save(d, target.name, kind, &msg, &input));
                    let head: String = msg.lines().next().unwrap_or("").chars().take(200).collect();
                    eprintln!("[{}] {} #{}: {head}", target.name, kind.as_str(), failures.len() + 1);
                    failures.insert(k, Failure { kind, message: msg, input: input.clone(), count: 1, saved });
                }
            }
            if kind == Kind::Hang && exec.abandoned >= 3 {
                eprintln!("[{}] three inputs hung: stopping this target", target.name);
                break;
            }
        }
        last = input;
    }
    if let Some(path) = &current {
        let _ = std::fs::remove_file(path);
    }
    Report {
        target: target.name,
        execs,
        seconds: start.elapsed().as_secs_f64(),
        failures: failures.into_values().collect(),
        max_extra_bytes: max_extra,
        max_input_ms: max_ms,
        guarded,
        guarded_places,
    }
}

/// Run one saved input (a replay): the failure it shows, if any.
pub fn replay(target: &'static Target, input: &[u8], opts: &Options) -> Option<(Kind, String)> {
    Executor::new(target).run(input, opts).failure
}
