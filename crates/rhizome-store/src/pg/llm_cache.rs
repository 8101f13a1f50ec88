//! The LLM response cache in the index's database (table `llm_cache`), on a connection of
//! its own guarded by a mutex so that concurrent LLM calls can share it.

use std::sync::Mutex;

use postgres::Client;
use rhizome_core::llm::{ChatResponse, LlmCache};
use rhizome_core::{Error, Result};

use super::{pg_err, pool, schema, PgUrl};

pub struct PgLlmCache {
    url: PgUrl,
    client: Mutex<Client>,
}

impl PgLlmCache {
    /// Open the cache of the index at `url` (creating the index's tables if needed).
    pub fn open(url: &str) -> Result<Self> {
        let url = PgUrl::new(url);
        let mut client = pool::connect(&url)?;
        schema::ensure(&url, &mut client, true)?;
        Ok(PgLlmCache { url, client: Mutex::new(client) })
    }

    fn client(&self) -> Result<std::sync::MutexGuard<'_, Client>> {
        self.client.lock().map_err(|_| Error::Store("cache lock poisoned".into()))
    }
}

impl LlmCache for PgLlmCache {
    fn get(&self, key: &str) -> Result<Option<ChatResponse>> {
        let row = self
            .client()?
            .query_opt("SELECT response FROM llm_cache WHERE key = $1", &[&key])
            .map_err(|e| pg_err(&self.url, e))?;
        Ok(row.and_then(|r| serde_json::from_str(r.get(0)).ok()))
    }

    fn put(&self, key: &str, provider: &str, response: &ChatResponse) -> Result<()> {
        let body = serde_json::to_string(response).map_err(|e| Error::Store(e.to_string()))?;
        self.client()?
            .execute(
                "INSERT INTO llm_cache(key, provider, response) VALUES ($1, $2, $3)
                 ON CONFLICT (key) DO UPDATE SET provider = excluded.provider, response = excluded.response",
                &[&key, &provider, &body],
            )
            .map_err(|e| pg_err(&self.url, e))?;
        Ok(())
    }
}
