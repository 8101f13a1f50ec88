//! The `meta` table: free-form key/value state of an index (schema and graph versions,
//! the embedding model, flags).

use rhizome_core::Result;
use rusqlite::{Connection, OptionalExtension};

use super::sql;

pub fn get_meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional().map_err(sql)
}

pub fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )
    .map(|_| ())
    .map_err(sql)
}

/// Count one more change of the graph (see `StoreRead::graph_version`).
pub fn bump_graph_version(conn: &Connection) -> Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('graph_version', '1')
         ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
        [],
    )
    .map(|_| ())
    .map_err(sql)
}
