//! The web UI at `/`: a page, a script and a stylesheet, built from `web/` by `build.rs`
//! and embedded in the binary, so that it works with no Node.js and no network (feature
//! `ui`; without it, `/` says how to get the page).

use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::response::IntoResponse;

#[cfg(feature = "ui")]
const INDEX: &str = include_str!(concat!(env!("OUT_DIR"), "/ui/index.html"));
#[cfg(feature = "ui")]
const APP_JS: &str = include_str!(concat!(env!("OUT_DIR"), "/ui/app.js"));
#[cfg(feature = "ui")]
const APP_CSS: &str = include_str!(concat!(env!("OUT_DIR"), "/ui/app.css"));

/// A build without the `ui` feature serves this note in place of the page.
#[cfg(not(feature = "ui"))]
const INDEX: &str = "<!doctype html><meta charset=utf-8><title>Rhizome</title><p>This build of rhizome has \
    no web UI: build it with the <code>ui</code> feature (on by default; it needs Node.js and npm). The HTTP \
    API is described at <a href=\"/docs\">/docs</a>.</p>";
#[cfg(not(feature = "ui"))]
const APP_JS: &str = "";
#[cfg(not(feature = "ui"))]
const APP_CSS: &str = "";

/// Only this server's own script and styles; the layout runs in a worker made from a blob.
const CSP: &str = "default-src 'self'; script-src 'self'; worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'";

/// Paths the UI is served at (public: the page asks for the API key itself).
pub const PATHS: &[&str] = &["/", "/ui/app.js", "/ui/app.css"];

fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (CONTENT_TYPE, content_type),
            (CACHE_CONTROL, "no-cache"),
            (CONTENT_SECURITY_POLICY, CSP),
            (X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
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
