//! The FalkorDB backend (`falkordb://host:port/graph`): Cypher over the Redis protocol.
//!
//! # What lives where
//! The graph `graph` holds the FalkorDB SDK's schema, so FalkorDB's own browser shows it:
//! - `(:Document {id, source, title, text, language, indexed_at, pages, page_unit, digest})`
//! - `(:Chunk {id, doc_id, ordinal, text, tokens, seq, embedding})-[:PART_OF]->(:Document)`,
//!   `(:Chunk)-[:NEXT_CHUNK]->(:Chunk)`, `(:Chunk)-[:SIMILAR_TO {score, doc_id}]->(:Chunk)`
//! - entities `(:__Entity__:TYPE {id, name, entity_type, description, importance, embedding})`
//!   (TYPE = the majority type, sanitised to `[A-Za-z0-9_]`),
//!   `(:__Entity__)-[:MENTIONED_IN {count}]->(:Chunk)`, `(:__Entity__)-[:SYNONYM {score}]->(:__Entity__)`
//!   and one edge per relation, typed by its relation type (sanitised):
//!   `(:__Entity__)-[:WORKS_FOR {id, rel_type, description, weight}]->(:__Entity__)`
//! - `(:Fact {id, subject, predicate, object, subject_id, object_id, chunks, embedding})`
//!
//! with range indexes on every `id`, vector indexes (cosine) on the three embeddings and a
//! full-text index on `Chunk.text` (for FalkorDB's own tools: Rhizome ranks BM25 with its
//! own postings, below, because RediSearch's scoring and tokenisation differ from
//! `rhizome_core::text::bm25_terms` and rankings must equal the SQLite backend's). The aggregates on nodes and edges (an entity's name,
//! type, description; a relation's weight; a mention's count) are recomputed from their
//! support whenever it changes, with the same rules as the SQLite backend.
//!
//! Everything without a natural graph form is kept in plain keys of the same server under
//! `rhizome:{graph}:` ([`keys`]): `meta` (a hash: schema version, graph version,
//! embedding model, synonymy flag, communities and reports versions, free metadata),
//! the support records (`es:ENTITY`, `rs:RELATION`, `fs:FACT`: hashes of JSON rows keyed
//! by a sequence number; `dm:DOC`, `dr:DOC`, `df:DOC`, `dc:DOC`: the same rows per
//! document, for deletion and `document_batch`), exact vectors (`vec:KIND`, little-endian
//! f32 per id, read for exact re-ranking and synonymy), the relation index (`rel`: id ->
//! the aggregate relation; `ers:ENTITY` / `ert:ENTITY`: the relations an entity is the
//! source / target of, by creation; FalkorDB keeps one matrix per edge type, and an
//! untyped traversal over the thousands of relation types of an OpenIE import costs
//! milliseconds per entity), BM25 postings (`bm25:t:TERM`,
//! `bm25:len`, `bm25:id`, `bm25:terms:SEQ`), `partial`, `failures`, `covariates`,
//! `communities`, `reports`, `summaries`, `llm` (the LLM cache), `pending`, `lock`, and
//! the other names of documents (`alias`: name -> document, `da:DOC`: its names in order).
//!
//! # Support rule
//! A support record is a JSON row (the `MentionRecord` / `RelationRecord` / `FactRecord`
//! as written) stored twice: under its document (to delete it with the document) and under
//! its aggregate (to recompute the aggregate). Deleting a document removes its rows and
//! recomputes every aggregate they touched; an aggregate left without rows is deleted with
//! its edges, vector and postings. So "index A and B, delete B" equals "index A".
//!
//! # Crash safety without transactions
//! FalkorDB has no multi-statement transaction. A batch first adds its documents to the
//! `pending` set, then writes everything, and its last step removes them from `pending`
//! and moves the graph version. A writer that finds documents in `pending` when it opens
//! the store (its predecessor died mid-batch) deletes everything they support, as
//! `delete_document` does, so a crash leaves the batch or nothing; readers treat pending
//! documents as absent (`has_document` false), so a rerun writes them again. A document
//! written in parts is pending while each part is written; a crash in a part removes the
//! whole document, and the rerun writes it again from its first chunk. Batches without
//! documents (failure records, vectors) are idempotent. Each `UNWIND` of up to
//! [`BATCH_ROWS`] rows is one query, which FalkorDB applies entirely or not at all; when
//! one fails its rows are written one by one, the batch goes on, and `write_batch` then
//! fails naming the items that could not be written (the rest is written and complete).
//!
//! # Reads
//! Reads are batched (`UNWIND $ids`). Each connection caches the exact vectors (for
//! re-ranking, batched searches and synonymy), BM25 document lengths and claims while
//! the graph, reports and communities versions (kept in `meta` on the server, so every
//! process sees another's writes) hold. A vector search takes candidates from the HNSW
//! index (`db.idx.vector.queryNodes`, 4 k and at least k + 64) and re-ranks them exactly
//! by cosine with the stored vectors, ties by id, as the SQLite backend ranks; sets
//! smaller than that are searched exactly. BM25 uses the SQLite backend's term rules and
//! scoring ([`crate::bm25::rank`]), with chunk sequence numbers in place of row ids, so
//! rankings are equal.
//!
//! # One writer at a time
//! [`lock`]: a `SET NX` key with the holder's pid, host and command, renewed while held,
//! expiring 30 s after a holder dies.

