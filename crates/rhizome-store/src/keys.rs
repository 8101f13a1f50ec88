//! API keys several servers share (replicas of `rhizome serve` over one PostgreSQL
//! database): kept in the store, hashed, with a version counter that every change raises,
//! so that a server reads them again only when it moved. A store that cannot be shared
//! has none ([`crate::StoreUrl::key_table`] is None): its servers use a key file.

use rhizome_core::Result;

/// One key as kept: `workspaces` are names or `*`, `role` is read, write or admin.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRow {
    pub name: String,
    /// The key's SHA-256, hexadecimal (never the key).
    pub sha256: String,
    pub role: String,
    pub workspaces: Vec<String>,
    /// Seconds since 1970 when the key was made.
    pub created: u64,
}

/// The key table of a shared store.
pub trait KeyTable: Send + Sync {
    /// Where the keys are, as shown (no password).
    fn display(&self) -> String;
    /// The version counter: it changes whenever a key is added or removed.
    fn version(&self) -> Result<i64>;
    /// Every key, with the version they were read at (one snapshot).
    fn rows(&self) -> Result<(i64, Vec<KeyRow>)>;
    /// Add `key`; false (nothing changed) when a key of that name exists.
    fn add(&self, key: &KeyRow) -> Result<bool>;
    /// Remove the key named `name`; false when there is none.
    fn revoke(&self, name: &str) -> Result<bool>;
}
