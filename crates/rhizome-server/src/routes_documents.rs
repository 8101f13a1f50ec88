//! Documents and write jobs: upload (multipart files or JSON texts), list, read, delete;
//! follow a job by polling or as server-sent events.

use std::convert::Infallible;

use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use axum::Json;
use futures_util::Stream;
use rhizome_engine::{text_document, upload_base_name, upload_extension, DocumentDetail, DocumentPage, Format, Upload};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot, watch};

use crate::error::{ApiError, ApiJson, ApiPath, ApiQuery, ApiResult, ErrorBody};
use crate::jobs::{Found, JobView, UploadDir, Work, WriteJob};
use crate::spool::{Journal, Spool};
use crate::types::*;
use crate::{blocking, AppState};

/// Mark a job accepted and failed before it was queued.
fn refused(job: &watch::Sender<JobView>, error: &str) {
    job.send_modify(|v| {
        v.state = crate::jobs::JobState::Failed;
        v.errors.push(crate::jobs::JobError { file: String::new(), error: error.into() });
    });
}

/// Queue a write job; 503 when the queue is full (or, on a shared store, when the uploads
/// kept would pass their bound).
pub(crate) async fn enqueue(state: &AppState, kind: &str, work: Work) -> ApiResult<watch::Sender<JobView>> {
    let job = state.jobs.create(kind).await?;
    let id = job.borrow().id;
    let kept = match &work {
        Work::Delete { .. } => Ok(false),
        _ => state.jobs.keep(id, &work).await,
    };
    let kept = kept.inspect_err(|e| refused(&job, &e.body.error))?;
    if let Err(e) = journal(state, id, &work) {
        refused(&job, &e);
        return Err(ApiError::internal(format!("the upload could not be saved: {e}")));
    }
    match state.queue.try_send(WriteJob { job: job.clone(), work, kept }) {
        Ok(()) => Ok(job),
        Err(e) => {
            let (msg, hint) = match e {
                mpsc::error::TrySendError::Full(_) => {
                    ("too many writes are waiting", "retry when the jobs queued have finished")
                }
                mpsc::error::TrySendError::Closed(_) => ("the server is shutting down", "retry after it restarts"),
            };
            let err = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, msg, hint);
            refused(&job, msg);
            if let Some((board, _)) = state.jobs.shared().filter(|_| kept) {
                let _ = tokio::task::spawn_blocking(move || crate::pending::forget(board.as_ref(), id)).await;
            }
            Err(err)
        }
    }
}

/// Accept a spooled upload: write its journal, so that it survives a crash (see
/// [`crate::spool`]); nothing to do for other work.
fn journal(state: &AppState, id: u64, work: &Work) -> Result<(), String> {
    let Some(spool) = state.jobs.spool_for_new() else { return Ok(()) };
    match work {
        Work::Files { uploads, dir: UploadDir::Spooled(d) } => {
            let files = uploads
                .iter()
                .map(|u| {
                    (u.name.clone(), u.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
                })
                .collect();
            spool.commit(d, &Journal { id, files, texts: vec![], resumes: 0 })
        }
        Work::Texts(docs, UploadDir::Spooled(d)) => {
            spool.commit(d, &Journal { id, files: vec![], texts: docs.clone(), resumes: 0 })
        }
        _ => Ok(()),
    }
}

/// The file types an upload may have (by the extension of its file name) and indexing
/// reads: text, Markdown, HTML, JSON corpora, PDF, Office, e-books, mail, images, and CSV
/// (tables, or edge lists by their header). The web UI offers what this lists.
#[utoipa::path(get, path = "/formats", tag = "documents", responses((status = 200, body = Vec<Format>)))]
pub async fn formats(State(state): State<AppState>) -> Json<&'static [Format]> {
    Json(state.engine.formats())
}

/// Upload documents to index: `multipart/form-data` files of the types `GET /formats`
/// lists (the file name is kept as the document's label only) or JSON `{documents:
/// [{title, text}]}`, at most 10,000 files or documents per upload. Indexing runs in the
/// background, one write job at a time.
#[utoipa::path(post, path = "/documents", tag = "documents",
    request_body(content(
        (DocumentsBody = "application/json"),
        (Object = "multipart/form-data")
    )),
    responses(
        (status = 202, description = "queued", body = Accepted),
        (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 415, description = "a file type that cannot be indexed, named", body = ErrorBody),
        (status = 503, description = "the write queue is full", body = ErrorBody),
    ))]
