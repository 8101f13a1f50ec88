//! One trait per ingestion step. The pipeline (in `rhizome-ingest`) is a sequence of
//! these; each can be swapped (an LLM extractor for the NLP one, another chunker).

use std::path::Path;

use crate::model::{Chunk, Document, Extraction};
use crate::Result;

/// Turns one file into documents. A corpus file yields many.
pub trait Loader: Send + Sync {
    /// True if this loader handles `path` (by extension).
    fn accepts(&self, path: &Path) -> bool;
    /// Load documents. Errors name the file and what is wrong with it.
    fn load(&self, path: &Path) -> Result<Vec<Document>>;
}

/// Splits a document into chunks.
pub trait Chunker: Send + Sync {
    fn chunk(&self, doc: &Document) -> Vec<Chunk>;
}

/// Finds entities, relations and facts in one chunk.
pub trait Extractor: Send + Sync {
    /// Name recorded with the index, e.g. `nlp`.
    fn name(&self) -> &str;
    fn extract(&self, chunk: &Chunk) -> Result<Extraction>;
    /// Extract many chunks; one result per chunk, in order. Extractors that wait on I/O
    /// (an LLM) override this to work on the chunks concurrently.
    fn extract_batch(&self, chunks: &[&Chunk]) -> Vec<Result<Extraction>> {
        chunks.iter().map(|c| self.extract(c)).collect()
    }
    /// What it counted over its calls so far (replies it had to repair or could not read).
    fn counts(&self) -> ExtractorCounts {
        ExtractorCounts::default()
    }
}

/// What an extractor counted over its calls: replies that needed repair, claim replies
/// that held no claims list (the chunk keeps its entities, without claims).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExtractorCounts {
    pub parse_warnings: u64,
    pub claim_replies_unreadable: u64,
}

/// Writes one description from several (an LLM, typically).
pub trait Summarizer: Send + Sync {
    /// One summary per task, in order.
    fn summarize_batch(&self, tasks: &[crate::store::SummaryTask]) -> Vec<Result<String>>;
}
