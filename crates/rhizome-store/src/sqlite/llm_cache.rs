//! The persistent LLM response cache, in the index database. It has its own connection
//! (SQLite's WAL lets it write while the store reads), guarded by a mutex so concurrent
//! LLM calls can share it.

use std::path::Path;
use std::sync::Mutex;

use rhizome_core::llm::{ChatResponse, LlmCache};
use rhizome_core::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};

use super::{schema, sql, DB_FILE};

pub struct SqliteLlmCache {
    conn: Mutex<Connection>,
}

impl SqliteLlmCache {
    /// Open the cache of the index in `dir` (creating the index if needed).
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let conn = Connection::open(dir.join(DB_FILE)).map_err(sql)?;
        schema::prepare(&conn)?;
        Ok(SqliteLlmCache { conn: Mutex::new(conn) })
    }

    /// Number of cached responses.
    pub fn len(&self) -> Result<u64> {
        let c = self.conn.lock().map_err(|_| Error::Store("cache lock poisoned".into()))?;
        c.query_row("SELECT COUNT(*) FROM llm_cache", [], |r| r.get::<_, i64>(0)).map(|n| n as u64).map_err(sql)
    }

    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

impl LlmCache for SqliteLlmCache {
    fn get(&self, key: &str) -> Result<Option<ChatResponse>> {
        let c = self.conn.lock().map_err(|_| Error::Store("cache lock poisoned".into()))?;
        let v: Option<String> = c
            .query_row("SELECT response FROM llm_cache WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(sql)?;
        Ok(v.and_then(|s| serde_json::from_str(&s).ok()))
    }

    fn put(&self, key: &str, provider: &str, response: &ChatResponse) -> Result<()> {
        let c = self.conn.lock().map_err(|_| Error::Store("cache lock poisoned".into()))?;
        let body = serde_json::to_string(response).map_err(|e| Error::Store(e.to_string()))?;
        c.execute(
            "INSERT OR REPLACE INTO llm_cache(key, provider, response) VALUES (?1, ?2, ?3)",
            params![key, provider, body],
        )
        .map_err(sql)?;
        Ok(())
    }
}