pub async fn upload(State(state): State<AppState>, req: Request) -> ApiResult<impl IntoResponse> {
    let ctype = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let work = if ctype.starts_with("multipart/form-data") {
        let multipart = Multipart::from_request(req, &state).await?;
        save_files(multipart, state.jobs.spool_for_new()).await?
    } else if ctype.starts_with("application/json") {
        let ApiJson(body) = ApiJson::<DocumentsBody>::from_request(req, &state).await?;
        texts(body, state.jobs.spool_for_new())?
    } else {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("Content-Type {ctype:?} cannot be uploaded"),
            "send files as multipart/form-data, or JSON {\"documents\": [{\"title\": ..., \"text\": ...}]}",
        ));
    };
    let job = enqueue(&state, "index", work).await?;
    let job_id = job.borrow().id;
    Ok((StatusCode::ACCEPTED, Json(Accepted { job_id })))
}

/// Save each file part under a name of our own (never the uploaded name: no path from
/// the client reaches the file system).
async fn save_files(mut multipart: Multipart, spool: Option<&Spool>) -> ApiResult<Work> {
    let (dir, dir_path) = match spool {
        Some(s) => {
            let d = s.create().map_err(ApiError::internal)?;
            let p = d.path().to_path_buf();
            (UploadDir::Spooled(d), p)
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix("rhizome-upload-")
                .tempdir()
                .map_err(|e| ApiError::internal(format!("cannot make a temporary directory: {e}")))?;
            let p = t.path().to_path_buf();
            (UploadDir::Temp(t), p)
        }
    };
    let mut uploads = Vec::new();
    while let Some(mut field) = multipart.next_field().await? {
        if uploads.len() == MAX_UPLOAD_DOCUMENTS {
            return Err(ApiError::bad(
                "files",
                format!("more than {MAX_UPLOAD_DOCUMENTS} files in one upload"),
                "send them in several uploads",
            ));
        }
        let Some(name) = field.file_name().map(str::to_string) else {
            let part = field.name().unwrap_or("").to_string();
            return Err(ApiError::bad(
                &format!("files: part {part:?}"),
                "is not a file",
                "send each document as a file part (curl -F file=@doc.txt)",
            ));
        };
        if upload_base_name(&name).is_empty() {
            return Err(ApiError::bad(
                "files",
                "a file part has no file name",
                "give every file a name with its extension",
            ));
        }
        let ext = upload_extension(&name).map_err(|e| {
            ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                e.to_string(),
                "convert it to text, Markdown or HTML first",
            )
        })?;
        let path = dir_path.join(format!("upload-{}.{ext}", uploads.len()));
        let mut file = tokio::fs::File::create(&path)
            .await
            .map_err(|e| ApiError::internal(format!("cannot save an upload: {e}")))?;
        while let Some(bytes) = field.chunk().await? {
            file.write_all(&bytes).await.map_err(|e| ApiError::internal(format!("cannot save an upload: {e}")))?;
        }
        file.flush().await.map_err(|e| ApiError::internal(format!("cannot save an upload: {e}")))?;
        uploads.push(Upload { name, path });
    }
    if uploads.is_empty() {
        return Err(ApiError::bad("files", "no file in the upload", "curl -F file=@doc.txt http://HOST/documents"));
    }
    Ok(Work::Files { uploads, dir })
}

fn texts(body: DocumentsBody, spool: Option<&Spool>) -> ApiResult<Work> {
    if body.documents.is_empty() {
        return Err(ApiError::bad(
            "documents",
            "the list is empty",
            "give at least one {\"title\": ..., \"text\": ...}",
        ));
    }
    let mut docs = Vec::with_capacity(body.documents.len());
    for (i, d) in body.documents.iter().enumerate() {
        let source =
            format!("upload:{}", if d.title.trim().is_empty() { format!("#{i}") } else { d.title.trim().to_string() });
        docs.push(text_document(&d.title, &d.text, &source, &format!("documents[{i}].text"))?);
    }
    let dir = match spool {
        Some(s) => UploadDir::Spooled(s.create().map_err(ApiError::internal)?),
        None => UploadDir::None,
    };
    Ok(Work::Texts(docs, dir))
}

async fn job_of(state: &AppState, id: u64) -> ApiResult<Found> {
    state.jobs.find(id).await?.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no job {id}"),
            "job ids come from POST /documents; finished jobs are kept for a while",
        )
    })
}

/// A write job's progress. Replicas over one PostgreSQL database answer alike for every
/// job, whichever of them accepted it.
#[utoipa::path(get, path = "/jobs/{id}", tag = "documents", params(("id" = u64, Path)),
    responses((status = 200, body = JobView), (status = 404, body = ErrorBody)))]
pub async fn job(State(state): State<AppState>, ApiPath(id): ApiPath<u64>) -> ApiResult<Json<JobView>> {
    Ok(Json(match job_of(&state, id).await? {
        Found::Here(tx) => tx.borrow().clone(),
        Found::Elsewhere(view) => view,
    }))
}

