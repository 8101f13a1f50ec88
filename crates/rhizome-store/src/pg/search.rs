//! Vector and BM25 search. What they read (the vector matrix of a kind, every chunk's
//! length) is cached per process and database, keyed by the database's data version
//! (moved by every write, from any process), so a query reads it once per version.
//!
//! Vectors: below [`hnsw_min`] vectors of a kind, exact search over the cached matrix (the
//! same code as the SQLite store: same scores, same ties); from there on an HNSW index
//! (`vector_cosine_ops`, built when a write takes a kind past the threshold) gives the
//! candidates, with `ef_search` well above k, and they are re-scored exactly here.
//! BM25: the same terms and the same scoring, summed in the same order, as crates/
//! rhizome-store/src/bm25.rs, from postings read in one round trip per query on a small
//! index, and on a large one from the rare terms' postings and probes of the frequent
//! terms' (`crate::bm25::top_k`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use postgres::{GenericClient, Statement, Transaction};
use rhizome_core::{dot, Scored, VectorKind};

use super::pool::Conn;
use super::vector::PgVector;
use super::{schema, Snapshot};
use crate::bm25::{query_terms, rank, read_all_max, top_k, DocLengths, PostingSource};
use crate::vectors::VectorMatrix;

type PgResult<T> = std::result::Result<T, postgres::Error>;

static HNSW_MIN: AtomicUsize = AtomicUsize::new(100_000);

/// Vectors of one kind from which searches go through an HNSW index instead of exact
/// search over the loaded matrix (which then costs more memory and load time than it saves).
pub fn hnsw_min() -> usize {
    HNSW_MIN.load(Ordering::Relaxed)
}

/// Change [`hnsw_min`] for this process (tests exercise the HNSW path on small data).
pub fn set_hnsw_min(n: usize) {
    HNSW_MIN.store(n.max(1), Ordering::Relaxed);
}

/// Every indexed chunk's length and id (by chunk rowid).
#[derive(Debug, Default)]
pub struct Lengths {
    pub docs: DocLengths,
    pub ids: HashMap<i64, String>,
}

#[derive(Default)]
struct Cached {
    version: u64,
    matrices: HashMap<VectorKind, Arc<VectorMatrix>>,
    hnsw: HashMap<VectorKind, bool>,
    lengths: Option<Arc<Lengths>>,
}

fn cache() -> &'static Mutex<HashMap<String, Cached>> {
    static C: OnceLock<Mutex<HashMap<String, Cached>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The cache entry of `url` at the database's current data version (`known`: the version
/// the reader's loan read at its start, which spares a round trip).
fn current<T>(
    c: &mut impl GenericClient,
    url: &str,
    known: Option<u64>,
    f: impl FnOnce(&mut Cached) -> T,
) -> PgResult<T> {
    let v = match known {
        Some(v) => v,
        None => schema::counter(c, "data_version")?,
    };
    let mut all = cache().lock().unwrap_or_else(|p| p.into_inner());
    let entry = all.entry(url.to_string()).or_default();
    if entry.version != v {
        *entry = Cached { version: v, ..Cached::default() };
    }
    Ok(f(entry))
}

fn store<T>(url: &str, version: u64, f: impl FnOnce(&mut Cached) -> T) {
    let mut all = cache().lock().unwrap_or_else(|p| p.into_inner());
    let entry = all.entry(url.to_string()).or_default();
    if entry.version == version {
        f(entry);
    }
}

/// After this process's own write moved the data version of `url` from `new - 1` to `new`:
/// carry the cached matrices over with the vectors that write upserted (the last of
/// duplicates wins), instead of reading them all again at the next search; everything
/// else cached is dropped. Nothing is carried when another write came between.
pub fn carry_over(url: &str, new: u64, written: &[(VectorKind, String, Vec<f32>)]) {
    let mut all = cache().lock().unwrap_or_else(|p| p.into_inner());
    let Some(entry) = all.get_mut(url) else { return };
    if entry.version + 1 != new {
        return;
    }
    let mut matrices = std::mem::take(&mut entry.matrices);
    // A matrix searched through HNSW is not read again for search: copying it on every
    // write would cost the whole matrix per batch.
    matrices.retain(|_, m| m.len() < hnsw_min());
    for (kind, m) in matrices.iter_mut() {
        let mut mine: std::collections::BTreeMap<&str, &[f32]> = std::collections::BTreeMap::new();
        for (k, id, v) in written {
            if k == kind {
                mine.insert(id, v);
            }
        }
        if !mine.is_empty() {
            *m = Arc::new(upsert(m, &mine));
        }
    }
    *entry = Cached { version: new, matrices, ..Cached::default() };
}

