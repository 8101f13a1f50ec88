//! API keys: `Authorization: Bearer KEY` or `X-API-Key: KEY`, compared in constant time:
//! the server keeps only each key's SHA-256 digest and compares the digest of the key
//! presented with every one of them, all 32 bytes, so the time taken says neither which
//! byte differed nor how long the key is. What a key may do is its role and its
//! workspaces ([`crate::keys`]); a refusal is logged with the key's name, never the key.
//! Without any key the server only listens on loopback.

use std::net::SocketAddr;

use axum::http::{HeaderMap, Method, StatusCode};
use rhizome_core::{Error, Result};

use crate::error::ApiError;
use crate::key_ring::KeyRing;
pub use crate::keys::ApiKey;
use crate::keys::{digest, Role};

/// Keys from `--api-key` flags and `RHIZOME_API_KEYS` (comma-separated): every
/// workspace, `admin`, or `read` with the suffix `:ro`. Empty entries are ignored.
pub fn parse_keys(flags: &[String], env: Option<&str>) -> Result<Vec<ApiKey>> {
    let mut out = Vec::new();
    let from_env = env.unwrap_or("").split(',');
    for (i, raw) in flags.iter().map(String::as_str).chain(from_env).enumerate() {
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let (key, role) = match raw.strip_suffix(":ro") {
            Some(k) => (k, Role::Read),
            None => (raw, Role::Admin),
        };
        if key.len() < 8 {
            return Err(Error::bad_input(
                format!("API key {}", i + 1),
                "too short: use at least 8 characters (e.g. `openssl rand -hex 16`)",
            ));
        }
        out.push(ApiKey::new(&format!("api-key-{}", out.len() + 1), key, role, vec!["*".into()]));
    }
    Ok(out)
}