mod aliases;
pub(crate) mod conn;
mod delete;
mod documents;
mod extra;
mod graph;
mod keys;
mod lit;
pub mod lock;
mod read;
mod refresh;
pub(crate) mod reply;
mod rows;
mod schema;
mod search;
mod support;
mod tags;
mod write;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use rhizome_core::{Error, Result, VectorKind};

pub use conn::Conn;
pub use extra::FalkorLlmCache;
pub use lit::Lit;
pub use lock::FalkorLock;
pub use reply::{Cell, Value};

use crate::lock::{Holder, LockWait};
use crate::vectors::VectorMatrix;

/// Rows per `UNWIND $rows` write.
pub const BATCH_ROWS: usize = 500;

/// Where a FalkorDB store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FalkorUrl {
    pub host: String,
    pub port: u16,
    pub graph: String,
    /// `user:password@` of the URL (sent with AUTH; never shown in messages).
    pub user: Option<String>,
    pub password: Option<String>,
}

impl FalkorUrl {
    /// `falkordb://[user:password@]host[:port]/graph` (port 6379 by default; graph
    /// `rhizome` by default).
    pub fn parse(url: &str) -> Result<FalkorUrl> {
        let rest = url
            .strip_prefix("falkordb://")
            .or_else(|| url.strip_prefix("redis://"))
            .ok_or_else(|| Error::Config(format!("store.url {url:?}: not a falkordb:// URL")))?;
        let (hostport, graph) = rest.split_once('/').unwrap_or((rest, ""));
        let graph = graph.trim_end_matches('/');
        let graph = if graph.is_empty() { "rhizome" } else { graph };
        if graph.contains(['/', ' ', '{', '}']) || graph.chars().any(char::is_control) {
            return Err(Error::Config(format!(
                "store.url {url:?}: graph name {graph:?} has a character Rhizome does not use in graph \
                 names ('/', space, braces); e.g. falkordb://127.0.0.1:6379/rhizome"
            )));
        }
        let (auth, hostport) = hostport.rsplit_once('@').map_or((None, hostport), |(a, h)| (Some(a), h));
        let (user, password) = match auth.map(|a| a.split_once(':').unwrap_or(("", a))) {
            Some((u, p)) => ((!u.is_empty()).then(|| u.to_string()), (!p.is_empty()).then(|| p.to_string())),
            None => (None, None),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || p.is_empty() => {
                let port = p.parse::<u16>().map_err(|_| {
                    Error::Config(format!("store.url {url:?}: bad port {p:?}; e.g. falkordb://127.0.0.1:6379/{graph}"))
                })?;
                (h.to_string(), port)
            }
            _ => (hostport.to_string(), 6379),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
        let host = if host.is_empty() { "127.0.0.1".to_string() } else { host };
        Ok(FalkorUrl { host, port, graph: graph.to_string(), user, password })
    }

    /// The URL for messages (without the password).
    pub fn display(&self) -> String {
        format!("falkordb://{}:{}/{}", self.host, self.port, self.graph)
    }

    /// A connection to the server, authenticated when the URL has a password.
    pub fn connect(&self) -> Result<Conn> {
        let mut c = Conn::connect(&self.host, self.port, &self.display())?;
        if let Some(p) = &self.password {
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            if let Some(u) = &self.user {
                args.push(u.as_bytes());
            }
            args.push(p.as_bytes());
            c.ok(&args).map_err(|e| {
                Error::Store(format!(
                    "{}: the server refused the password of the URL ({e}); fix user:password in --store",
                    self.display()
                ))
            })?;
        }
        Ok(c)
    }
}

/// Caches of one connection, valid while the versions they were read at hold.
#[derive(Default)]
struct Cache {
    stamp: Option<[u64; 5]>,
    matrices: HashMap<VectorKind, Arc<VectorMatrix>>,
    bm25: Option<Arc<crate::bm25::DocLengths>>,
    covariates: Option<Arc<Vec<rhizome_core::CovariateRecord>>>,
    communities: Option<Arc<Vec<rhizome_core::Community>>>,
}

/// The FalkorDB store. Implements [`rhizome_core::StoreRead`] and
/// [`rhizome_core::StoreWrite`].
pub struct FalkorStore {
    conn: RefCell<Conn>,
    url: FalkorUrl,
    cache: RefCell<Cache>,
    lock: Option<FalkorLock>,
    /// Items that failed in an `UNWIND` batch (the rest was written), reported when the
    /// operation ends.
    failed: RefCell<Vec<String>>,
}

impl FalkorStore {
    fn connect(url: &FalkorUrl) -> Result<FalkorStore> {
        let conn = url.connect()?;
        Ok(FalkorStore {
            conn: RefCell::new(conn),
            url: url.clone(),
            cache: RefCell::default(),
            lock: None,
            failed: RefCell::default(),
        })
    }

