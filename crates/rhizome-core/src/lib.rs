//! Rhizome's core: the data model, the contracts between parts (store, embedder,
//! pipeline steps), configuration and shared text utilities. No I/O-heavy dependencies.

pub mod community;
pub mod config;
pub mod config_methods;
pub mod config_sensemaking;
pub mod embed;
pub mod error;
pub mod graph;
pub mod ids;
pub mod lang;
pub mod llm;
pub mod model;
pub mod steps;
pub mod store;
pub mod text;

pub use community::{Community, CommunityReport, Covariate, CovariateRecord, Finding, ReportKind};
pub use config::Config;
pub use embed::{dot, l2_normalize, EmbedKind, Embedder};
pub use error::{Error, Result};
pub use graph::{ChunkRow, EntityRow, FactRow, GraphData, RelationRow};
pub use model::*;
pub use steps::{Chunker, Extractor, Loader, Summarizer};
pub use store::*;
