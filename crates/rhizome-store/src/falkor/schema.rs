//! The graph's indexes, the schema marker and the metadata hash.

use rhizome_core::{Error, Result};

use super::keys::META;
use super::{FalkorStore, Value};

pub const SCHEMA_VERSION: &str = "1";

/// Range indexes: (label, property).
const RANGE_INDEXES: &[(&str, &str)] =
    &[("Document", "id"), ("Chunk", "id"), ("Chunk", "doc_id"), ("__Entity__", "id"), ("Fact", "id")];

/// Vector indexes: (label, variable) on `embedding`.
pub const VECTOR_LABELS: &[&str] = &["Chunk", "__Entity__", "Fact"];

/// HNSW parameters: a wide search at query time (efRuntime) so that the candidates,
/// re-ranked exactly, hold the true nearest neighbours; a cheaper build (M, efConstruction),
/// since every vector written is an HNSW insert and that bounds the write time.
const HNSW: &str = "M: 16, efConstruction: 100, efRuntime: 400";

fn already(e: &Error) -> bool {
    let s = e.to_string();
    s.contains("already indexed") || s.contains("already exists") || s.contains("Attribute 'embedding' is already")
}

impl FalkorStore {
    /// Whether the server has the GRAPH module.
    pub(crate) fn check_module(&self) -> Result<()> {
        self.redis(&[b"GRAPH.LIST"]).map(|_| ())
    }

    pub(crate) fn has_schema(&self) -> Result<bool> {
        let v = self.redis(&[b"HEXISTS", &self.key(META), b"schema_version"])?;
        Ok(v.as_int() == Some(1))
    }

    pub(crate) fn check_schema_version(&self) -> Result<()> {
        match self.meta_get("schema_version")? {
            Some(v) if v == SCHEMA_VERSION => Ok(()),
            v => Err(Error::Index {
                path: self.url.display().into(),
                msg: format!(
                    "schema version {v:?}, this rhizome reads version {SCHEMA_VERSION}; use a rhizome of \
                     that version, or another graph name"
                ),
            }),
        }
    }

    /// Indexes, then the marker (last, so a half-made schema is made again).
    pub(crate) fn create_schema(&self) -> Result<()> {
        for (label, prop) in RANGE_INDEXES {
            match self.q(&format!("CREATE INDEX FOR (n:`{label}`) ON (n.{prop})")) {
                Err(e) if !already(&e) => return Err(e),
                _ => {}
            }
        }
        match self.q("CREATE FULLTEXT INDEX FOR (c:Chunk) ON (c.text)") {
            Err(e) if !already(&e) => return Err(e),
            _ => {}
        }
        self.redis(&[b"HSETNX", &self.key(META), b"schema_version", SCHEMA_VERSION.as_bytes()])?;
        Ok(())
    }

    /// Vector indexes of dimension `dim` (once the embedding model is known).
    pub(crate) fn create_vector_indexes(&self, dim: usize) -> Result<()> {
        for label in VECTOR_LABELS {
            let q = format!(
                "CREATE VECTOR INDEX FOR (n:`{label}`) ON (n.embedding) OPTIONS {{dimension: {dim}, \
                 similarityFunction: 'cosine', {HNSW}}}"
            );
            match self.q(&q) {
                Err(e) if !already(&e) => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    pub(crate) fn meta_get(&self, key: &str) -> Result<Option<String>> {
        Ok(self.redis(&[b"HGET", &self.key(META), key.as_bytes()])?.as_str())
    }

    pub(crate) fn meta_set(&self, key: &str, value: &str) -> Result<()> {
        self.redis(&[b"HSET", &self.key(META), key.as_bytes(), value.as_bytes()]).map(|_| ())
    }

    /// What the caches depend on, in one round trip: the graph, reports and communities
    /// versions, and counters moved by every replacement of the communities and every
    /// write of reports (which may happen at an unchanged graph version).
    pub(crate) fn stamp(&self) -> Result<[u64; 5]> {
        let v = self.redis(&[
            b"HMGET",
            &self.key(META),
            b"graph_version",
            b"reports_version",
            b"communities_version",
            b"communities_gen",
            b"reports_gen",
        ])?;
        let v = v.into_array();
        let n = |i: usize| v.get(i).and_then(Value::as_int).unwrap_or(0).max(0) as u64;
        Ok([n(0), n(1), n(2), n(3), n(4)])
    }

    pub(crate) fn bump_graph_version_cmd(&self) -> Vec<Vec<u8>> {
        vec![b"HINCRBY".to_vec(), self.key(META), b"graph_version".to_vec(), b"1".to_vec()]
    }

    /// Reserve `n` sequence numbers; returns the first.
    pub(crate) fn seqs(&self, n: usize) -> Result<i64> {
        if n == 0 {
            return Ok(0);
        }
        let v = self.redis(&[b"INCRBY", &self.key(super::keys::SEQ), n.to_string().as_bytes()])?;
        Ok(v.as_int().unwrap_or(0) - n as i64 + 1)
    }
}