/// `m` with `rows` put in by id (ids stay sorted bytewise, as `ORDER BY id` reads them;
/// rows of another dimension than the first are left out, as the load does).
fn upsert(m: &VectorMatrix, rows: &std::collections::BTreeMap<&str, &[f32]>) -> VectorMatrix {
    let mut out = VectorMatrix { dim: m.dim, ..VectorMatrix::default() };
    let push = |out: &mut VectorMatrix, id: &str, v: &[f32]| {
        if out.dim == 0 {
            out.dim = v.len();
        }
        if v.len() == out.dim {
            out.ids.push(id.to_string());
            out.data.extend_from_slice(v);
        }
    };
    let mut new = rows.iter().peekable();
    for i in 0..m.len() {
        let id = m.ids[i].as_str();
        while let Some((nid, v)) = new.next_if(|(nid, _)| **nid < id) {
            push(&mut out, nid, v);
        }
        match new.next_if(|(nid, _)| **nid == id) {
            Some((nid, v)) => push(&mut out, nid, v),
            None => push(&mut out, id, m.row(i)),
        }
    }
    for (nid, v) in new {
        push(&mut out, nid, v);
    }
    out
}

/// The matrix of `kind`, ordered by id (loaded once per data version).
pub fn matrix(
    c: &mut impl GenericClient,
    url: &str,
    known: Option<u64>,
    kind: VectorKind,
) -> PgResult<Arc<VectorMatrix>> {
    let (version, found) = current(c, url, known, |e| (e.version, e.matrices.get(&kind).cloned()))?;
    if let Some(m) = found {
        return Ok(m);
    }
    let mut m = VectorMatrix::default();
    for r in c.query("SELECT id, vec FROM vectors WHERE kind = $1 ORDER BY id", &[&kind.as_str()])? {
        m.push(r.get(0), &r.try_get::<_, PgVector>(1)?.0);
    }
    let m = Arc::new(m);
    store(url, version, |e| {
        e.matrices.insert(kind, m.clone());
    });
    Ok(m)
}

fn hnsw_name(kind: VectorKind) -> String {
    format!("vectors_hnsw_{}", kind.as_str())
}

/// Whether searches of `kind` go through its HNSW index.
fn uses_hnsw(c: &mut impl GenericClient, url: &str, known: Option<u64>, kind: VectorKind) -> PgResult<bool> {
    let (version, found) = current(c, url, known, |e| (e.version, e.hnsw.get(&kind).copied()))?;
    if let Some(b) = found {
        return Ok(b);
    }
    let b: bool = c.query_one("SELECT to_regclass($1) IS NOT NULL", &[&hnsw_name(kind)])?.get(0);
    store(url, version, |e| {
        e.hnsw.insert(kind, b);
    });
    Ok(b)
}

/// Per database and kind: an upper bound of its vectors as this process last counted them
/// plus what it wrote since, or `usize::MAX` once its HNSW index exists. Counting after
/// every batch read up to [`hnsw_min`] rows per kind each time, a cost growing with the
/// index; with the bound a write counts only when the threshold may have been reached.
/// Writes of other processes are not in the bound: they may build the index a write later.
fn estimates() -> &'static Mutex<HashMap<(String, VectorKind), usize>> {
    static E: OnceLock<Mutex<HashMap<(String, VectorKind), usize>>> = OnceLock::new();
    E.get_or_init(|| Mutex::new(HashMap::new()))
}

