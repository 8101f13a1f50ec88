//! Every HTTP request: its id (the client's `X-Request-Id` when sane, else a new one),
//! returned in the response's `X-Request-Id`; a `request{id, method, route}` span that
//! every log line and span of the request sits in (its parent taken from a W3C
//! `traceparent` header when one is sent); one access line (method, route template,
//! status, milliseconds); and the request metrics. The route is the matched template
//! (`/documents/{id}`), never the path asked, so ids stay out of labels and logs; headers
//! (and with them API keys) are never logged.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use tracing::field::Empty;
use tracing::Instrument;

/// The request id header, read and answered.
pub const REQUEST_ID: &str = "x-request-id";

/// The longest request id taken from a client.
pub const MAX_REQUEST_ID: usize = 128;

/// A request's id, for handlers that want it (an extension of the request).
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// The client's id when it is 1 to [`MAX_REQUEST_ID`] printable ASCII characters (no
/// spaces or controls), else None.
pub fn sane_id(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(REQUEST_ID)?.as_bytes();
    let ok = !v.is_empty() && v.len() <= MAX_REQUEST_ID && v.iter().all(|b| b.is_ascii_graphic());
    ok.then(|| String::from_utf8_lossy(v).into_owned())
}

/// The method as a label: the standard ones by name, anything else `other`, so that a
/// client cannot add series.
pub fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        _ => "other",
    }
}

/// A W3C `traceparent` (`00-TRACEID-SPANID-FLAGS`, lowercase hex, ids not all zero), or None.
pub fn traceparent(headers: &HeaderMap) -> Option<String> {
    let v = headers.get("traceparent")?.to_str().ok()?.trim();
    let parts: Vec<&str> = v.split('-').collect();
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let [version, trace, span, flags] = parts[..] else { return None };
    let ok = hex(version, 2)
        && version != "ff"
        && hex(trace, 32)
        && hex(span, 16)
        && hex(flags, 2)
        && trace.bytes().any(|b| b != b'0')
        && span.bytes().any(|b| b != b'0');
    ok.then(|| v.to_string())
}

/// The middleware (the outermost layer, so that refusals by the other layers are seen).
pub async fn observe(mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = sane_id(req.headers()).unwrap_or_else(|| format!("{:016x}", super::random_u64()));
    // A route outside workspaces is matched here; a workspace's, inside it (its template
    // comes back with the response, see [`label_route`]).
    let outer = req.extensions().get::<MatchedPath>().map(|m| m.as_str().to_string());
    let method = method_label(req.method());
    let parent = traceparent(req.headers());
    let span = tracing::info_span!(
        "request",
        id = %id,
        method,
        route = Empty,
        workspace = Empty,
        traceparent = parent.as_deref(),
        status = Empty,
    );
    if let Some(r) = &outer {
        span.record("route", r.as_str());
    }
    req.extensions_mut().insert(RequestId(id.clone()));
    let mut resp = next.run(req).instrument(span.clone()).await;
    let status = resp.status().as_u16();
    let secs = started.elapsed().as_secs_f64();
    let inner = resp.extensions().get::<RouteTemplate>().map(|r| r.0.clone());
    let route = inner.or(outer.clone()).unwrap_or_else(|| "unmatched".to_string());
    let workspace = resp.extensions().get::<crate::WorkspaceName>().map(|w| w.0.to_string()).unwrap_or_default();
    span.record("status", status);
    if outer.is_none() && resp.extensions().get::<RouteTemplate>().is_none() {
        span.record("route", route.as_str());
    }
    if !workspace.is_empty() {
        span.record("workspace", workspace.as_str());
    }
    let labels = super::metrics::RequestLabels { workspace: &workspace, route: &route, method, status };
    super::metrics::record_request(&labels, secs);
    span.in_scope(
        || tracing::info!(target: "rhizome::access", ms = (secs * 1e4).round() / 10.0, "{method} {route} {status}"),
    );
    if let Ok(v) = HeaderValue::from_str(&id) {
        resp.headers_mut().insert(REQUEST_ID, v);
    }
    resp
}

/// The route template a workspace's router matched, handed out with the response to
/// [`observe`] outside.
#[derive(Debug, Clone)]
pub struct RouteTemplate(pub String);

/// The layer of a workspace's router that hands its matched route out with the response.
pub async fn label_route(req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map(|m| m.as_str().to_string());
    if let Some(r) = &route {
        // The request's span (see [`observe`]) names its route from here on.
        tracing::Span::current().record("route", r.as_str());
    }
    let mut resp = next.run(req).await;
    if let Some(r) = route {
        resp.extensions_mut().insert(RouteTemplate(r));
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: &str, value: &[u8]) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_bytes(value).unwrap());
        h
    }

    #[test]
    fn client_ids_are_taken_only_when_sane() {
        assert_eq!(sane_id(&headers(REQUEST_ID, b"abc-123_X.y")).as_deref(), Some("abc-123_X.y"));
        assert_eq!(sane_id(&headers(REQUEST_ID, b"has space")), None);
        assert_eq!(sane_id(&headers(REQUEST_ID, b"caf\xc3\xa9")), None);
        assert_eq!(sane_id(&headers(REQUEST_ID, &[b'a'; MAX_REQUEST_ID])).map(|s| s.len()), Some(MAX_REQUEST_ID));
        assert_eq!(sane_id(&headers(REQUEST_ID, &[b'a'; MAX_REQUEST_ID + 1])), None);
        assert_eq!(sane_id(&HeaderMap::new()), None);
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "other");
    }

    #[test]
    fn traceparents_are_checked() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(traceparent(&headers("traceparent", good.as_bytes())).as_deref(), Some(good));
        for bad in [
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01",
        ] {
            assert_eq!(traceparent(&headers("traceparent", bad.as_bytes())), None, "{bad}");
        }
    }
}
