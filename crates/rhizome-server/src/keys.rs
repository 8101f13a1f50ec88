//! API keys with names, roles and workspaces. A key is kept only as its SHA-256 digest
//! (see [`crate::auth`] for the comparison). Keys come from flags and from one key store:
//!
//! - `--api-key KEY` flags and `RHIZOME_API_KEYS`: unnamed (`api-key-1`, ...), every
//!   workspace, `admin` (or `read` with the suffix `:ro`);
//! - a key file (`--keys-file`, JSON), written by `rhizome keys add|revoke` or the admin
//!   API (`POST /keys`, `DELETE /keys/{name}`), and read again by a running server when it
//!   changes: keys are created and revoked without a restart;
//! - or, on a PostgreSQL store without a key file, the store's key table, shared by
//!   every replica ([`crate::key_ring`]).
//!
//! Roles: `read` (queries, chat, browsing, job views), `write` (and uploads and deletions),
//! `admin` (and creating and deleting workspaces; with every workspace, managing keys and
//! reading `/metrics`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rhizome_core::{Error, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

/// What a key may do; each role may do what the one before it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Read,
    Write,
    Admin,
}

impl std::str::FromStr for Role {
    type Err = Error;
    fn from_str(s: &str) -> Result<Role> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read" | "ro" | "reader" => Ok(Role::Read),
            "write" | "rw" | "writer" => Ok(Role::Write),
            "admin" => Ok(Role::Admin),
            _ => Err(Error::bad_input(format!("role {s:?}"), "use read, write or admin")),
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Read => "read",
            Role::Write => "write",
            Role::Admin => "admin",
        })
    }
}

/// A key as the server knows it: never the key itself.
#[derive(Clone)]
pub struct ApiKey {
    pub name: String,
    pub(crate) digest: [u8; 32],
    pub role: Role,
    /// The workspaces it reaches; `*` alone: every one.
    pub workspaces: Vec<String>,
}

impl std::fmt::Debug for ApiKey {
    // Keys and their digests are never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey({}, {}, {})", self.name, self.role, self.workspaces.join(","))
    }
}

impl ApiKey {
    pub fn new(name: &str, key: &str, role: Role, workspaces: Vec<String>) -> ApiKey {
        ApiKey { name: name.into(), digest: digest(key.as_bytes()), role, workspaces }
    }

    /// Whether the key reaches every workspace.
    pub fn everywhere(&self) -> bool {
        self.workspaces.iter().any(|w| w == "*")
    }

    /// Whether the key reaches workspace `name`.
    pub fn reaches(&self, name: &str) -> bool {
        self.everywhere() || self.workspaces.iter().any(|w| w == name)
    }

    /// Read-only (the flag suffix `:ro`).
    pub fn read_only(&self) -> bool {
        self.role == Role::Read
    }
}

pub(crate) fn digest(key: &[u8]) -> [u8; 32] {
    Sha256::digest(key).into()
}

/// One key of the key file.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct KeyRecord {
    pub name: String,
    /// The key's SHA-256, hexadecimal.
    pub sha256: String,
    pub role: Role,
    /// Workspace names, or `*` for every one.
    pub workspaces: Vec<String>,
    /// Seconds since 1970 when the key was made.
    #[serde(default)]
    pub created: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct KeyFileBody {
    keys: Vec<KeyRecord>,
}

/// The key file: read, changed and written whole (written to a temporary file, then
/// renamed over it, so that a reader never sees half a file).
#[derive(Debug, Clone)]
pub struct KeyFile {
    path: PathBuf,
}