/// After a write of `written` vectors per kind: build the HNSW index of each kind that
/// reached [`hnsw_min`] vectors and has none yet (inside the writer's transaction).
pub fn maybe_build_hnsw(c: &mut impl GenericClient, url: &str, written: &[(VectorKind, usize)]) -> PgResult<()> {
    for &(kind, n_new) in written {
        // Sentence vectors are read by id, never searched: no index to build or keep.
        if kind == VectorKind::Sentence {
            continue;
        }
        let key = (url.to_string(), kind);
        let bound = estimates().lock().unwrap_or_else(|p| p.into_inner()).get(&key).copied();
        match bound {
            Some(usize::MAX) => continue,
            Some(b) if b.saturating_add(n_new) < hnsw_min() => {
                estimates().lock().unwrap_or_else(|p| p.into_inner()).insert(key, b + n_new);
                continue;
            }
            _ => {}
        }
        let name = hnsw_name(kind);
        let there: bool = c.query_one("SELECT to_regclass($1) IS NOT NULL", &[&name])?.get(0);
        if there {
            estimates().lock().unwrap_or_else(|p| p.into_inner()).insert(key, usize::MAX);
            continue;
        }
        // Counting stops at the threshold: a write costs at most that, never the whole table.
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM (SELECT 1 FROM vectors WHERE kind = $1 LIMIT $2) x",
                &[&kind.as_str(), &(hnsw_min() as i64)],
            )?
            .get(0);
        let dim = schema::get_meta(c, "embedding_dim")?.and_then(|d| d.parse::<u32>().ok()).unwrap_or(0);
        if (n as usize) < hnsw_min() || dim == 0 {
            estimates().lock().unwrap_or_else(|p| p.into_inner()).insert(key, n.max(0) as usize);
            continue;
        }
        create_hnsw(c, url, kind, dim)?;
    }
    Ok(())
}

/// Build the HNSW index of `kind` over vectors of `dim` dimensions (if missing); this
/// process then counts no more towards it.
fn create_hnsw(c: &mut impl GenericClient, url: &str, kind: VectorKind, dim: u32) -> PgResult<()> {
    // Kind and dimension are ours (an enum and a number), never user text.
    c.batch_execute(&format!(
        "CREATE INDEX IF NOT EXISTS {} ON vectors USING hnsw ((vec::vector({dim})) vector_cosine_ops) \
         WHERE kind = '{}' AND vector_dims(vec) = {dim}",
        hnsw_name(kind),
        kind.as_str()
    ))?;
    estimates().lock().unwrap_or_else(|p| p.into_inner()).insert((url.to_string(), kind), usize::MAX);
    Ok(())
}

/// The kinds searched through an HNSW index once they are large.
const SEARCHED: [VectorKind; 4] = [VectorKind::Chunk, VectorKind::Entity, VectorKind::Fact, VectorKind::Report];

/// A bulk load begins: the HNSW indexes are dropped (searches are exact until
/// [`build_hnsw`]), and this process stops counting towards them.
pub fn drop_hnsw(c: &mut impl GenericClient, url: &str) -> PgResult<()> {
    let mut est = estimates().lock().unwrap_or_else(|p| p.into_inner());
    for kind in SEARCHED {
        // The name is ours (an enum), never user text.
        c.batch_execute(&format!("DROP INDEX IF EXISTS {}", hnsw_name(kind)))?;
        est.remove(&(url.to_string(), kind));
    }
    Ok(())
}

/// A bulk load ends: the HNSW index of every kind with [`hnsw_min`] vectors is built, in
/// one pass over its vectors, with the memory that holds its whole graph (pgvector builds
/// far slower once the graph outgrows `maintenance_work_mem`); then the planner's
/// statistics are taken again, for tables that grew many times over.
pub fn build_hnsw(c: &mut impl GenericClient, url: &str) -> PgResult<()> {
    let dim = schema::get_meta(c, "embedding_dim")?.and_then(|d| d.parse::<u32>().ok()).unwrap_or(0);
    for kind in SEARCHED {
        estimates().lock().unwrap_or_else(|p| p.into_inner()).remove(&(url.to_string(), kind));
        let n: i64 = c.query_one("SELECT count(*) FROM vectors WHERE kind = $1", &[&kind.as_str()])?.get(0);
        if (n as usize) < hnsw_min() || dim == 0 {
            continue;
        }
        // A vector and its neighbour lists (m = 16: 32 links on layer 0) with headroom.
        let need = n * (i64::from(dim) * 4 + 400) * 5 / 4;
        c.execute(
            "SELECT set_config('maintenance_work_mem', (greatest($1::bigint / 1024,
                 pg_size_bytes(current_setting('maintenance_work_mem')) / 1024))::text || 'kB', true)",
            &[&need.min(8 << 30)],
        )?;
        create_hnsw(c, url, kind, dim)?;
    }
    c.batch_execute("ANALYZE")?;
    Ok(())
}

