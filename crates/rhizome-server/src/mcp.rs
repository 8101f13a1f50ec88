//! `/mcp`: the Model Context Protocol (streamable HTTP) over the same engine, behind the
//! same API keys (a read-only key sees only the tools that read). Its writes take the
//! server's write queue, one writer at a time with uploads and deletions.

use std::sync::Arc;

use rhizome_mcp::{Add, RhizomeMcp, Tracker, WriteFuture, Writer};
use tokio::sync::{oneshot, watch};

use crate::error::ApiError;
use crate::jobs::{JobState, JobView, UploadDir, Work};
use crate::routes_documents::enqueue;
use crate::AppState;

/// The MCP endpoint's service. Without API keys the server is on loopback, and only
/// loopback host names are served (no DNS rebinding from a web page); with keys, any.
pub(crate) fn service(
    state: &AppState,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    RhizomeMcp,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    let writer = Arc::new(QueueWriter(state.clone()));
    let server = RhizomeMcp::new(state.engine.clone(), writer, false);
    let hosts = if state.keys.required() { Some(Vec::new()) } else { None };
    rhizome_mcp::http_service(server, hosts)
}

struct QueueWriter(AppState);

fn failed(e: ApiError) -> rhizome_core::Error {
    rhizome_core::Error::bad_input("write", format!("{}; {}", e.body.error, e.body.hint))
}

/// The job's outcome once it ends (its errors when it failed).
async fn outcome(job: watch::Sender<JobView>) -> rhizome_core::Result<serde_json::Value> {
    let mut rx = job.subscribe();
    let view = rx
        .wait_for(JobView::finished)
        .await
        .map_err(|_| rhizome_core::Error::Store("the write job was dropped".into()))?
        .clone();
    match view.state {
        JobState::Done => Ok(view.outcome.unwrap_or(serde_json::Value::Null)),
        _ => {
            let errors: Vec<String> = view
                .errors
                .iter()
                .map(|e| if e.file.is_empty() { e.error.clone() } else { format!("{}: {}", e.file, e.error) })
                .collect();
            Err(rhizome_core::Error::bad_input("write", errors.join("; ")))
        }
    }
}

/// The job's stages, told to `progress` until the job ends.
async fn follow(mut job: watch::Receiver<JobView>, progress: Tracker) {
    loop {
        {
            let view = job.borrow_and_update();
            if !view.stage.is_empty() {
                progress.stage(&view.stage, view.done, view.total, &view.place);
            }
            if view.finished() {
                return;
            }
        }
        if job.changed().await.is_err() {
            return;
        }
    }
}

impl Writer for QueueWriter {
    fn add(&self, add: Add, progress: Tracker) -> WriteFuture {
        let state = self.0.clone();
        Box::pin(async move {
            let work = match add {
                Add::Texts(docs) => Work::Texts(docs, UploadDir::None),
                Add::Files { uploads, dir } => Work::Files { uploads, dir: UploadDir::Temp(dir) },
            };
            let job = enqueue(&state, "mcp", work).await.map_err(failed)?;
            if progress.wanted() {
                tokio::spawn(follow(job.subscribe(), progress));
            }
            outcome(job).await
        })
    }

    fn delete(&self, doc: String) -> WriteFuture {
        let state = self.0.clone();
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            enqueue(&state, "delete", Work::Delete { doc, reply }).await.map_err(failed)?;
            let out = answer.await.map_err(|_| rhizome_core::Error::Store("the deletion did not finish".into()))?;
            let out = out.map_err(failed)?;
            Ok(serde_json::to_value(out).unwrap_or(serde_json::Value::Null))
        })
    }
}