    /// Open for reading: the store must exist (have Rhizome's schema) unless `create`.
    pub fn open(url: &FalkorUrl, create: bool) -> Result<FalkorStore> {
        let s = Self::connect(url)?;
        s.check_module()?;
        if !s.has_schema()? {
            if !create {
                return Err(Error::Index {
                    path: url.display().into(),
                    msg: "no Rhizome index in this graph; create one with `rhizome --store URL index PATH` or an \
                          import, or point --store / RHIZOME_STORE_URL at an existing one"
                        .into(),
                });
            }
            s.create_schema()?;
        }
        s.check_schema_version()?;
        s.backfill_digests()?;
        s.backfill_tags()?;
        Ok(s)
    }

    /// Open for writing, holding the writer lock; cleans up after a writer that died
    /// mid-batch (see the module comment).
    pub fn open_writer(
        url: &FalkorUrl,
        create: bool,
        command: &str,
        wait: LockWait,
        on_wait: &mut dyn FnMut(&Holder),
    ) -> Result<FalkorStore> {
        let probe = Self::connect(url)?;
        probe.check_module()?;
        if !create && !probe.has_schema()? {
            return Self::open(url, false);
        }
        drop(probe);
        let lock = FalkorLock::acquire(url, command, wait, on_wait)?;
        let mut s = Self::open(url, create)?;
        s.lock = Some(lock);
        s.clean_pending()?;
        Ok(s)
    }

    /// Whether `url` holds a Rhizome store (false when the server cannot be reached).
    pub fn exists(url: &FalkorUrl) -> bool {
        Self::connect(url).and_then(|s| s.has_schema()).unwrap_or(false)
    }

    pub fn url(&self) -> &FalkorUrl {
        &self.url
    }

    /// A write query.
    pub(crate) fn q(&self, q: &str) -> Result<Vec<Vec<Cell>>> {
        let g = self.url.graph.clone();
        self.conn.borrow_mut().query(&g, q, false)
    }

    /// A read-only query.
    pub(crate) fn ro(&self, q: &str) -> Result<Vec<Vec<Cell>>> {
        let g = self.url.graph.clone();
        self.conn.borrow_mut().query(&g, q, true)
    }

    /// A read query with parameters.
    pub(crate) fn rop(&self, params: &[(&str, Lit)], q: &str) -> Result<Vec<Vec<Cell>>> {
        self.ro(&lit::with_params(params, q))
    }

    /// A write query with parameters.
    pub(crate) fn qp(&self, params: &[(&str, Lit)], q: &str) -> Result<Vec<Vec<Cell>>> {
        self.q(&lit::with_params(params, q))
    }

    /// One Redis command; an error reply is an error.
    pub(crate) fn redis(&self, args: &[&[u8]]) -> Result<Value> {
        self.conn.borrow_mut().ok(args)
    }

    /// Many Redis commands in one round trip; any error reply is an error.
    pub(crate) fn pipe(&self, cmds: Vec<Vec<Vec<u8>>>) -> Result<Vec<Value>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = self.conn.borrow_mut();
        let mut out = Vec::with_capacity(cmds.len());
        for part in cmds.chunks(2000) {
            for v in c.pipeline(part)? {
                if let Value::Error(e) = &v {
                    return Err(c.server_error(e));
                }
                out.push(v);
            }
        }
        Ok(out)
    }

    /// `UNWIND $rows AS r ...` in batches of [`BATCH_ROWS`]. When a batch fails, its rows
    /// are written one at a time: the others are written, and the failing items
    /// (`name(row index)`) are kept for [`FalkorStore::take_failed`] to report when the
    /// whole operation has ended. A lost connection is an error at once.
    pub(crate) fn unwind(&self, rows: &[Lit], q: &str, name: &dyn Fn(usize) -> String) -> Result<()> {
        for (b, part) in rows.chunks(BATCH_ROWS).enumerate() {
            if self.qp(&[("rows", Lit::List(part.to_vec()))], q).is_ok() {
                continue;
            }
            for (i, row) in part.iter().enumerate() {
                if let Err(e) = self.qp(&[("rows", Lit::List(vec![row.clone()]))], q) {
                    if e.to_string().contains("connection lost") {
                        return Err(e);
                    }
                    let e = e.to_string();
                    let e = e.split(" (query:").next().unwrap_or(&e).to_string();
                    self.failed.borrow_mut().push(format!("{} ({e})", name(b * BATCH_ROWS + i)));
                }
            }
        }
        Ok(())
    }