/// The `k` vectors of `kind` nearest `query` (cosine; vectors are L2-normalised), best
/// first, ties by id.
/// `many`: the batched search (blocked matrix products, as the SQLite store's).
/// `snap`: what the reader's loan read at its start (data version, dimension).
pub fn vector_search(
    c: &mut postgres::Client,
    url: &str,
    snap: Option<&Snapshot>,
    kind: VectorKind,
    queries: &[Vec<f32>],
    k: usize,
    many: bool,
) -> PgResult<Vec<Vec<Scored>>> {
    let known = snap.map(|s| s.data);
    if !uses_hnsw(c, url, known, kind)? {
        let m = matrix(c, url, known, kind)?;
        if !many {
            return Ok(vec![m.search(&queries[0], k)]);
        }
        return Ok(m.search_many(queries, k));
    }
    let dim = match snap {
        Some(s) => s.dim.unwrap_or(0),
        None => schema::get_meta(c, "embedding_dim")?.and_then(|d| d.parse::<usize>().ok()).unwrap_or(0),
    };
    let want = (2 * k + 10) as i64;
    let ef = want.max(400);
    let mut out = Vec::with_capacity(queries.len());
    let mut tx = c.transaction()?;
    tx.batch_execute(&format!("SET LOCAL hnsw.ef_search = {}", ef.min(1000)))?;
    // The kind and dimension are written out (an enum and a number, never user text) so
    // that every plan, generic ones included, matches the partial index's predicate (which
    // leaves out vectors of another dimension, as the exact search does).
    let sql = format!(
        "SELECT id, vec FROM vectors WHERE kind = '{}' AND vector_dims(vec) = {dim} \
         ORDER BY vec::vector({dim}) <=> $1::real[]::vector({dim}) LIMIT $2",
        kind.as_str()
    );
    let stmt = tx.prepare(&sql)?;
    for q in queries {
        if q.len() != dim || dim == 0 {
            out.push(Vec::new());
            continue;
        }
        let mut hits: Vec<Scored> = tx
            .query(&stmt, &[q, &want])?
            .iter()
            .map(|r| Ok(Scored { id: r.get(0), score: dot(&r.try_get::<_, PgVector>(1)?.0, q) }))
            .collect::<PgResult<_>>()?;
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        hits.truncate(k);
        out.push(hits);
    }
    tx.commit()?;
    Ok(out)
}

/// Every indexed chunk's length and id (by rowid), read once per data version, so that a
/// search is one round trip (the postings of its terms).
fn lengths(c: &mut impl GenericClient, url: &str, known: Option<u64>) -> PgResult<Arc<Lengths>> {
    let (version, found) = current(c, url, known, |e| (e.version, e.lengths.clone()))?;
    if let Some(l) = found {
        return Ok(l);
    }
    let mut len: HashMap<i64, u32> = HashMap::new();
    let mut ids: HashMap<i64, String> = HashMap::new();
    for r in
        c.query("SELECT d.chunk_rowid, d.len, c.id FROM bm25_docs d JOIN chunks c ON c.rowid = d.chunk_rowid", &[])?
    {
        let rowid: i64 = r.get(0);
        len.insert(rowid, r.get::<_, i32>(1).max(0) as u32);
        ids.insert(rowid, r.get(2));
    }
    let l = Arc::new(Lengths { docs: DocLengths::from_map(len), ids });
    store(url, version, |e| e.lengths = Some(l.clone()));
    Ok(l)
}

