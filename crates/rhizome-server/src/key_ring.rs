//! The keys a server takes: the flags' (`--api-key`, `RHIZOME_API_KEYS`) and those of its
//! key store, either a key file ([`KeyFile`], read again whenever it changes) or, on a
//! PostgreSQL store, the store's key table ([`rhizome_store::KeyTable`]) that every replica
//! reads: a thread of each server asks the table's version every [`TABLE_REFRESH`] and
//! reads the keys again when it moved, so a key made or revoked on one replica holds on
//! every other within that time (on the replica that made the change, at once).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use rhizome_core::{Error, Result};
use rhizome_store::{KeyRow, KeyTable};

use crate::keys::{exists, new_record, to_keys, ApiKey, KeyFile, KeyRecord, Role};

/// How often a server asks the key table whether keys changed.
pub const TABLE_REFRESH: Duration = Duration::from_secs(1);

/// Where named keys are kept.
#[derive(Clone)]
pub enum KeyStore {
    File(KeyFile),
    /// The store's key table (replicas over one database).
    Table(Arc<dyn KeyTable>),
}

impl std::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl KeyStore {
    /// The key store of a server or of `rhizome keys`: `given` (a key file), else the
    /// index's own key file `own` when it exists, else the store's key table (PostgreSQL),
    /// else `own` when `make_file` (it is made by the first key), else none.
    pub fn resolve(given: Option<PathBuf>, own: PathBuf, store: &str, make_file: bool) -> Result<Option<KeyStore>> {
        if let Some(f) = given {
            return Ok(Some(KeyStore::File(KeyFile::new(f))));
        }
        if own.exists() {
            return Ok(Some(KeyStore::File(KeyFile::new(own))));
        }
        if let Some(t) = rhizome_store::StoreUrl::parse(store)?.key_table()? {
            return Ok(Some(KeyStore::Table(t)));
        }
        Ok(make_file.then(|| KeyStore::File(KeyFile::new(own))))
    }

    /// Where the keys are, for messages: `the key file PATH` or `the database URL`.
    pub fn describe(&self) -> String {
        match self {
            KeyStore::File(f) => format!("the key file {}", f.path().display()),
            KeyStore::Table(t) => format!("the database {} (table serve_keys)", t.display()),
        }
    }

    /// `file` or `database`, as `GET /keys` names a key's source.
    pub fn kind(&self) -> &'static str {
        match self {
            KeyStore::File(_) => "file",
            KeyStore::Table(_) => "database",
        }
    }

    pub fn records(&self) -> Result<Vec<KeyRecord>> {
        match self {
            KeyStore::File(f) => f.records(),
            KeyStore::Table(t) => t.rows()?.1.into_iter().map(|r| record(r, t.as_ref())).collect(),
        }
    }

    /// Make a key named `name`; returns the key itself, which is not kept anywhere.
    pub fn add(&self, name: &str, role: Role, workspaces: Vec<String>) -> Result<String> {
        match self {
            KeyStore::File(f) => f.add(name, role, workspaces),
            KeyStore::Table(t) => {
                let (key, r) = new_record(name, role, workspaces)?;
                let row = KeyRow {
                    name: r.name,
                    sha256: r.sha256,
                    role: r.role.to_string(),
                    workspaces: r.workspaces,
                    created: r.created,
                };
                if !t.add(&row)? {
                    return Err(exists(name));
                }
                Ok(key)
            }
        }
    }

    /// Remove the key named `name`; false when there is none.
    pub fn revoke(&self, name: &str) -> Result<bool> {
        match self {
            KeyStore::File(f) => f.revoke(name),
            KeyStore::Table(t) => t.revoke(name),
        }
    }
}

fn record(r: KeyRow, t: &dyn KeyTable) -> Result<KeyRecord> {
    let role = r.role.parse::<Role>().map_err(|_| {
        Error::Config(format!(
            "the database {}: key {:?} has the role {:?}; revoke it and add it again",
            t.display(),
            r.name,
            r.role
        ))
    })?;
    Ok(KeyRecord { name: r.name, sha256: r.sha256, role, workspaces: r.workspaces, created: r.created })
}

/// What the key store held when last read.
#[derive(Default)]
struct Loaded {
    /// The key file's modification time and length, or the table's version.
    stamp: Option<(SystemTime, u64, i64)>,
    keys: Arc<Vec<ApiKey>>,
}

/// Every key the server takes: the flags', then the key store's.
pub struct KeyRing {
    flags: Vec<ApiKey>,
    store: Option<KeyStore>,
    loaded: Mutex<Loaded>,
    /// The key table has held a key since the server started: keys are required from
    /// then on, even if every key is revoked (the server then refuses everybody).
    table_used: AtomicBool,
}

impl KeyRing {
    /// The ring, its keys read once (blocking: a key table is a database); a key table is
    /// then read again by a thread of its own while the ring lives.
    pub fn new(flags: Vec<ApiKey>, store: Option<KeyStore>) -> Result<Arc<KeyRing>> {
        let ring = Arc::new(KeyRing { flags, store, loaded: Mutex::default(), table_used: AtomicBool::new(false) });
        ring.reload()?;
        if matches!(ring.store, Some(KeyStore::Table(_))) {
            let weak = Arc::downgrade(&ring);
            std::thread::Builder::new()
                .name("rhizome-keys".into())
                .spawn(move || poll_table(weak))
                .map_err(|e| Error::Config(format!("cannot start the key table's reader: {e}")))?;
        }
        Ok(ring)
    }