/// Refuse to listen beyond loopback without a key (a key file counts, even empty: it
/// refuses everybody until keys are added).
pub fn check_bind(addr: &SocketAddr, keys_required: bool) -> Result<()> {
    if !keys_required && !addr.ip().is_loopback() {
        return Err(Error::Config(format!(
            "refusing to listen on {addr} without an API key: anyone who can reach it could read and change \
             the index. Give --api-key KEY (or RHIZOME_API_KEYS=KEY1,KEY2:ro, or --keys-file FILE), or listen on 127.0.0.1"
        )));
    }
    Ok(())
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

/// Requests anyone may make: reading paths that show nothing of an index's content.
/// Other methods on them need a key like every other request. `in_workspace`: the
/// request names a workspace, whose health needs a key (it counts its documents).
pub(crate) fn public(method: &Method, path: &str, in_workspace: bool) -> bool {
    (method == Method::GET || method == Method::HEAD)
        && ((!in_workspace && path == "/health")
            || matches!(path, "/openapi.json" | "/docs")
            || crate::ui::PATHS.contains(&path))
}

/// Requests that write an index. (`/mcp` is one endpoint for reading and writing tools:
/// a read-only key reaches it marked, and is refused the tools that write; its DELETE
/// ends an MCP session.)
pub(crate) fn writes(method: &Method, path: &str) -> bool {
    (method == Method::POST && path == "/documents") || (method == Method::DELETE && path != "/mcp")
}

/// Who made a request: the key's name and what it may do.
#[derive(Debug, Clone)]
pub struct Caller {
    pub key: ApiKey,
}

fn refuse(status: StatusCode, error: &str, hint: &str) -> ApiError {
    ApiError::new(status, error, hint)
}

/// The key of a request among the ring's, or 401.
pub(crate) fn identify(ring: &KeyRing, headers: &HeaderMap) -> std::result::Result<ApiKey, ApiError> {
    let Some(given) = presented(headers) else {
        return Err(refuse(
            StatusCode::UNAUTHORIZED,
            "no API key",
            "send Authorization: Bearer KEY (or X-API-Key: KEY)",
        ));
    };
    let keys = ring.current().map_err(|e| {
        tracing::error!(error = %e, "the key file cannot be read");
        refuse(StatusCode::SERVICE_UNAVAILABLE, "the server's key file cannot be read", "ask its administrator")
    })?;
    // Every key is compared, so the time does not say which one matched.
    let given = digest(given);
    let mut matched: Option<&ApiKey> = None;
    for k in keys.iter() {
        if ct_eq(&k.digest, &given) {
            matched = Some(k);
        }
    }
    match matched {
        Some(k) => Ok(k.clone()),
        None => {
            tracing::warn!(key = "(unknown)", "refused: wrong API key");
            Err(refuse(StatusCode::UNAUTHORIZED, "wrong API key", "check the key the server was started with"))
        }
    }
}

/// Whether `key` may make this request of workspace `workspace`: 403 otherwise, logged
/// with the key's name. A workspace the key does not reach is answered as one that does
/// not exist (404), so that its name says nothing of other tenants.
pub(crate) fn allow(key: &ApiKey, workspace: &str, method: &Method, path: &str) -> std::result::Result<(), ApiError> {
    if !key.reaches(workspace) {
        tracing::warn!(key = %key.name, workspace, %method, path, "refused: the key does not reach this workspace");
        return Err(crate::workspaces::unknown(workspace));
    }
    if key.role < Role::Write && writes(method, path) {
        tracing::warn!(key = %key.name, workspace, %method, path, "refused: a read key cannot write");
        return Err(refuse(
            StatusCode::FORBIDDEN,
            "this API key is read-only: it cannot upload or delete",
            "use a key with the write role",
        ));
    }
    Ok(())
}

/// The caller of an admin request: a key with role `admin` (and, with `everywhere`, one
/// that reaches every workspace); without configured keys, anybody (the server is on
/// loopback).
pub(crate) fn admin(
    ring: &KeyRing,
    headers: &HeaderMap,
    everywhere: bool,
    what: &str,
) -> std::result::Result<Option<ApiKey>, ApiError> {
    if !ring.required() {
        return Ok(None);
    }
    let key = identify(ring, headers)?;
    if key.role < Role::Admin || (everywhere && !key.everywhere()) {
        tracing::warn!(key = %key.name, what, "refused: needs an admin key");
        let need =
            if everywhere { "a key with the admin role for every workspace (*)" } else { "a key with the admin role" };
        return Err(refuse(StatusCode::FORBIDDEN, &format!("{what} needs an admin key"), &format!("use {need}")));
    }
    Ok(Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_compare() {
        let keys = parse_keys(&["secret-key-1".into()], Some("reader-key-2:ro, ,")).unwrap();
        assert_eq!(keys.len(), 2);
        assert!(!keys[0].read_only() && keys[1].read_only());
        assert_eq!((keys[0].name.as_str(), keys[1].name.as_str()), ("api-key-1", "api-key-2"));
        assert!(ct_eq(&keys[1].digest, &digest(b"reader-key-2")));
        assert!(!ct_eq(&keys[1].digest, &digest(b"reader-key-3")));
        assert!(!format!("{keys:?}").contains("secret"));
        assert!(parse_keys(&["short".into()], None).is_err());
        let lan: SocketAddr = "0.0.0.0:8400".parse().unwrap();
        assert!(check_bind(&lan, false).is_err());
        assert!(check_bind(&lan, true).is_ok());
        assert!(check_bind(&"127.0.0.1:8400".parse().unwrap(), false).is_ok());
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
        assert_eq!(format!("{:?}", keys[0]), "ApiKey(api-key-1, admin, *)");
        assert!(
            public(&Method::GET, "/health", false)
                && !public(&Method::POST, "/health", false)
                && !public(&Method::DELETE, "/docs", false)
        );
        assert!(!public(&Method::GET, "/stats", false) && !public(&Method::GET, "/health", true));
    }
}
