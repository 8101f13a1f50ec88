//! Rhizome's core: the data model, the contracts between parts (store, embedder,
//! pipeline steps), configuration and shared text utilities. No I/O-heavy dependencies.

pub mod aggregate;
pub mod community;
pub mod config;
pub mod config_core;
pub mod config_load;
pub mod config_origin;
pub mod config_rules;
pub mod config_sensemaking;
#[cfg(test)]
mod config_tests;
pub mod embed;
pub mod error;
pub mod filter;
pub mod graph;
pub mod ids;
pub mod lang;
pub mod llm;
pub mod metrics;
pub mod model;
pub mod panic_guard;
pub mod steps;
pub mod store;
pub mod text;

pub use community::{Community, CommunityReport, Covariate, CovariateRecord, Finding, ReportKind};
pub use config::Config;
pub use embed::{dot, l2_normalize, EmbedKind, Embedder, SpanVectors};
pub use error::{Error, Result};
pub use filter::DocFilter;
pub use graph::{ChunkRow, EntityRow, FactRow, GraphData, Neighbourhood, RelationRow};
pub use model::*;
pub use steps::{Chunker, Extractor, ExtractorCounts, Loader, Summarizer};
pub use store::*;

/// The models directory every part of Rhizome installs to and loads from:
/// `$RHIZOME_MODELS_DIR` if set and non-empty, else `$HOME/.cache/rhizome/models`
/// (`./.cache/rhizome/models` without a home).
pub fn models_dir() -> std::path::PathBuf {
    use std::path::PathBuf;
    if let Some(d) = std::env::var_os("RHIZOME_MODELS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("rhizome").join("models")
}
