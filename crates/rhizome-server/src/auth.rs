//! API keys: `Authorization: Bearer KEY` or `X-API-Key: KEY`, compared in constant time:
//! the server keeps only each key's SHA-256 digest and compares the digest of the key
//! presented with every one of them, all 32 bytes, so the time taken says neither which
//! byte differed nor how long the key is. A key configured with the suffix `:ro` reads but
//! cannot upload or delete. Without any key the server only listens on loopback.

use std::net::SocketAddr;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rhizome_core::{Error, Result};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::AppState;

/// A key (its SHA-256 digest) and what it may do.
#[derive(Clone)]
pub struct ApiKey {
    digest: [u8; 32],
    len: usize,
    pub read_only: bool,
}

impl std::fmt::Debug for ApiKey {
    // Keys are never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey({} bytes{})", self.len, if self.read_only { ", read-only" } else { "" })
    }
}

/// Keys from `--api-key` flags and `RHIZOME_API_KEYS` (comma-separated); `KEY:ro` is
/// read-only. Empty entries are ignored.
pub fn parse_keys(flags: &[String], env: Option<&str>) -> Result<Vec<ApiKey>> {
    let mut out = Vec::new();
    let from_env = env.unwrap_or("").split(',');
    for (i, raw) in flags.iter().map(String::as_str).chain(from_env).enumerate() {
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let (key, read_only) = match raw.strip_suffix(":ro") {
            Some(k) => (k, true),
            None => (raw, false),
        };
        if key.len() < 8 {
            return Err(Error::bad_input(
                format!("API key {}", i + 1),
                "too short: use at least 8 characters (e.g. `openssl rand -hex 16`)",
            ));
        }
        out.push(ApiKey { digest: digest(key.as_bytes()), len: key.len(), read_only });
    }
    Ok(out)
}

/// Refuse to listen beyond loopback without a key.
pub fn check_bind(addr: &SocketAddr, keys: &[ApiKey]) -> Result<()> {
    if keys.is_empty() && !addr.ip().is_loopback() {
        return Err(Error::Config(format!(
            "refusing to listen on {addr} without an API key: anyone who can reach it could read and change \
             the index. Give --api-key KEY (or RHIZOME_API_KEYS=KEY1,KEY2:ro), or listen on 127.0.0.1"
        )));
    }
    Ok(())
}

fn digest(key: &[u8]) -> [u8; 32] {
    Sha256::digest(key).into()
}

/// Equal, looking at every byte whatever the first difference (no early exit).
fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | std::hint::black_box(x ^ y));
    std::hint::black_box(diff) == 0
}

/// The key a request carries, if any. The `Bearer` scheme is matched in any case (HTTP
/// authentication schemes are case-insensitive); a bare value is taken as the key.
fn presented(headers: &HeaderMap) -> Option<&[u8]> {
    if let Some(v) = headers.get(axum::http::header::AUTHORIZATION) {
        let v = v.as_bytes().trim_ascii();
        let scheme = b"bearer";
        let bearer = v.len() > scheme.len()
            && v[..scheme.len()].eq_ignore_ascii_case(scheme)
            && v[scheme.len()].is_ascii_whitespace();
        return Some(if bearer { v[scheme.len()..].trim_ascii() } else { v });
    }
    headers.get("x-api-key").map(|v| v.as_bytes().trim_ascii())
}

/// Requests anyone may make: reading paths that show nothing of the index's content.
/// Other methods on them need a key like every other request.
fn public(method: &Method, path: &str) -> bool {
    (method == Method::GET || method == Method::HEAD)
        && (matches!(path, "/health" | "/openapi.json" | "/docs") || crate::ui::PATHS.contains(&path))
}

/// Requests that write the index. (`/mcp` is one endpoint for reading and writing tools:
/// a read-only key reaches it marked, and is refused the tools that write; its DELETE
/// ends an MCP session.)
fn writes(method: &Method, path: &str) -> bool {
    (method == Method::POST && path == "/documents") || (method == Method::DELETE && path != "/mcp")
}

