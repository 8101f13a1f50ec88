//! Ingestion: loaders, chunking, LLM-free extraction (the pipeline's steps) and the
//! pipeline that runs them into a store, plus importers of other tools' outputs.

pub mod chunk;
mod embed_texts;
pub mod extract;
pub mod import;
#[cfg(feature = "graphrag-parquet")]
pub mod import_graphrag;
pub mod incoming;
pub mod load;
mod overlap;
pub mod pipeline;
pub mod resolve;
mod setup;
mod stage;
