//! Local GGUF chat models on the CPU: a [`ChatProvider`] backed by llama.cpp (compiled from
//! source by the `llama-cpp-2` crate; build needs `cmake` and libclang, see
//! `scripts/install-build-deps`).
//!
//! [`LocalChat::load`] loads a GGUF once; every [`ChatProvider::chat`] call renders the
//! messages with the model's own chat template (from the GGUF metadata, through llama.cpp;
//! ChatML when the GGUF has none or llama.cpp does not recognise it), tokenizes with the
//! GGUF's tokenizer, decodes, and samples:
//!
//! - `temperature == 0` → greedy (deterministic: same request, same text); otherwise
//!   temperature sampling seeded by `req.seed` (or [`LocalOptions::seed`]).
//! - Generation ends at an end-of-generation token, a stop string (cut from the text, never
//!   streamed), `max_tokens` (default [`LocalOptions::default_max_tokens`]), or a full
//!   context.
//! - `json_mode` constrains decoding with llama.cpp's grammar sampler to one JSON object.
//! - A prompt that does not fit the context (leaving room for at least one generated
//!   token) is an [`Error::Llm`]: nothing is silently dropped from it.
//! - Calls are serialised (one llama.cpp context decodes at a time); each call decodes
//!   synchronously inside its future, which completes on its first poll (no runtime is
//!   assumed; it blocks the polling thread meanwhile), starting from an empty KV cache so
//!   that results never depend on earlier calls.
//! - The rendered prompt is tokenized with special tokens parsed, so template markers
//!   (e.g. `<|im_end|>`) inside message text act as markers, as in llama.cpp's server.
//!
//! llama.cpp's own logging is silenced unless `RHIZOME_LLAMA_LOG=1`;
//! `RHIZOME_LLAMA_THREADS` sets the default thread count.

mod bench;
mod generate;
mod text;

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use rhizome_core::llm::{BoxFuture, ChatProvider, ChatRequest, ChatResponse, TokenSink};
use rhizome_core::{Error, Result};
use rhizome_models as models;

pub use bench::{bench, BenchReport};

/// How a [`LocalChat`] is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalOptions {
    /// Context size in tokens (prompt + completion); capped at the model's training context.
    pub n_ctx: u32,
    /// Decode threads; `None`: `$RHIZOME_LLAMA_THREADS` if set, else every available core.
    /// (llama.cpp's threads spin while waiting for each other: on a machine whose cores are
    /// busy with other work, fewer threads can be many times faster.)
    pub threads: Option<usize>,
    /// Seed for sampled (temperature > 0) requests that carry no seed of their own.
    pub seed: u64,
    /// Completion limit for requests without `max_tokens`.
    pub default_max_tokens: u32,
    /// Prompt tokens decoded per llama.cpp batch.
    pub n_batch: u32,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions { n_ctx: 4096, threads: None, seed: 0, default_max_tokens: 512, n_batch: 512 }
    }
}

/// A GGUF chat model loaded in memory, usable as a [`ChatProvider`] (`id()` is
/// `local/<model name>`). Cheap to share behind an `Arc`; calls are serialised.
pub struct LocalChat {
    // Declared before `model`, so dropped first: the context borrows the model.
    ctx: Mutex<LlamaContext<'static>>,
    model: Arc<LlamaModel>,
    name: String,
    path: PathBuf,
    opts: LocalOptions,
    threads: usize,
}

impl std::fmt::Debug for LocalChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalChat")
            .field("name", &self.name)
            .field("path", &self.path)
            .field("n_ctx", &self.n_ctx())
            .field("threads", &self.threads)
            .finish()
    }
}

/// The process-wide llama.cpp backend (it may be initialised once per process).
fn backend() -> Result<&'static LlamaBackend> {
    static BACKEND: OnceLock<std::result::Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            if std::env::var("RHIZOME_LLAMA_LOG").map_or(true, |v| v != "1") {
                b.void_logs();
            }
            Ok(b)
        })
        .as_ref()
        .map_err(|e| llm_err("local", format!("cannot initialise llama.cpp: {e}")))
}