    /// Whether requests need a key: some key is given by flag, a key file is in use
    /// (which may hold none yet), or the key table has held a key.
    pub fn required(&self) -> bool {
        !self.flags.is_empty()
            || matches!(self.store, Some(KeyStore::File(_)))
            || self.table_used.load(Ordering::Relaxed)
    }

    pub fn store(&self) -> Option<&KeyStore> {
        self.store.as_ref()
    }

    /// Make a key in the key store (blocking); the ring has it at once.
    pub fn add(&self, name: &str, role: Role, workspaces: Vec<String>) -> Result<String> {
        let key = self.store_or_err()?.add(name, role, workspaces)?;
        self.reload()?;
        Ok(key)
    }

    /// Revoke a key of the key store (blocking); the ring refuses it at once.
    pub fn revoke(&self, name: &str) -> Result<bool> {
        let gone = self.store_or_err()?.revoke(name)?;
        self.reload()?;
        Ok(gone)
    }

    fn store_or_err(&self) -> Result<&KeyStore> {
        self.store.as_ref().ok_or_else(|| Error::Config("this server keeps no key file nor key table".into()))
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Loaded> {
        self.loaded.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The keys in force: the flags', then the key store's. A key file is looked at on
    /// every call (its time and length); a key table is only read by [`KeyRing::reload`]
    /// (never on a request: it is a database).
    pub fn current(&self) -> Result<Arc<Vec<ApiKey>>> {
        match &self.store {
            None => Ok(Arc::new(self.flags.clone())),
            Some(KeyStore::Table(_)) => Ok(self.slot().keys.clone()),
            Some(KeyStore::File(file)) => {
                let stamp = std::fs::metadata(file.path())
                    .ok()
                    .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len(), 0));
                let mut slot = self.slot();
                if slot.stamp.is_some() && slot.stamp == stamp {
                    return Ok(slot.keys.clone());
                }
                let mut all = self.flags.clone();
                all.extend(file.keys()?);
                *slot = Loaded { stamp, keys: Arc::new(all) };
                Ok(slot.keys.clone())
            }
        }
    }

    /// Read the key store again (a key table: when its version moved).
    fn reload(&self) -> Result<()> {
        let Some(KeyStore::Table(t)) = &self.store else { return self.current().map(|_| ()) };
        let version = t.version()?;
        if self.slot().stamp.is_some_and(|s| s.2 == version) {
            return Ok(());
        }
        let (version, rows) = t.rows()?;
        let records = rows.into_iter().map(|r| record(r, t.as_ref())).collect::<Result<Vec<_>>>()?;
        if !records.is_empty() {
            self.table_used.store(true, Ordering::Relaxed);
        }
        let mut all = self.flags.clone();
        all.extend(to_keys(records, &format!("the database {}", t.display()))?);
        *self.slot() = Loaded { stamp: Some((SystemTime::UNIX_EPOCH, 0, version)), keys: Arc::new(all) };
        Ok(())
    }
}

/// Read the key table again every [`TABLE_REFRESH`] while the ring lives. A failed read
/// keeps the keys last read, and is logged once until a read succeeds.
fn poll_table(ring: Weak<KeyRing>) {
    let mut failing = false;
    loop {
        std::thread::sleep(TABLE_REFRESH);
        let Some(ring) = ring.upgrade() else { return };
        match ring.reload() {
            Ok(()) => failing = false,
            Err(e) if !failing => {
                failing = true;
                tracing::error!(error = %e, "the key table cannot be read; the keys last read stay in force");
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_is_read_again_when_it_changes() {
        let t = tempfile::tempdir().unwrap();
        let file = KeyFile::new(t.path().join("keys.json"));
        let ring = KeyRing::new(vec![], Some(KeyStore::File(KeyFile::new(file.path())))).unwrap();
        assert!(ring.required() && ring.current().unwrap().is_empty());
        let k = file.add("alice", Role::Write, vec!["team-a".into()]).unwrap();
        assert!(k.starts_with("rz_") && k.len() == 67);
        let text = std::fs::read_to_string(file.path()).unwrap();
        assert!(!text.contains(&k[3..]), "the key itself is never written");
        let keys = ring.current().unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].digest, crate::keys::digest(k.as_bytes()));
        assert!(keys[0].reaches("team-a") && !keys[0].reaches("team-b") && !keys[0].reaches("default"));
        assert!(file.add("alice", Role::Read, vec![]).is_err());
        file.add("root", Role::Admin, vec![]).unwrap();
        assert!(ring.current().unwrap()[1].everywhere());
        assert!(file.revoke("alice").unwrap() && !file.revoke("alice").unwrap());
        assert_eq!(ring.current().unwrap().len(), 1);
        assert!(file.add("bad name", Role::Read, vec![]).is_err());
        assert!(file.add("bob", Role::Read, vec!["Team A".into()]).is_err());
        assert_eq!(format!("{:?}", ring.current().unwrap()[0]), "ApiKey(root, admin, *)");
    }
}