/// The middleware: 401 without a valid key, 403 for a read-only key on a write.
pub async fn require_key(State(state): State<AppState>, mut req: Request, next: Next) -> Result<Response, ApiError> {
    if state.keys.is_empty() || public(req.method(), req.uri().path()) {
        return Ok(next.run(req).await);
    }
    let Some(given) = presented(req.headers()) else {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "no API key",
            "send Authorization: Bearer KEY (or X-API-Key: KEY)",
        ));
    };
    // Every key is compared, so the time does not say which one matched.
    let given = digest(given);
    let mut matched: Option<&ApiKey> = None;
    for k in state.keys.iter() {
        if ct_eq(&k.digest, &given) {
            matched = Some(k);
        }
    }
    let Some(key) = matched else {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "wrong API key",
            "check the key the server was started with",
        ));
    };
    if key.read_only && writes(req.method(), req.uri().path()) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "this API key is read-only: it cannot upload or delete",
            "use a key configured without :ro",
        ));
    }
    #[cfg(feature = "mcp")]
    if key.read_only {
        req.extensions_mut().insert(rhizome_mcp::ReadOnlyKey);
    }
    Ok(next.run(req).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_compare() {
        let keys = parse_keys(&["secret-key-1".into()], Some("reader-key-2:ro, ,")).unwrap();
        assert_eq!(keys.len(), 2);
        assert!(!keys[0].read_only && keys[1].read_only);
        assert!(ct_eq(&keys[1].digest, &digest(b"reader-key-2")));
        assert!(!ct_eq(&keys[1].digest, &digest(b"reader-key-3")));
        assert!(!format!("{keys:?}").contains("secret"));
        assert!(parse_keys(&["short".into()], None).is_err());
        let lan: SocketAddr = "0.0.0.0:8400".parse().unwrap();
        assert!(check_bind(&lan, &[]).is_err());
        assert!(check_bind(&lan, &keys).is_ok());
        assert!(check_bind(&"127.0.0.1:8400".parse().unwrap(), &[]).is_ok());
    }

    #[test]
    fn the_bearer_scheme_is_matched_in_any_case() {
        for value in [
            "Bearer secret-key-1",
            "bearer secret-key-1",
            "BEARER secret-key-1",
            "BeArEr  secret-key-1 ",
            "secret-key-1",
        ] {
            let mut h = HeaderMap::new();
            h.insert(axum::http::header::AUTHORIZATION, value.parse().unwrap());
            assert_eq!(presented(&h), Some(&b"secret-key-1"[..]), "{value}");
        }
    }

    /// The comparison: equal digests only; a difference in any one byte, a prefix, a
    /// longer key, the empty key all differ.
    #[test]
    fn digests_compare_on_every_byte() {
        let k = digest(b"secret-key-1");
        assert!(ct_eq(&k, &digest(b"secret-key-1")));
        for other in [&b"secret-key-2"[..], b"secret-key-", b"secret-key-10", b"", b"Secret-key-1", b"secret-key-1 "] {
            assert!(!ct_eq(&k, &digest(other)), "{:?}", String::from_utf8_lossy(other));
        }
        for i in 0..32 {
            for bit in 0..8 {
                let mut d = k;
                d[i] ^= 1 << bit;
                assert!(!ct_eq(&k, &d), "byte {i} bit {bit}");
            }
        }
        let keys = parse_keys(&["secret-key-1".into()], None).unwrap();
        assert_eq!(format!("{:?}", keys[0]), "ApiKey(12 bytes)");
        assert!(
            public(&Method::GET, "/health") && !public(&Method::POST, "/health") && !public(&Method::DELETE, "/docs")
        );
        assert!(!public(&Method::GET, "/stats"));
    }
}
