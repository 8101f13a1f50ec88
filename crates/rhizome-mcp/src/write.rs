//! How the MCP server writes. An index has one writer at a time: `rhizome mcp` (stdio)
//! writes through the engine directly, `rhizome serve` through its write queue (the same
//! one uploads and deletions take), so an agent's write never races another's.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rhizome_core::{Document, Error, Result};
use rhizome_engine::{upload_runs, Engine, IndexInput, Upload};
use serde_json::Value;

use crate::progress::Tracker;

/// A write's future: its outcome as JSON (an `IndexOutcome` or a `DeleteOutcome`).
pub type WriteFuture = Pin<Box<dyn Future<Output = Result<Value>> + Send>>;

/// What to add to the index.
pub enum Add {
    /// Documents given as text.
    Texts(Vec<Document>),
    /// Files saved in `dir` (removed when the write is done).
    Files { uploads: Vec<Upload>, dir: tempfile::TempDir },
}

/// The index's writer, as the MCP server sees it.
pub trait Writer: Send + Sync + 'static {
    /// Add to the index, telling `progress` how far the write is (every clone of it is
    /// dropped when the write ends).
    fn add(&self, add: Add, progress: Tracker) -> WriteFuture;
    /// Delete a document by id or source.
    fn delete(&self, doc: String) -> WriteFuture;
}

/// Writes through the engine, on a blocking thread (`rhizome mcp`: the process is the
/// index's only writer, and the store's writer lock keeps other processes out).
pub struct DirectWriter(pub Arc<Engine>);

impl Writer for DirectWriter {
    fn add(&self, add: Add, progress: Tracker) -> WriteFuture {
        let engine = self.0.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || index(&engine, add, &progress))
                .await
                .map_err(|e| Error::Store(format!("the write stopped: {e}")))?
        })
    }

    fn delete(&self, doc: String) -> WriteFuture {
        let engine = self.0.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let out = engine.delete(&doc, &AtomicBool::new(false))?;
                Ok(serde_json::to_value(out).unwrap_or(Value::Null))
            })
            .await
            .map_err(|e| Error::Store(format!("the write stopped: {e}")))?
        })
    }
}

fn index(engine: &Engine, add: Add, progress: &Tracker) -> Result<Value> {
    let cancel = AtomicBool::new(false);
    let inputs = match add {
        Add::Texts(docs) => vec![IndexInput::Documents(docs)],
        Add::Files { uploads, dir } => {
            let (inputs, skipped) = upload_runs(uploads, &|place| rhizome_engine::Progress::at(progress, place));
            if inputs.is_empty() {
                let why: Vec<String> = skipped.iter().map(|s| format!("{}: {}", s.path, s.reason)).collect();
                return Err(Error::bad_input("file", format!("nothing to index ({})", why.join("; "))));
            }
            // An edge list is read by its import: the folder stays until the end.
            let out = run(engine, inputs, progress, &cancel);
            drop(dir);
            return out;
        }
    };
    run(engine, inputs, progress, &cancel)
}

fn run(engine: &Engine, inputs: Vec<IndexInput>, progress: &Tracker, cancel: &AtomicBool) -> Result<Value> {
    let mut outcomes = Vec::new();
    for input in inputs {
        outcomes.push(engine.index(input, progress, cancel)?);
    }
    let value = match outcomes.len() {
        1 => serde_json::to_value(&outcomes[0]),
        _ => serde_json::to_value(&outcomes),
    };
    Ok(value.unwrap_or(Value::Null))
}