fn default_threads() -> usize {
    std::env::var("RHIZOME_LLAMA_THREADS")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .filter(|&t: &usize| t > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

pub(crate) fn llm_err(provider: &str, msg: impl Into<String>) -> Error {
    Error::Llm { provider: provider.to_string(), msg: msg.into() }
}

impl LocalChat {
    /// Load the GGUF at `gguf_path` as model `model_name` (used in [`ChatProvider::id`]).
    ///
    /// Errors: [`Error::ModelMissing`] if the file does not exist; [`Error::Model`] if it is
    /// not a GGUF file or llama.cpp cannot load it; [`Error::Llm`] if no context can be
    /// created (e.g. out of memory).
    pub fn load(model_name: &str, gguf_path: &Path, opts: LocalOptions) -> Result<Self> {
        check_gguf(model_name, gguf_path)?;
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, gguf_path, &LlamaModelParams::default())
            .map_err(|e| Error::Model(format!("{}: llama.cpp cannot load it: {e}", gguf_path.display())))?;
        let model = Arc::new(model);
        let threads = opts.threads.unwrap_or_else(default_threads).clamp(1, 512);
        let n_ctx = opts.n_ctx.clamp(16, model.n_ctx_train().max(16));
        let n_batch = opts.n_batch.clamp(1, n_ctx);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch)
            .with_n_threads(threads as i32)
            .with_n_threads_batch(threads as i32);
        // SAFETY: the context borrows the model, which lives in the `Arc` held by `self`
        // for as long as the context: `ctx` is declared before `model`, so it is dropped
        // first, and the model is never moved out or mutated.
        let model_ref: &'static LlamaModel = unsafe { &*Arc::as_ptr(&model) };
        let ctx = model_ref.new_context(backend, params).map_err(|e| {
            llm_err(&format!("local/{model_name}"), format!("cannot create a context of {n_ctx} tokens: {e}"))
        })?;
        Ok(LocalChat {
            ctx: Mutex::new(ctx),
            model,
            name: model_name.to_string(),
            path: gguf_path.to_path_buf(),
            opts,
            threads,
        })
    }

    /// Load the known model `name` (see [`models::LLMS`]) installed under `models_dir`.
    /// Errors: [`Error::Config`] for an unknown name, [`Error::ModelMissing`] (which tells
    /// the user to run `rhizome models fetch`) if it is not installed.
    pub fn load_installed(name: &str, models_dir: &Path, opts: LocalOptions) -> Result<Self> {
        let spec = models::llm_named(name).map_err(Error::Config)?;
        let dir = models::require(spec, models_dir)?;
        Self::load(spec.name, &dir.join(models::LLM_FILE), opts)
    }

    /// The model name given to [`Self::load`].
    pub fn model_name(&self) -> &str {
        &self.name
    }

    /// The GGUF file the model was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The context size in tokens actually in use.
    pub fn n_ctx(&self) -> u32 {
        self.lock().map_or(0, |c| c.n_ctx())
    }

    /// Decode threads in use.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The options the model was loaded with.
    pub fn options(&self) -> &LocalOptions {
        &self.opts
    }

    /// Number of tokens `text` has under the model's tokenizer (no special tokens added).
    pub fn count_tokens(&self, text: &str) -> usize {
        self.model.vocab().tokenize(text.as_bytes(), false, false).len()
    }

    /// Run `req` synchronously (what [`ChatProvider::chat`]'s future does).
    pub fn chat_blocking(&self, req: &ChatRequest, stream: Option<&TokenSink>) -> Result<ChatResponse> {
        let mut ctx = self.lock()?;
        let provider = self.id();
        // Never let a panic (in the bindings or in the sink) escape as a panic.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            generate::run(&self.model, &mut ctx, &self.opts, req, stream)
        }))
        .unwrap_or_else(|p| {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(llm_err(&provider, format!("generation panicked: {what}")))
        })
        .map_err(|e| match e {
            Error::Llm { msg, .. } => llm_err(&provider, msg),
            other => other,
        })
    }

    pub(crate) fn lock(&self) -> Result<std::sync::MutexGuard<'_, LlamaContext<'static>>> {
        // A poisoned lock only means an earlier call panicked; every call starts from a
        // cleared KV cache, so the context is still usable.
        Ok(self.ctx.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(crate) fn model(&self) -> &LlamaModel {
        &self.model
    }
}

impl ChatProvider for LocalChat {
    fn id(&self) -> String {
        format!("local/{}", self.name)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest, stream: Option<&'a TokenSink>) -> BoxFuture<'a, Result<ChatResponse>> {
        Box::pin(async move { self.chat_blocking(req, stream) })
    }
}

/// The file exists and starts with the `GGUF` magic.
fn check_gguf(name: &str, path: &Path) -> Result<()> {
    use std::io::Read;
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::ModelMissing { name: name.to_string(), path: path.to_path_buf() })
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut magic = [0u8; 4];
    match f.read_exact(&mut magic) {
        Ok(()) if &magic == b"GGUF" => Ok(()),
        _ => Err(Error::Model(format!("{}: not a GGUF file (no GGUF magic)", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_errors_are_clear() {
        let dir = std::env::temp_dir().join(format!("rhizome-llm-local-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("nope.gguf");
        let err = LocalChat::load("x", &missing, LocalOptions::default()).unwrap_err();
        assert!(matches!(err, Error::ModelMissing { .. }), "{err}");
        let bogus = dir.join("bogus.gguf");
        std::fs::write(&bogus, b"not a model").unwrap();
        let err = LocalChat::load("x", &bogus, LocalOptions::default()).unwrap_err();
        assert!(err.to_string().contains("not a GGUF"), "{err}");
        let err = LocalChat::load_installed("no-such-model", &dir, LocalOptions::default()).unwrap_err();
        assert!(err.to_string().contains("smollm2-135m"), "{err}");
        let err = LocalChat::load_installed("smollm2-135m", &dir, LocalOptions::default()).unwrap_err();
        assert!(matches!(err, Error::ModelMissing { .. }), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
