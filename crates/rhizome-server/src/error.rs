//! The one error type of the API: every failure answers `{error, hint}` with its status,
//! whether it came from the engine, from reading the request or from the server itself.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use rhizome_core::Error;
use serde::de::DeserializeOwned;
use serde::Serialize;
use utoipa::ToSchema;

/// The body of every error response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, naming the field, file or parameter at fault.
    pub error: String,
    /// What to do about it.
    pub hint: String,
}

/// An error with the status it answers.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: ErrorBody,
}

impl ApiError {
    pub fn new(status: StatusCode, error: impl Into<String>, hint: impl Into<String>) -> Self {
        ApiError { status, body: ErrorBody { error: error.into(), hint: hint.into() } }
    }

    /// 400, naming the field at fault.
    pub fn bad(field: &str, msg: impl std::fmt::Display, hint: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, format!("{field}: {msg}"), hint)
    }

    /// Nothing has been indexed yet.
    pub fn empty_index() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "the index is empty: nothing has been indexed yet",
            "upload documents first: POST /documents",
        )
    }

    pub fn internal(msg: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, msg, "a bug or a broken index; the server log has the details")
    }

    /// A blocking task that did not finish (it panicked, or the runtime is shutting down).
    pub fn join(e: tokio::task::JoinError) -> Self {
        if e.is_panic() {
            Self::internal("the request failed inside the engine (a panic)")
        } else {
            Self::new(StatusCode::SERVICE_UNAVAILABLE, "the server is shutting down", "retry after it restarts")
        }
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        match &e {
            Error::BadInput { input, .. } => {
                let hint = format!("fix `{input}` and send the request again");
                ApiError::new(StatusCode::BAD_REQUEST, e.to_string(), hint)
            }
            Error::Config(_) => ApiError::new(
                StatusCode::BAD_REQUEST,
                e.to_string(),
                "a setting named above is unknown or out of range; `rhizome config` lists the settings",
            ),
            Error::NotFound(_) => ApiError::new(StatusCode::NOT_FOUND, e.to_string(), "check the id or name"),
            Error::Busy { .. } => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                e.to_string(),
                "another process is writing the index; retry when it has finished",
            ),
            Error::DiskFull(_) => ApiError::new(
                StatusCode::INSUFFICIENT_STORAGE,
                e.to_string(),
                "free space on the disk that holds the index, then send the request again",
            ),
            Error::Cancelled => ApiError::new(
                StatusCode::CONFLICT,
                "cancelled: the server is shutting down",
                "send it again once the server is back; what was committed stays",
            ),
            Error::Index { msg, .. } if msg.starts_with("no Rhizome index here") => ApiError::empty_index(),
            _ => ApiError::internal(e.to_string()),
        }
    }
}

/// Every error answered is a log line in the request's span: a refusal (4xx) at info, a
/// failure (5xx) at error.
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status.as_u16();
        if self.status.is_server_error() {
            tracing::error!(status, hint = %self.body.hint, "{}", self.body.error);
        } else {
            tracing::info!(status, hint = %self.body.hint, "refused: {}", self.body.error);
        }
        (self.status, Json(self.body)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// A rejection's status with our body; 422 (well-formed JSON of the wrong shape) is 400.
fn rejection(status: StatusCode, text: String, hint: &str) -> ApiError {
    let status = if status == StatusCode::UNPROCESSABLE_ENTITY { StatusCode::BAD_REQUEST } else { status };
    let hint = if status == StatusCode::PAYLOAD_TOO_LARGE {
        "the body is larger than the server accepts (rhizome serve --max-upload-mb)"
    } else {
        hint
    };
    ApiError::new(status, text, hint)
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        // serde names the field: "documents[0].text: missing field `text`", "unknown field `metod`".
        let text = r.body_text().replace("Failed to deserialize the JSON body into the target type: ", "");
        rejection(
            r.status(),
            format!("body: {text}"),
            "send a JSON body as /openapi.json describes, with Content-Type: application/json",
        )
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        let text = r.body_text().replace("Failed to deserialize query string: ", "");
        rejection(r.status(), format!("query string: {text}"), "see /openapi.json for the parameters")
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        rejection(r.status(), format!("path: {}", r.body_text()), "see /openapi.json for the paths")
    }
}

impl From<axum::extract::multipart::MultipartError> for ApiError {
    fn from(e: axum::extract::multipart::MultipartError) -> Self {
        rejection(e.status(), format!("files: {}", e.body_text()), "send multipart/form-data with one file per part")
    }
}

impl From<axum::extract::multipart::MultipartRejection> for ApiError {
    fn from(r: axum::extract::multipart::MultipartRejection) -> Self {
        rejection(r.status(), format!("files: {}", r.body_text()), "send multipart/form-data with one file per part")
    }
}

/// `Json<T>` whose rejections are [`ApiError`]s.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        Ok(ApiJson(Json::<T>::from_request(req, state).await?.0))
    }
}

/// A JSON body whatever its Content-Type says (chat clients are not all careful about
/// it; Ollama itself does not check), with rejections as [`ApiError`]s.
pub struct AnyJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for AnyJson<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|r| rejection(r.status(), format!("body: {}", r.body_text()), "send a smaller body"))?;
        Ok(AnyJson(Json::<T>::from_bytes(&bytes)?.0))
    }
}

/// `Query<T>` whose rejections are [`ApiError`]s.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Ok(ApiQuery(axum::extract::Query::<T>::from_request_parts(parts, state).await?.0))
    }
}

/// `Path<T>` whose rejections are [`ApiError`]s.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Ok(ApiPath(axum::extract::Path::<T>::from_request_parts(parts, state).await?.0))
    }
}

/// A panic in a handler: 500 JSON instead of a dropped connection.
pub fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked");
    ApiError::internal("the server hit a bug answering this request (a panic)").into_response()
}

/// Unknown paths.
pub async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such endpoint", "GET /openapi.json lists the endpoints; /docs shows them")
}

/// Known paths with another method.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "this endpoint does not take that method",
        "GET /openapi.json lists the endpoints and their methods",
    )
}