impl KeyFile {
    pub fn new(path: impl Into<PathBuf>) -> KeyFile {
        KeyFile { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The keys in the file; a missing file holds none.
    pub fn records(&self) -> Result<Vec<KeyRecord>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::Config(format!("key file {}: {e}", self.path.display()))),
        };
        let body: KeyFileBody = serde_json::from_str(&text).map_err(|e| {
            Error::Config(format!(
                "key file {}: not a key file ({e}); it is written by `rhizome keys add`: move it away to start anew",
                self.path.display()
            ))
        })?;
        Ok(body.keys)
    }

    /// The keys, as the server compares them.
    pub fn keys(&self) -> Result<Vec<ApiKey>> {
        to_keys(self.records()?, &format!("key file {}", self.path.display()))
    }

    fn write(&self, keys: Vec<KeyRecord>) -> Result<()> {
        let text = serde_json::to_string_pretty(&KeyFileBody { keys }).map_err(|e| Error::Config(e.to_string()))?;
        let dir = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let fail = |e: std::io::Error| Error::Config(format!("cannot write the key file {}: {e}", self.path.display()));
        std::fs::create_dir_all(dir).map_err(fail)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
        std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(fail)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o600));
        }
        tmp.persist(&self.path).map_err(|e| fail(e.error))?;
        Ok(())
    }

    /// Make a key named `name`; returns the key itself, which is not kept anywhere.
    pub fn add(&self, name: &str, role: Role, workspaces: Vec<String>) -> Result<String> {
        let (key, record) = new_record(name, role, workspaces)?;
        let mut keys = self.records()?;
        if keys.iter().any(|k| k.name == name) {
            return Err(exists(name));
        }
        keys.push(record);
        self.write(keys)?;
        Ok(key)
    }

    /// Remove the key named `name`; false when there is none.
    pub fn revoke(&self, name: &str) -> Result<bool> {
        let mut keys = self.records()?;
        let before = keys.len();
        keys.retain(|k| k.name != name);
        if keys.len() == before {
            return Ok(false);
        }
        self.write(keys)?;
        Ok(true)
    }
}

/// The keys of `records` (read from `origin`), as the server compares them.
pub(crate) fn to_keys(records: Vec<KeyRecord>, origin: &str) -> Result<Vec<ApiKey>> {
    let mut out = Vec::new();
    for r in records {
        let mut d = [0u8; 32];
        let hex = r.sha256.as_bytes();
        if hex.len() != 64 || !hex.iter().all(u8::is_ascii_hexdigit) {
            return Err(Error::Config(format!(
                "{origin}: key {:?} has no valid sha256 (64 hex digits); revoke it and add it again",
                r.name
            )));
        }
        for (i, b) in d.iter_mut().enumerate() {
            *b = u8::from_str_radix(&r.sha256[2 * i..2 * i + 2], 16).unwrap_or(0);
        }
        out.push(ApiKey { name: r.name, digest: d, role: r.role, workspaces: r.workspaces });
    }
    Ok(out)
}

pub(crate) fn exists(name: &str) -> Error {
    Error::bad_input(
        format!("key {name:?}"),
        "a key of that name exists: revoke it first (`rhizome keys revoke NAME`) or choose another name",
    )
}

/// A new key named `name` and its record (the key's digest, never the key).
pub(crate) fn new_record(name: &str, role: Role, workspaces: Vec<String>) -> Result<(String, KeyRecord)> {
    check_key_name(name)?;
    let workspaces = check_scope(workspaces)?;
    let key = new_key()?;
    let hex: String = digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    let created = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    Ok((key, KeyRecord { name: name.into(), sha256: hex, role, workspaces, created }))
}

fn check_key_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'@'));
    if !ok {
        return Err(Error::bad_input(
            format!("key name {name:?}"),
            "use 1 to 64 letters, digits and - _ . @ (e.g. alice or ci-bot)",
        ));
    }
    Ok(())
}

/// Workspace names, or `*`; none: every workspace.
fn check_scope(workspaces: Vec<String>) -> Result<Vec<String>> {
    let workspaces: Vec<String> =
        workspaces.into_iter().map(|w| w.trim().to_string()).filter(|w| !w.is_empty()).collect();
    if workspaces.is_empty() {
        return Ok(vec!["*".into()]);
    }
    for w in &workspaces {
        if w != "*" {
            rhizome_store::workspace::check_name(w)?;
        }
    }
    Ok(workspaces)
}

/// A new key: `rz_` and 32 random bytes in hexadecimal, from the system's random source.
fn new_key() -> Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| Error::Config(format!("cannot read /dev/urandom for a new key: {e}")))?;
    Ok(format!("rz_{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_parse_and_order() {
        assert_eq!("Write".parse::<Role>().unwrap(), Role::Write);
        assert!("owner".parse::<Role>().is_err());
        assert!(Role::Read < Role::Write && Role::Write < Role::Admin);
    }
}