/// Recent write jobs of this server, newest first.
#[utoipa::path(get, path = "/jobs", tag = "documents", responses((status = 200, body = Vec<JobView>)))]
pub async fn jobs(State(state): State<AppState>) -> Json<Vec<JobView>> {
    Json(state.jobs.list())
}

/// A write job's progress as server-sent events (`progress`, each a JobView), until it
/// is done or failed.
#[utoipa::path(get, path = "/jobs/{id}/events", tag = "documents", params(("id" = u64, Path)),
    responses((status = 200, content_type = "text/event-stream", body = JobView), (status = 404, body = ErrorBody)))]
pub async fn job_events(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<u64>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let mut rx = match job_of(&state, id).await? {
        Found::Here(tx) => tx.subscribe(),
        // Another replica's job: its progress as the job board has it, read again every
        // half second into a channel of its own.
        Found::Elsewhere(view) => {
            let (tx, rx) = watch::channel(view);
            let jobs = state.jobs.clone();
            tokio::spawn(async move {
                while !tx.borrow().finished() && !tx.is_closed() {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    match jobs.elsewhere(id).await {
                        Ok(Some(v)) => {
                            tx.send_if_modified(|old| {
                                let changed = serde_json::to_value(&*old).ok() != serde_json::to_value(&v).ok();
                                *old = v;
                                changed
                            });
                        }
                        _ => return,
                    }
                }
            });
            rx
        }
    };
    rx.mark_changed();
    // (receiver, ended): every change is sent, the finished state last.
    let stream = futures_util::stream::unfold((rx, false), |(mut rx, ended)| async move {
        if ended || rx.changed().await.is_err() {
            return None;
        }
        let view = rx.borrow_and_update().clone();
        let event = Event::default().event("progress").json_data(&view).unwrap_or_default();
        Some((Ok(event), (rx, view.finished())))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// Longest `search` term of GET /documents, in characters.
const MAX_SEARCH_CHARS: usize = 1000;

/// Documents by title; `search` matches title or source.
#[utoipa::path(get, path = "/documents", tag = "documents", params(DocumentsQuery),
    responses((status = 200, body = DocumentPage)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<DocumentsQuery>,
) -> ApiResult<Json<DocumentPage>> {
    let limit = q.limit.unwrap_or(50);
    if limit > 1000 {
        return Err(ApiError::bad("limit", format!("{limit} is more than 1000"), "page with offset"));
    }
    // SQLite refuses LIKE patterns past 50,000 bytes (a 500 before this check; found by
    // rhizome-fuzz): no title or source needs a search term this long.
    if let Some(n) = q.search.as_deref().map(|t| t.chars().count()).filter(|&n| n > MAX_SEARCH_CHARS) {
        return Err(ApiError::bad(
            "search",
            format!("{n} characters, more than {MAX_SEARCH_CHARS}"),
            "search by a shorter part of the title or source",
        ));
    }
    if !state.engine.exists() {
        return Ok(Json(DocumentPage { total: 0, offset: q.offset, documents: vec![] }));
    }
    let page = blocking(&state, move |e| e.documents(q.search.as_deref(), q.offset, limit)).await?;
    Ok(Json(page))
}

/// One document: its text, chunks and entities.
#[utoipa::path(get, path = "/documents/{id}", tag = "documents", params(("id" = String, Path, description = "document id or source")),
    responses((status = 200, body = DocumentDetail), (status = 404, body = ErrorBody)))]
pub async fn get(State(state): State<AppState>, ApiPath(id): ApiPath<String>) -> ApiResult<Json<DocumentDetail>> {
    let d = blocking(&state, move |e| e.document(&id)).await?;
    Ok(Json(d))
}

/// Delete a document (by id or source) and everything only it supported; answers when
/// done, with what was removed. The index is then as if it had never been indexed.
#[utoipa::path(delete, path = "/documents/{id}", tag = "documents", params(("id" = String, Path, description = "document id or source")),
    responses((status = 200, description = "deleted, synonym_edges, communities", body = Object),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn delete(State(state): State<AppState>, ApiPath(id): ApiPath<String>) -> ApiResult<Json<serde_json::Value>> {
    if !state.engine.exists() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no document {id:?}: the index is empty"),
            "GET /documents lists what is indexed",
        ));
    }
    let (reply, answer) = oneshot::channel();
    enqueue(&state, "delete", Work::Delete { doc: id, reply }).await?;
    let outcome = answer.await.map_err(|_| ApiError::internal("the deletion did not finish"))??;
    Ok(Json(serde_json::to_value(outcome).map_err(|e| ApiError::internal(e.to_string()))?))
}
