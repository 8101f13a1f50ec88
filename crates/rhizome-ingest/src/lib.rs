//! Ingestion: loaders, chunking, LLM-free extraction (the pipeline's steps) and the
//! pipeline that runs them into a store, plus importers of other tools' outputs.

pub mod chunk;
pub mod describe;
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

/// The config sections ingestion's steps own (`[describe]`).
pub fn settings() -> Vec<&'static rhizome_core::config::SectionKind> {
    use rhizome_core::config::Section;
    vec![&describe::DescribeConfig::KIND]
}

/// The prompts ingestion's steps own, `(name, text)`.
pub fn prompts() -> Vec<(&'static str, &'static str)> {
    describe::prompts()
}
