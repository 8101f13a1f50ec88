//! The web UI at `/`: a page, a script and a stylesheet, built from `web/` by `build.rs`
//! and embedded in the binary, so that it works with no Node.js and no network.

use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::response::IntoResponse;

const INDEX: &str = include_str!(concat!(env!("OUT_DIR"), "/ui/index.html"));
const APP_JS: &str = include_str!(concat!(env!("OUT_DIR"), "/ui/app.js"));
const APP_CSS: &str = include_str!(concat!(env!("OUT_DIR"), "/ui/app.css"));

/// Only this server's own script and styles; the layout runs in a worker made from a blob.
const CSP: &str = "default-src 'self'; script-src 'self'; worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'";

/// Paths the UI is served at (public: the page asks for the API key itself).
pub const PATHS: &[&str] = &["/", "/ui/app.js", "/ui/app.css"];

fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    ([(CONTENT_TYPE, content_type), (CACHE_CONTROL, "no-cache"), (CONTENT_SECURITY_POLICY, CSP), (X_CONTENT_TYPE_OPTIONS, "nosniff")], body)
}

pub async fn index() -> impl IntoResponse {
    asset("text/html; charset=utf-8", INDEX)
}

pub async fn app_js() -> impl IntoResponse {
    asset("text/javascript; charset=utf-8", APP_JS)
}

pub async fn app_css() -> impl IntoResponse {
    asset("text/css; charset=utf-8", APP_CSS)
}