    /// Several `UNWIND $rows` writes (query, rows, what a row is called in messages) sent
    /// in one pipeline (e.g. one query per relation type: edge types cannot be
    /// parameters), each in batches of [`BATCH_ROWS`]; a failing batch falls back to
    /// [`FalkorStore::unwind`]'s row-by-row writes.
    pub(crate) fn unwind_many(&self, jobs: &[(String, Vec<Lit>, &str)]) -> Result<()> {
        let mut cmds = Vec::new();
        let mut parts = Vec::new();
        for (q, rows, what) in jobs {
            for part in rows.chunks(BATCH_ROWS) {
                let text = lit::with_params(&[("rows", Lit::List(part.to_vec()))], q);
                cmds.push(vec![
                    b"GRAPH.QUERY".to_vec(),
                    self.url.graph.clone().into_bytes(),
                    text.into_bytes(),
                    b"--compact".to_vec(),
                ]);
                parts.push((q.as_str(), part, *what));
            }
        }
        let mut failed = Vec::new();
        {
            let mut c = self.conn.borrow_mut();
            for (chunk, ps) in cmds.chunks(200).zip(parts.chunks(200)) {
                for (reply, p) in c.pipeline(chunk)?.into_iter().zip(ps) {
                    if c.rows(reply, p.0).is_err() {
                        failed.push(*p);
                    }
                }
            }
        }
        for (q, part, what) in failed {
            self.unwind(part, q, &|i| format!("{what} {:?}", part.get(i).map(write::lit_id).unwrap_or_default()))?;
        }
        Ok(())
    }

    /// The items that failed since the last call, as one error naming them.
    pub(crate) fn take_failed(&self) -> Result<()> {
        let failed = std::mem::take(&mut *self.failed.borrow_mut());
        if failed.is_empty() {
            return Ok(());
        }
        let more = if failed.len() > 1 { format!(" and {} more", failed.len() - 1) } else { String::new() };
        Err(Error::Store(format!(
            "{}: writing {}{more} failed; everything else was written",
            self.url.display(),
            failed[0]
        )))
    }

    /// A Cypher query (for tools and tests): the rows in compact form.
    pub fn cypher(&self, q: &str) -> Result<Vec<Vec<Cell>>> {
        self.q(q)
    }

    /// Drop the caches when the versions moved (another process wrote).
    fn fresh_cache(&self) -> Result<std::cell::RefMut<'_, Cache>> {
        let stamp = self.stamp()?;
        let mut c = self.cache.borrow_mut();
        if c.stamp != Some(stamp) {
            *c = Cache { stamp: Some(stamp), ..Cache::default() };
        }
        Ok(c)
    }

    fn invalidate(&self) {
        *self.cache.borrow_mut() = Cache::default();
    }
}

/// The sanitised label or edge type for a type name: `[A-Za-z0-9_]`, not starting with a
/// digit, never empty.
pub fn sanitise(name: &str, fallback: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.trim_matches('_').is_empty() {
        return fallback.to_string();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if s == "__Entity__" || matches!(s.as_str(), "Document" | "Chunk" | "Fact") {
        s.push('_');
    }
    s
}

/// Edge type of a relation (never one of the schema's own edge types).
pub fn edge_type(rel_type: &str) -> String {
    let s = sanitise(rel_type, "RELATED");
    match s.as_str() {
        "PART_OF" | "NEXT_CHUNK" | "MENTIONED_IN" | "SYNONYM" | "SIMILAR_TO" => format!("{s}_"),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_names() {
        let u = FalkorUrl::parse("falkordb://127.0.0.1:6390/g").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.graph.as_str()), ("127.0.0.1", 6390, "g"));
        assert_eq!(FalkorUrl::parse("falkordb://db").unwrap().port, 6379);
        assert!(FalkorUrl::parse("falkordb://h:x/g").is_err());
        let a = FalkorUrl::parse("falkordb://u:secret@db:7000/g").unwrap();
        assert_eq!((a.user.as_deref(), a.password.as_deref(), a.port), (Some("u"), Some("secret"), 7000));
        assert!(!a.display().contains("secret"));
        assert_eq!(sanitise("works for", "R"), "works_for");
        assert_eq!(sanitise("", "ENTITY"), "ENTITY");
        assert_eq!(sanitise("3d", "E"), "_3d");
        assert_eq!(edge_type("SYNONYM"), "SYNONYM_");
    }
}