/// BM25 over chunk text (+ title): the best `k` chunk ids. `known`: the data version the
/// reader's loan read at its start. Below [`read_all_max`] chunks, every posting of the
/// query's terms is read in one round trip; from there on [`top_k`] reads the rare terms
/// whole and probes the frequent ones for the chunks that can still reach the top `k`,
/// in one read-only transaction (one snapshot: the counts in `bm25_terms` are the
/// postings').
pub fn bm25(c: &mut Conn, url: &str, known: Option<u64>, query: &str, k: usize) -> PgResult<Vec<Scored>> {
    let terms = query_terms(query);
    if terms.is_empty() || k == 0 {
        return Ok(Vec::new());
    }
    let lengths = lengths(&mut c.client, url, known)?;
    let hits = if (lengths.docs.len.len() as u64) < read_all_max() {
        let refs: Vec<&str> = terms.iter().map(String::as_str).collect();
        let stmt = c.prepared(ALL)?;
        let all = postings(&mut c.client, &stmt, &refs, None)?;
        rank(&lengths.docs, &all, k)
    } else {
        let (df, all, probe) = (c.prepared(DF)?, c.prepared(ALL)?, c.prepared(PROBE)?);
        let tx = super::snapshot(&mut c.client)?;
        let mut src = PgPostings { tx, df, all, probe };
        let hits = top_k(&mut src, &lengths.docs, &terms, k)?;
        src.tx.commit()?;
        hits
    };
    Ok(hits
        .into_iter()
        .filter_map(|(r, score)| lengths.ids.get(&r).map(|id| Scored { id: id.clone(), score }))
        .collect())
}

const DF: &str = "SELECT term, df FROM bm25_terms WHERE term = ANY($1)";
const ALL: &str = "SELECT term, chunk_rowid, tf FROM bm25_postings WHERE term = ANY($1)";
const PROBE: &str = "SELECT term, chunk_rowid, tf FROM bm25_postings WHERE term = ANY($1) AND chunk_rowid = ANY($2)";

/// The postings of `terms` read by `stmt` (term, chunk rowid, tf; `rows` restricts them to
/// those chunks), by term in the order of `terms`.
fn postings(
    c: &mut impl GenericClient,
    stmt: &Statement,
    terms: &[&str],
    rows: Option<&[i64]>,
) -> PgResult<Vec<Vec<(i64, u32)>>> {
    let found = match rows {
        Some(rows) => c.query(stmt, &[&terms, &rows])?,
        None => c.query(stmt, &[&terms])?,
    };
    let mut by: HashMap<String, Vec<(i64, u32)>> = HashMap::new();
    for r in found {
        by.entry(r.get(0)).or_default().push((r.get(1), r.get::<_, i32>(2).max(0) as u32));
    }
    Ok(terms.iter().map(|t| by.remove(*t).unwrap_or_default()).collect())
}

/// The postings as [`top_k`] reads them, in one snapshot.
struct PgPostings<'a> {
    tx: Transaction<'a>,
    df: Statement,
    all: Statement,
    probe: Statement,
}

impl PostingSource for PgPostings<'_> {
    type Error = postgres::Error;

    fn df(&mut self, terms: &[&str]) -> PgResult<Vec<u64>> {
        let by: HashMap<String, i64> =
            self.tx.query(&self.df, &[&terms])?.iter().map(|r| (r.get(0), r.get(1))).collect();
        Ok(terms.iter().map(|t| by.get(*t).map_or(0, |&n| n.max(0) as u64)).collect())
    }

    fn postings(&mut self, terms: &[&str]) -> PgResult<Vec<Vec<(i64, u32)>>> {
        postings(&mut self.tx, &self.all, terms, None)
    }

    fn probe(&mut self, terms: &[&str], rows: &[i64]) -> PgResult<Vec<Vec<(i64, u32)>>> {
        postings(&mut self.tx, &self.probe, terms, Some(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsert_keeps_ids_sorted_and_replaces() {
        let m = VectorMatrix { ids: vec!["b".into(), "d".into()], data: vec![1.0, 2.0], dim: 1 };
        let rows: std::collections::BTreeMap<&str, &[f32]> =
            [("a", &[0.5f32][..]), ("d", &[9.0][..]), ("e", &[3.0][..]), ("f", &[1.0, 1.0][..])].into_iter().collect();
        let out = upsert(&m, &rows);
        assert_eq!(out.ids, ["a", "b", "d", "e"]);
        assert_eq!(out.data, [0.5, 1.0, 9.0, 3.0]);
    }
}
