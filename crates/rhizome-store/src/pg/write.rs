//! [`StoreWrite`] for [`PgStore`]: each batch is one transaction; rows go in with binary
//! COPY (into the tables, or into staging tables followed by one set-based upsert), and
//! the aggregates of the touched ids are refreshed set-based ([`refresh`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::AtomicBool;

use postgres::types::Type;
use postgres::GenericClient;
use rhizome_core::{
    DeleteReport, EmbedNames, Error, MentionRecord, Relation, RelationRecord, Result, StoreRead, StoreWrite,
    VectorKind, WriteBatch,
};

use super::refresh::{self, copy_in, PgResult, STAGING};
use super::{communities, schema, search, PgStore};
use crate::aggregate::Rekeys;
use crate::bm25::{chunk_text, term_frequencies};

const T: Type = Type::TEXT;
const I4: Type = Type::INT4;

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |t| t.as_secs() as i64)
}

fn write_batch(c: &mut impl GenericClient, url: &str, batch: &WriteBatch, bulk: bool) -> PgResult<u64> {
    super::aliases::rename(c, &batch.renames)?;
    // Documents: new ones are inserted; one already there is skipped with everything it
    // supports, unless it is written in parts and this is its next part.
    let doc_ids: Vec<&str> = batch.documents.iter().map(|d| d.id.as_str()).collect();
    let mut inserted: HashSet<String> = HashSet::new();
    let mut partial: HashSet<String> = HashSet::new();
    if !batch.documents.is_empty() {
        type DocRow<'a> = (i32, &'a rhizome_core::Document, &'static str, i64, Option<String>, Option<String>);
        let docs: Vec<DocRow> = batch
            .documents
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let lang = rhizome_core::lang::detect_language(&d.text).code();
                (i as i32, d, lang, now(), crate::pages_json(d), crate::meta_json(&d.meta))
            })
            .collect();
        copy_in(
            c,
            "st_documents(seq, id, source, title, text, language, indexed_at, pages, meta)",
            &[I4, T, T, T, T, T, Type::INT8, T, T],
            &docs,
            |(i, d, lang, t, pages, meta), w| w(&[i, &d.id, &d.source, &d.title, &d.text, lang, t, pages, meta]),
        )?;
        inserted = c
            .query(
                "INSERT INTO documents(id, source, title, text, language, indexed_at, pages, meta)
                 SELECT id, source, title, text, language, indexed_at, pages, meta FROM st_documents ORDER BY seq
                 ON CONFLICT (id) DO NOTHING RETURNING id",
                &[],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let new: Vec<&str> = inserted.iter().map(String::as_str).collect();
        super::aliases::documents_written(c, &new)?;
        super::tags::retag(c, &new)?;
        partial = c
            .query("SELECT doc_id FROM partial_documents WHERE doc_id = ANY($1)", &[&doc_ids])?
            .iter()
            .map(|r| r.get(0))
            .collect();
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for d in &doc_ids {
        *seen.entry(d).or_default() += 1;
    }
    // As the SQLite store: a document seen twice in one batch counts as already there.
    let skip: HashSet<&str> =
        doc_ids.iter().copied().filter(|d| (!inserted.contains(*d) || seen[d] > 1) && !partial.contains(*d)).collect();
    let keep = |doc: &str| !skip.contains(doc);

    // Chunks, and the postings of those that are new.
    let chunks: Vec<(i32, &rhizome_core::Chunk)> =
        batch.chunks.iter().filter(|ch| keep(&ch.doc_id)).enumerate().map(|(i, ch)| (i as i32, ch)).collect();
    if !chunks.is_empty() {
        copy_in(
            c,
            "st_chunks(seq, id, doc_id, ordinal, text, tokens, char_start, char_end, page_first, page_last)",
            &[I4, T, T, I4, T, I4, I4, I4, I4, I4],
            &chunks,
            |(i, ch), w| {
                let (first, last) = (ch.pages.map(|p| p.first as i32), ch.pages.map(|p| p.last as i32));
                w(&[
                    i,
                    &ch.id,
                    &ch.doc_id,
                    &(ch.ordinal as i32),
                    &ch.text,
                    &(ch.tokens as i32),
                    &(ch.start as i32),
                    &(ch.end as i32),
                    &first,
                    &last,
                ])
            },
        )?;
        let new: Vec<(i64, String)> = c
            .query(
                "INSERT INTO chunks(id, doc_id, ordinal, text, tokens, char_start, char_end, page_first, page_last)
                 SELECT id, doc_id, ordinal, text, tokens, char_start, char_end, page_first, page_last
                 FROM st_chunks ORDER BY seq
                 ON CONFLICT (id) DO NOTHING RETURNING rowid, id",
                &[],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let titles: HashMap<&str, &str> = batch.documents.iter().map(|d| (d.id.as_str(), d.title.as_str())).collect();
        let by_id: HashMap<&str, &rhizome_core::Chunk> = chunks.iter().map(|(_, ch)| (ch.id.as_str(), *ch)).collect();
        let mut posts: Vec<(String, i64, i32)> = Vec::new();
        let mut lens: Vec<(i64, i32)> = Vec::new();
        for (rowid, id) in &new {
            let Some(ch) = by_id.get(id.as_str()) else { continue };
            let title = titles.get(ch.doc_id.as_str()).copied().unwrap_or("");
            let (p, len) = term_frequencies(&chunk_text(title, &ch.text));
            posts.extend(p.into_iter().map(|(t, n)| (t, *rowid, n as i32)));
            lens.push((*rowid, len as i32));
        }
        copy_in(c, "bm25_postings(term, chunk_rowid, tf)", &[T, Type::INT8, I4], &posts, |p, w| {
            w(&[&p.0, &p.1, &p.2])
        })?;
        copy_in(c, "bm25_docs(chunk_rowid, len)", &[Type::INT8, I4], &lens, |p, w| w(&[&p.0, &p.1]))?;
        super::terms::added(c, posts.iter().map(|p| p.0.as_str()))?;
    }

    // Support rows.
    let mentions: Vec<_> = batch.mentions.iter().filter(|m| keep(&m.doc_id)).collect();
    copy_in(
        c,
        "entity_support(entity_id, doc_id, chunk_id, name, entity_type, description, count, importance)",
        &[T, T, T, T, T, T, I4, Type::FLOAT8],
        &mentions,
        |m, w| {
            let MentionRecord { entity_id, name, entity_type, description, doc_id, chunk_id, count, importance } = m;
            w(&[
                entity_id,
                doc_id,
                chunk_id,
                name,
                entity_type,
                description,
                &(*count as i32),
                &importance.map(f64::from),
            ])
        },
    )?;
    let relations: Vec<_> = batch.relations.iter().filter(|r| keep(&r.doc_id)).collect();
    copy_in(
        c,
        "relation_support(relation_id, doc_id, chunk_id, source_id, target_id, rel_type, description, weight)",
        &[T, T, T, T, T, T, T, Type::FLOAT8],
        &relations,
        |r, w| {
            let RelationRecord { relation, doc_id, chunk_id } = r;
            let Relation { id, source_id, target_id, rel_type, description, weight } = relation;
            w(&[id, doc_id, chunk_id, source_id, target_id, rel_type, description, &(*weight as f64)])
        },
    )?;
    let facts: Vec<_> = batch.facts.iter().filter(|f| keep(&f.doc_id)).collect();
    copy_in(
        c,
        "fact_support(fact_id, doc_id, chunk_id, subject, predicate, object, subject_id, object_id)",
        &[T, T, T, T, T, T, T, T],
        &facts,
        |f, w| {
            let x = &f.fact;
            w(&[&x.id, &f.doc_id, &f.chunk_id, &x.subject, &x.predicate, &x.object, &x.subject_id, &x.object_id])
        },
    )?;

    // SIMILAR_TO edges and vectors: the last of duplicates wins (INSERT OR REPLACE).
    let mut similar: HashMap<(&str, &str), f32> = HashMap::new();
    for (a, b, s) in &batch.similar {
        similar.insert((a.as_str(), b.as_str()), *s);
    }
    let similar: Vec<_> = similar.into_iter().collect();
    if !similar.is_empty() {
        copy_in(c, "st_similar(a, b, score)", &[T, T, Type::FLOAT8], &similar, |((a, b), s), w| {
            w(&[a, b, &(*s as f64)])
        })?;
        c.execute(
            "INSERT INTO similar_chunks(a, b, score, doc_id) SELECT s.a, s.b, s.score, c.doc_id
             FROM st_similar s JOIN chunks c ON c.id = s.a
             ON CONFLICT (a, b) DO UPDATE SET score = excluded.score, doc_id = excluded.doc_id",
            &[],
        )?;
    }
    let mut vectors: HashMap<(&str, &str), &Vec<f32>> = HashMap::new();
    for (kind, id, v) in &batch.vectors {
        vectors.insert((kind.as_str(), id.as_str()), v);
    }
    let vectors: Vec<_> = vectors.into_iter().collect();
    upsert_vectors(c, vectors.iter().map(|((k, id), v)| (*k, *id, v.as_slice())))?;

    // Extraction failures: a new one starts at its attempts, a known one counts up.
    let mut failures: Vec<(i32, String, String, String, i32, i32)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for f in batch.failures.iter().filter(|f| keep(&f.doc_id)) {
        match at.get(f.chunk_id.as_str()) {
            Some(&i) => {
                failures[i].3 = f.error.clone();
                failures[i].5 += 1;
            }
            None => {
                at.insert(&f.chunk_id, failures.len());
                failures.push((
                    failures.len() as i32,
                    f.chunk_id.clone(),
                    f.doc_id.clone(),
                    f.error.clone(),
                    f.attempts.max(1) as i32,
                    1,
                ));
            }
        }
    }
    if !failures.is_empty() {
        copy_in(
            c,
            "st_failures(seq, chunk_id, doc_id, error, first, n)",
            &[I4, T, T, T, I4, I4],
            &failures,
            |f, w| w(&[&f.0, &f.1, &f.2, &f.3, &f.4, &f.5]),
        )?;
        c.batch_execute(
            "UPDATE extraction_failures f SET error = s.error, attempts = f.attempts + s.n
             FROM st_failures s WHERE f.chunk_id = s.chunk_id;
             INSERT INTO extraction_failures(chunk_id, doc_id, error, attempts)
             SELECT chunk_id, doc_id, error, first + n - 1 FROM st_failures s
             WHERE NOT EXISTS (SELECT 1 FROM extraction_failures f WHERE f.chunk_id = s.chunk_id) ORDER BY seq;",
        )?;
    }
    let covariates: Vec<_> = batch.covariates.iter().filter(|x| keep(&x.doc_id)).collect();
    communities::insert_covariates(c, &covariates)?;

    // Progress of documents written in parts: the last word per document counts.
    let mut progress: HashMap<&str, Option<u32>> = HashMap::new();
    for (d, n) in batch.doc_progress.iter().filter(|(d, _)| keep(d)) {
        progress.insert(d, *n);
    }
    let (mut upd, mut del): (Vec<(&str, i32)>, Vec<&str>) = (Vec::new(), Vec::new());
    for (d, n) in progress {
        match n {
            Some(n) => upd.push((d, n as i32)),
            None => del.push(d),
        }
    }
    if !upd.is_empty() {
        let (ids, ns): (Vec<&str>, Vec<i32>) = upd.into_iter().unzip();
        c.execute(
            "INSERT INTO partial_documents(doc_id, chunks_done) SELECT * FROM unnest($1::text[], $2::int[])
             ON CONFLICT (doc_id) DO UPDATE SET chunks_done = excluded.chunks_done",
            &[&ids, &ns],
        )?;
    }
    if !del.is_empty() {
        c.execute("DELETE FROM partial_documents WHERE doc_id = ANY($1)", &[&del])?;
    }
    if !batch.resolved_failures.is_empty() {
        c.execute("DELETE FROM extraction_failures WHERE chunk_id = ANY($1)", &[&batch.resolved_failures])?;
    }
    super::aliases::write(c, &batch.aliases)?;

    let distinct = |it: &mut dyn Iterator<Item = &String>| -> Vec<String> {
        it.cloned().collect::<BTreeSet<_>>().into_iter().collect()
    };
    let (created, _) = refresh::entities(c, &distinct(&mut mentions.iter().map(|m| &m.entity_id)))?;
    refresh::relations(c, &distinct(&mut relations.iter().map(|r| &r.relation.id)))?;
    refresh::facts(c, &distinct(&mut facts.iter().map(|f| &f.fact.id)))?;
    if created > 0 {
        schema::set_meta(c, "synonyms_dirty", "1")?;
    }
    let version = schema::bump(c, true)?;
    let mut kinds: Vec<(VectorKind, usize)> = Vec::new();
    for (k, _, _) in &batch.vectors {
        match kinds.iter_mut().find(|(x, _)| x == k) {
            Some((_, n)) => *n += 1,
            None => kinds.push((*k, 1)),
        }
    }
    if !bulk {
        search::maybe_build_hnsw(c, url, &kinds)?;
    }
    Ok(version)
}

/// Vectors (kind, id, vector) put in, replacing those of the same kind and id (once per
/// transaction: the staging table empties at commit).
pub(super) fn upsert_vectors<'a>(
    c: &mut impl GenericClient,
    rows: impl Iterator<Item = (&'a str, &'a str, &'a [f32])>,
) -> PgResult<()> {
    let mut rows = rows.peekable();
    if rows.peek().is_none() {
        return Ok(());
    }
    super::vector::copy_vectors(c, rows)?;
    c.execute(
        "INSERT INTO vectors(kind, id, vec) SELECT kind, id, vec FROM st_vectors
         ON CONFLICT (kind, id) DO UPDATE SET vec = excluded.vec",
        &[],
    )?;
    Ok(())
}

impl PgStore {
    /// Run `f` in one transaction on this store's connection (staging tables made first).
    ///
    /// Its commit does not wait for the WAL to reach the disk (`synchronous_commit = off`
    /// for this transaction only), the durability of the SQLite store's WAL with
    /// synchronous=NORMAL: a crash of the machine may lose the last commits but never
    /// corrupts the index (a batch is there whole or not at all), and a crash of rhizome
    /// alone loses nothing committed.
    pub(crate) fn in_tx<T>(&mut self, f: impl FnOnce(&mut postgres::Transaction<'_>) -> PgResult<T>) -> Result<T> {
        let url = self.pgurl().clone();
        // What a reader loan read at its start is no longer what this store sees.
        self.set_snap(None);
        self.forget_empty();
        self.with(|conn| {
            let e = |x| super::pg_err(&url, x);
            if !conn.staged {
                conn.client.batch_execute(STAGING).map_err(e)?;
                conn.staged = true;
            }
            let mut tx = conn.client.transaction().map_err(e)?;
            // Local to the transaction: a pooled connection's other users commit as the
            // server is configured.
            tx.batch_execute("SET LOCAL synchronous_commit = off").map_err(e)?;
            let out = f(&mut tx).map_err(e)?;
            tx.commit().map_err(e)?;
            Ok(out)
        })
    }
}

impl StoreWrite for PgStore {
    fn set_embedding_model(&mut self, model_id: &str, dim: usize) -> Result<()> {
        match self.embedding_model()? {
            Some(m) if m == model_id => Ok(()),
            Some(m) => Err(Error::Index {
                path: self.url().into(),
                msg: format!(
                    "this index holds vectors of embedding model {m}, not {model_id}; vectors of \
                     different models are never mixed: use --set embed.model={m}, or index into \
                     another database"
                ),
            }),
            None => self.in_tx(|tx| {
                schema::set_meta(tx, "embedding_model", model_id)?;
                schema::set_meta(tx, "embedding_dim", &dim.to_string())
            }),
        }
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.in_tx(|tx| schema::set_meta(tx, key, value))
    }

    fn write_batch(&mut self, batch: &WriteBatch) -> Result<()> {
        let (url, bulk) = (self.pgurl().full.clone(), self.bulk);
        let version = self.in_tx(|tx| write_batch(tx, &url, batch, bulk))?;
        // Entity resolution searches the entity vectors after every batch: carry them over.
        search::carry_over(&self.pgurl().full, version, &batch.vectors);
        Ok(())
    }

    fn bulk_load(&mut self, on: bool) -> Result<()> {
        if on == self.bulk {
            return Ok(());
        }
        let url = self.pgurl().full.clone();
        if on {
            self.in_tx(|tx| search::drop_hnsw(tx, &url))?;
        } else {
            self.in_tx(|tx| search::build_hnsw(tx, &url))?;
        }
        self.bulk = on;
        Ok(())
    }

    fn delete_document(&mut self, doc_id: &str, embed: EmbedNames<'_>) -> Result<DeleteReport> {
        // Planned before the transaction (embedding is not a database step); the writer
        // lock keeps the support as read.
        let remaining =
            self.with(|conn| super::delete::remaining_names(&mut conn.client, doc_id).map_err(|e| self.err(e)))?;
        let rekeys = Rekeys::plan(&remaining, embed)?;
        self.in_tx(|tx| super::delete::delete_document(tx, doc_id, &rekeys))
    }

    fn set_entity_summary(&mut self, entity_id: &str, fingerprint: &str, summary: &str) -> Result<()> {
        self.in_tx(|tx| {
            tx.execute(
                "INSERT INTO entity_summaries(entity_id, fingerprint, summary) VALUES ($1, $2, $3)
                 ON CONFLICT (entity_id) DO UPDATE SET fingerprint = excluded.fingerprint, summary = excluded.summary",
                &[&entity_id, &fingerprint, &summary],
            )?;
            refresh::entities(tx, &[entity_id.to_string()])?;
            schema::bump(tx, false).map(drop)
        })
    }

    fn set_document_meta(&mut self, metas: &[(String, rhizome_core::DocumentMeta)]) -> Result<u64> {
        let ids: Vec<&str> = metas.iter().map(|(id, _)| id.as_str()).collect();
        let values: Vec<Option<String>> = metas.iter().map(|(_, m)| crate::meta_json(m)).collect();
        self.in_tx(|tx| {
            let n = tx.execute(
                "UPDATE documents d SET meta = m.meta FROM unnest($1::text[], $2::text[]) AS m(id, meta)
                 WHERE d.id = m.id",
                &[&ids, &values],
            )?;
            super::tags::retag(tx, &ids)?;
            Ok(n)
        })
    }

    fn rebuild_synonyms(&mut self, top_k: usize, threshold: f32, cancel: &AtomicBool) -> Result<u64> {
        let seen = self.graph_version()?;
        let url = self.pgurl().full.clone();
        let m = self
            .with(|conn| search::matrix(&mut conn.client, &url, None, VectorKind::Entity).map_err(|e| self.err(e)))?;
        let pairs = m.knn_pairs(top_k, threshold, cancel).ok_or(Error::Cancelled)?;
        let edges: Vec<(String, String, f32)> =
            pairs.iter().map(|&(i, j, s)| (m.ids[i].clone(), m.ids[j].clone(), s)).collect();
        self.in_tx(|tx| {
            // Entities written since the matrix was read keep the flag set, so the next
            // run redoes synonymy.
            let now = schema::counter(tx, "graph_version")?;
            replace_synonyms(tx, &edges, false)?;
            if now == seen {
                schema::set_meta(tx, "synonyms_dirty", "0")?;
            }
            schema::bump(tx, true).map(drop)
        })?;
        Ok(edges.len() as u64)
    }

    fn replace_communities(&mut self, list: &[rhizome_core::Community], graph_version: u64) -> Result<()> {
        self.in_tx(|tx| communities::replace(tx, list, graph_version))
    }

    fn put_reports(&mut self, reports: &[rhizome_core::CommunityReport], vectors: &[(String, Vec<f32>)]) -> Result<()> {
        self.in_tx(|tx| communities::put_reports(tx, reports, vectors))
    }

    fn set_reports_version(&mut self, graph_version: u64) -> Result<()> {
        self.in_tx(|tx| {
            schema::set_meta(tx, "reports_version", &graph_version.to_string())?;
            schema::bump(tx, false).map(drop)
        })
    }

    fn set_synonyms(&mut self, edges: &[(String, String, f32)]) -> Result<()> {
        self.in_tx(|tx| {
            replace_synonyms(tx, edges, true)?;
            schema::set_meta(tx, "synonyms_dirty", "0")?;
            schema::bump(tx, true).map(drop)
        })
    }
}

/// Replace every SYNONYM edge (`only_stored`: keep edges between stored entities only).
fn replace_synonyms(c: &mut impl GenericClient, edges: &[(String, String, f32)], only_stored: bool) -> PgResult<()> {
    c.execute("DELETE FROM synonyms", &[])?;
    if edges.is_empty() {
        return Ok(());
    }
    let a: Vec<&str> = edges.iter().map(|e| e.0.as_str()).collect();
    let b: Vec<&str> = edges.iter().map(|e| e.1.as_str()).collect();
    let s: Vec<f64> = edges.iter().map(|e| e.2 as f64).collect();
    let filter = if only_stored {
        " WHERE EXISTS (SELECT 1 FROM entities WHERE id = x.a) AND EXISTS (SELECT 1 FROM entities WHERE id = x.b)"
    } else {
        ""
    };
    c.execute(
        &format!(
            "INSERT INTO synonyms(a, b, score) SELECT x.a, x.b, x.s FROM unnest($1::text[], $2::text[], $3::float8[])
             AS x(a, b, s){filter} ON CONFLICT (a, b) DO NOTHING"
        ),
        &[&a, &b, &s],
    )?;
    Ok(())
}
