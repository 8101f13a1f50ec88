//! API keys of `rhizome serve` kept in the database, for replicas: the table `serve_keys`
//! of the main index's schema (the schema of the store URL, outside every workspace's),
//! holding each key's name, SHA-256 (never the key), role and workspaces, and a version
//! counter, `serve_key_version`, raised by every change in the same transaction, so that
//! a server reads the keys again only when the counter moved.

use rhizome_core::Result;

use super::{pool, PgUrl};
use crate::keys::{KeyRow, KeyTable};

const TABLES: &str = "CREATE TABLE IF NOT EXISTS serve_keys(name TEXT COLLATE \"C\" PRIMARY KEY,
    sha256 TEXT NOT NULL, role TEXT NOT NULL, workspaces TEXT NOT NULL, created BIGINT NOT NULL);
    CREATE TABLE IF NOT EXISTS serve_key_version(id INT PRIMARY KEY, version BIGINT NOT NULL);
    INSERT INTO serve_key_version VALUES (1, 0) ON CONFLICT DO NOTHING";

pub struct PgKeys {
    url: PgUrl,
}

impl PgKeys {
    /// The keys of the store at `url` (the tables made when missing).
    pub fn open(url: &str) -> Result<PgKeys> {
        let keys = PgKeys { url: PgUrl::new(url) };
        pool::ensure(&keys.url, "serve_key_version", TABLES)?;
        Ok(keys)
    }

    fn run<T>(&self, f: impl FnOnce(&mut postgres::Client) -> std::result::Result<T, postgres::Error>) -> Result<T> {
        pool::run(&self.url, f)
    }
}

impl KeyTable for PgKeys {
    /// The store, as shown (no password).
    fn display(&self) -> String {
        self.url.display()
    }

    /// The version counter: it changes whenever a key is added or removed.
    fn version(&self) -> Result<i64> {
        self.run(|c| Ok(c.query_one("SELECT version FROM serve_key_version WHERE id = 1", &[])?.get(0)))
    }

    /// Every key, with the version they were read at (one snapshot).
    fn rows(&self) -> Result<(i64, Vec<KeyRow>)> {
        self.run(|c| {
            let mut tx = c.build_transaction().isolation_level(postgres::IsolationLevel::RepeatableRead).start()?;
            let version: i64 = tx.query_one("SELECT version FROM serve_key_version WHERE id = 1", &[])?.get(0);
            let rows = tx
                .query("SELECT name, sha256, role, workspaces, created FROM serve_keys ORDER BY created, name", &[])?
                .into_iter()
                .map(|r| KeyRow {
                    name: r.get(0),
                    sha256: r.get(1),
                    role: r.get(2),
                    workspaces: r.get::<_, String>(3).split(',').map(str::to_string).collect(),
                    created: r.get::<_, i64>(4).max(0) as u64,
                })
                .collect();
            tx.commit()?;
            Ok((version, rows))
        })
    }

    /// Add `key`; false (nothing changed) when a key of that name exists.
    fn add(&self, key: &KeyRow) -> Result<bool> {
        self.run(|c| {
            let mut tx = c.transaction()?;
            let n = tx.execute(
                "INSERT INTO serve_keys(name, sha256, role, workspaces, created) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (name) DO NOTHING",
                &[&key.name, &key.sha256, &key.role, &key.workspaces.join(","), &(key.created as i64)],
            )?;
            tx.execute("UPDATE serve_key_version SET version = version + 1 WHERE id = 1", &[])?;
            tx.commit()?;
            Ok(n == 1)
        })
    }

    /// Remove the key named `name`; false when there is none.
    fn revoke(&self, name: &str) -> Result<bool> {
        self.run(|c| {
            let mut tx = c.transaction()?;
            let n = tx.execute("DELETE FROM serve_keys WHERE name = $1", &[&name])?;
            tx.execute("UPDATE serve_key_version SET version = version + 1 WHERE id = 1", &[])?;
            tx.commit()?;
            Ok(n == 1)
        })
    }
}
