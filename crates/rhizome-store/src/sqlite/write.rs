//! [`StoreWrite`] for [`SqliteStore`]: batches in one transaction each; deletion by
//! support counting (a node or edge with no supporting document left is removed).

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::AtomicBool;

use rhizome_core::{
    DeleteReport, EmbedNames, Error, Fact, FactRecord, MentionRecord, Relation, RelationRecord, Result, StoreRead,
    StoreWrite, VectorKind, WriteBatch,
};
use rusqlite::{params, Connection, OptionalExtension};

use super::{aliases, meta, postings, rows, sql, tags, SqliteStore};
use crate::aggregate::{descriptions, entity_description, entity_row, relation_row, MentionVote};
use crate::vectors::encode;

/// Run one statement through the connection's statement cache: a batch runs the same few
/// statements once per record, and preparing each anew (parsing, planning) was a large
/// part of a write.
pub(super) fn exec(conn: &Connection, statement: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
    conn.prepare_cached(statement)?.execute(params)
}

/// The first row of a query, through the connection's statement cache (as [`exec`]).
fn row<T>(
    conn: &Connection,
    statement: &str,
    params: impl rusqlite::Params,
    f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.prepare_cached(statement)?.query_row(params, f)
}

/// How a refresh of an aggregated node or edge ended.
#[derive(PartialEq)]
pub(super) enum Refreshed {
    Kept,
    Created,
    Removed,
}

/// Distinct non-empty descriptions of an entity, in document order, and their fingerprint.
pub fn entity_descriptions(conn: &Connection, id: &str) -> Result<(Vec<String>, String)> {
    let all: Vec<String> = rows::all(
        conn,
        "SELECT description FROM entity_support WHERE entity_id = ?1 AND description != ''
         ORDER BY doc_id, coalesce(chunk_id, ''), name",
        [id],
        |r| r.get(0),
    )?;
    Ok(descriptions(all.iter().map(String::as_str)))
}

pub(super) fn refresh_entity(conn: &Connection, id: &str) -> Result<Refreshed> {
    // One read of the support rows gives name, type, descriptions and importance alike
    // (`aggregate::entity_row`, as the PostgreSQL store does).
    let rows: Vec<(String, String, String, i64, Option<f64>, String)> = rows::all(
        conn,
        "SELECT name, entity_type, description, count, importance, doc_id FROM entity_support
         WHERE entity_id = ?1 ORDER BY doc_id, coalesce(chunk_id, ''), name",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
    )?;
    let existed: bool =
        row(conn, "SELECT 1 FROM entities WHERE id = ?1", [id], |_| Ok(())).optional().map_err(sql)?.is_some();
    if rows.is_empty() {
        exec(conn, "DELETE FROM entities WHERE id = ?1", [id]).map_err(sql)?;
        exec(conn, "DELETE FROM vectors WHERE kind = 'entity' AND id = ?1", [id]).map_err(sql)?;
        exec(conn, "DELETE FROM synonyms WHERE a = ?1 OR b = ?1", [id]).map_err(sql)?;
        exec(conn, "DELETE FROM entity_summaries WHERE entity_id = ?1", [id]).map_err(sql)?;
        return Ok(if existed { Refreshed::Removed } else { Refreshed::Kept });
    }
    let votes: Vec<MentionVote<'_>> = rows
        .iter()
        .map(|(name, entity_type, description, count, importance, doc_id)| MentionVote {
            doc_id,
            name,
            entity_type,
            description,
            count: *count,
            importance: *importance,
        })
        .collect();
    let (name, entity_type, descriptions, fp, importance) = entity_row(&votes);
    // A summary stands in for the descriptions it was made from, and only for those.
    let summary: Option<String> = row(
        conn,
        "SELECT summary FROM entity_summaries WHERE entity_id = ?1 AND fingerprint = ?2",
        params![id, fp],
        |r| r.get(0),
    )
    .optional()
    .map_err(sql)?;
    let description = entity_description(&descriptions, summary);
    exec(
        conn,
        "INSERT INTO entities(id, name, entity_type, description, importance) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(id) DO UPDATE SET name = excluded.name, entity_type = excluded.entity_type,
         description = excluded.description, importance = excluded.importance",
        params![id, name, entity_type, description, importance],
    )
    .map_err(sql)?;
    Ok(if existed { Refreshed::Kept } else { Refreshed::Created })
}

pub(super) fn refresh_relation(conn: &Connection, id: &str) -> Result<Refreshed> {
    let rows: Vec<(String, String, String, String, f64)> = rows::all(
        conn,
        "SELECT source_id, target_id, rel_type, description, weight FROM relation_support
         WHERE relation_id = ?1 ORDER BY doc_id, coalesce(chunk_id, ''), rel_type",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let Some(first) = rows.first() else {
        let n = exec(conn, "DELETE FROM relations WHERE id = ?1", [id]).map_err(sql)?;
        return Ok(if n > 0 { Refreshed::Removed } else { Refreshed::Kept });
    };
    let (weight, description) = relation_row(rows.iter().map(|r| (r.3.as_str(), r.4)));
    exec(
        conn,
        "INSERT INTO relations(id, source_id, target_id, rel_type, description, weight)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(id) DO UPDATE SET description = excluded.description, weight = excluded.weight",
        params![id, first.0, first.1, first.2, description, weight],
    )
    .map_err(sql)?;
    Ok(Refreshed::Kept)
}

pub(super) fn refresh_fact(conn: &Connection, id: &str) -> Result<Refreshed> {
    let first: Option<(String, String, String, String, String)> = row(
        conn,
        "SELECT subject, predicate, object, subject_id, object_id FROM fact_support
         WHERE fact_id = ?1 ORDER BY doc_id, coalesce(chunk_id, '') LIMIT 1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )
    .optional()
    .map_err(sql)?;
    let Some((s, p, o, sid, oid)) = first else {
        exec(conn, "DELETE FROM vectors WHERE kind = 'fact' AND id = ?1", [id]).map_err(sql)?;
        let n = exec(conn, "DELETE FROM facts WHERE id = ?1", [id]).map_err(sql)?;
        return Ok(if n > 0 { Refreshed::Removed } else { Refreshed::Kept });
    };
    exec(
        conn,
        "INSERT INTO facts(id, subject, predicate, object, subject_id, object_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(id) DO UPDATE SET subject = excluded.subject, predicate = excluded.predicate,
         object = excluded.object, subject_id = excluded.subject_id, object_id = excluded.object_id",
        params![id, s, p, o, sid, oid],
    )
    .map_err(sql)?;
    Ok(Refreshed::Kept)
}

fn is_partial(conn: &Connection, doc_id: &str) -> Result<bool> {
    row(conn, "SELECT 1 FROM partial_documents WHERE doc_id = ?1", [doc_id], |_| Ok(()))
        .optional()
        .map(|o| o.is_some())
        .map_err(sql)
}

impl StoreWrite for SqliteStore {
    fn set_embedding_model(&mut self, model_id: &str, dim: usize) -> Result<()> {
        match self.embedding_model()? {
            Some(m) if m == model_id => Ok(()),
            Some(m) => Err(Error::Index {
                path: self.dir.clone(),
                msg: format!(
                    "this index holds vectors of embedding model {m}, not {model_id}; vectors of \
                     different models are never mixed: use --set embed.model={m}, or index into \
                     a new --index directory"
                ),
            }),
            None => {
                meta::set_meta(&self.conn, "embedding_model", model_id)?;
                meta::set_meta(&self.conn, "embedding_dim", &dim.to_string())
            }
        }
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        meta::set_meta(&self.conn, key, value)
    }

    fn write_batch(&mut self, batch: &WriteBatch) -> Result<()> {
        let tx = self.conn.transaction().map_err(sql)?;
        aliases::rename(&tx, &batch.renames)?;
        let mut skip: HashSet<&str> = HashSet::new();
        let titles: std::collections::HashMap<&str, &str> =
            batch.documents.iter().map(|d| (d.id.as_str(), d.title.as_str())).collect();
        for d in &batch.documents {
            let n = tx
                .execute(
                    "INSERT OR IGNORE INTO documents(id, source, title, text, pages, meta)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![d.id, d.source, d.title, d.text, crate::pages_json(d), crate::meta_json(&d.meta)],
                )
                .map_err(sql)?;
            // Already there: skip it, unless it is a document written in parts whose
            // next part this is.
            if n == 0 && !is_partial(&tx, &d.id)? {
                skip.insert(d.id.as_str());
            }
            if n > 0 {
                aliases::document_written(&tx, d)?;
                let lang = rhizome_core::lang::detect_language(&d.text);
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |t| t.as_secs() as i64);
                exec(
                    &tx,
                    "UPDATE documents SET language = ?2, indexed_at = ?3 WHERE id = ?1",
                    params![d.id, lang.code(), now],
                )
                .map_err(sql)?;
                tags::retag(&tx, [d.id.as_str()])?;
            }
        }
        for c in batch.chunks.iter().filter(|c| !skip.contains(c.doc_id.as_str())) {
            let n = tx
                .execute(
                    "INSERT OR IGNORE INTO chunks(id, doc_id, ordinal, text, tokens, char_start, char_end,
                     page_first, page_last) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        c.id,
                        c.doc_id,
                        c.ordinal,
                        c.text,
                        c.tokens,
                        c.start,
                        c.end,
                        c.pages.map(|p| p.first),
                        c.pages.map(|p| p.last)
                    ],
                )
                .map_err(sql)?;
            if n > 0 {
                // Titles are searchable too (a corpus passage's title often names its subject).
                let title = titles.get(c.doc_id.as_str()).copied().unwrap_or("");
                postings::index_chunk(&tx, tx.last_insert_rowid(), &crate::bm25::chunk_text(title, &c.text))?;
            }
        }
        let mut entities = BTreeSet::new();
        for m in batch.mentions.iter().filter(|m| !skip.contains(m.doc_id.as_str())) {
            let MentionRecord { entity_id, name, entity_type, description, doc_id, chunk_id, count, importance } = m;
            exec(
                &tx,
                "INSERT INTO entity_support(entity_id, doc_id, chunk_id, name, entity_type,
                 description, count, importance) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![entity_id, doc_id, chunk_id, name, entity_type, description, count, importance.map(f64::from)],
            )
            .map_err(sql)?;
            entities.insert(entity_id.as_str());
        }
        let mut relations = BTreeSet::new();
        for r in batch.relations.iter().filter(|r| !skip.contains(r.doc_id.as_str())) {
            let RelationRecord { relation, doc_id, chunk_id } = r;
            let Relation { id, source_id, target_id, rel_type, description, weight } = relation;
            exec(
                &tx,
                "INSERT INTO relation_support(relation_id, doc_id, chunk_id, source_id, target_id,
                 rel_type, description, weight) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![id, doc_id, chunk_id, source_id, target_id, rel_type, description, *weight as f64],
            )
            .map_err(sql)?;
            relations.insert(id.as_str());
        }
        let mut facts = BTreeSet::new();
        for f in batch.facts.iter().filter(|f| !skip.contains(f.doc_id.as_str())) {
            let FactRecord { fact: Fact { id, subject, predicate, object, subject_id, object_id }, doc_id, chunk_id } =
                f;
            exec(
                &tx,
                "INSERT INTO fact_support(fact_id, doc_id, chunk_id, subject, predicate, object,
                 subject_id, object_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![id, doc_id, chunk_id, subject, predicate, object, subject_id, object_id],
            )
            .map_err(sql)?;
            facts.insert(id.as_str());
        }
        for (a, b, score) in &batch.similar {
            exec(
                &tx,
                "INSERT OR REPLACE INTO similar(a, b, score, doc_id)
                 SELECT ?1, ?2, ?3, doc_id FROM chunks WHERE id = ?1",
                params![a, b, *score as f64],
            )
            .map_err(sql)?;
        }
        for (kind, id, v) in &batch.vectors {
            exec(
                &tx,
                "INSERT OR REPLACE INTO vectors(kind, id, vec) VALUES (?1, ?2, ?3)",
                params![kind.as_str(), id, encode(v)],
            )
            .map_err(sql)?;
        }
        for f in batch.failures.iter().filter(|f| !skip.contains(f.doc_id.as_str())) {
            exec(
                &tx,
                "INSERT INTO extraction_failures(chunk_id, doc_id, error, attempts)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(chunk_id) DO UPDATE SET error = excluded.error,
                 attempts = extraction_failures.attempts + 1",
                params![f.chunk_id, f.doc_id, f.error, f.attempts.max(1)],
            )
            .map_err(sql)?;
        }
        let covariates: Vec<_> = batch.covariates.iter().filter(|c| !skip.contains(c.doc_id.as_str())).collect();
        super::communities::insert_covariates(&tx, &covariates)?;
        for (doc_id, done) in batch.doc_progress.iter().filter(|(d, _)| !skip.contains(d.as_str())) {
            match done {
                Some(n) => exec(
                    &tx,
                    "INSERT INTO partial_documents(doc_id, chunks_done) VALUES (?1, ?2)
                     ON CONFLICT(doc_id) DO UPDATE SET chunks_done = excluded.chunks_done",
                    params![doc_id, n],
                ),
                None => exec(&tx, "DELETE FROM partial_documents WHERE doc_id = ?1", [doc_id]),
            }
            .map_err(sql)?;
        }
        for chunk_id in &batch.resolved_failures {
            exec(&tx, "DELETE FROM extraction_failures WHERE chunk_id = ?1", [chunk_id]).map_err(sql)?;
        }
        aliases::write(&tx, &batch.aliases)?;
        let mut created = false;
        for id in entities {
            created |= refresh_entity(&tx, id)? == Refreshed::Created;
        }
        for id in relations {
            refresh_relation(&tx, id)?;
        }
        for id in facts {
            refresh_fact(&tx, id)?;
        }
        if created {
            meta::set_meta(&tx, "synonyms_dirty", "1")?;
        }
        meta::bump_graph_version(&tx)?;
        tx.commit().map_err(sql)?;
        self.invalidate_caches();
        Ok(())
    }

    fn delete_document(&mut self, doc_id: &str, embed: EmbedNames<'_>) -> Result<DeleteReport> {
        let tx = self.conn.transaction().map_err(sql)?;
        let report = super::delete::delete(&tx, doc_id, embed)?;
        tx.commit().map_err(sql)?;
        self.invalidate_caches();
        Ok(report)
    }

    fn replace_communities(&mut self, communities: &[rhizome_core::Community], graph_version: u64) -> Result<()> {
        super::communities::replace(&mut self.conn, communities, graph_version)?;
        self.invalidate_caches();
        Ok(())
    }

    fn set_reports_version(&mut self, graph_version: u64) -> Result<()> {
        super::communities::set_reports_version(&self.conn, graph_version)
    }

    fn put_reports(&mut self, reports: &[rhizome_core::CommunityReport], vectors: &[(String, Vec<f32>)]) -> Result<()> {
        super::communities::put_reports(&mut self.conn, reports, vectors)?;
        self.invalidate_caches();
        Ok(())
    }

    fn set_entity_summary(&mut self, entity_id: &str, fingerprint: &str, summary: &str) -> Result<()> {
        let tx = self.conn.transaction().map_err(sql)?;
        exec(
            &tx,
            "INSERT OR REPLACE INTO entity_summaries(entity_id, fingerprint, summary)
             VALUES (?1, ?2, ?3)",
            params![entity_id, fingerprint, summary],
        )
        .map_err(sql)?;
        refresh_entity(&tx, entity_id)?;
        tx.commit().map_err(sql)?;
        Ok(())
    }

    fn set_document_meta(&mut self, metas: &[(String, rhizome_core::DocumentMeta)]) -> Result<u64> {
        let tx = self.conn.transaction().map_err(sql)?;
        let mut n = 0;
        for (id, meta) in metas {
            n += exec(&tx, "UPDATE documents SET meta = ?2 WHERE id = ?1", params![id, crate::meta_json(meta)])
                .map_err(sql)? as u64;
        }
        tags::retag(&tx, metas.iter().map(|(id, _)| id.as_str()))?;
        tx.commit().map_err(sql)?;
        Ok(n)
    }

    fn set_synonyms(&mut self, edges: &[(String, String, f32)]) -> Result<()> {
        let tx = self.conn.transaction().map_err(sql)?;
        super::export::set_synonyms(&tx, edges)?;
        tx.commit().map_err(sql)?;
        self.invalidate_caches();
        Ok(())
    }

    fn rebuild_synonyms(&mut self, top_k: usize, threshold: f32, cancel: &AtomicBool) -> Result<u64> {
        let seen = self.graph_version()?;
        let m = self.matrix(VectorKind::Entity)?;
        let pairs = m.knn_pairs(top_k, threshold, cancel).ok_or(Error::Cancelled)?;
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sql)?;
        // Entities written since the matrix was read (only possible without the writer
        // lock) keep the flag set, so the next run redoes synonymy.
        let now: u64 = meta::get_meta(&tx, "graph_version")?.and_then(|v| v.parse().ok()).unwrap_or(0);
        exec(&tx, "DELETE FROM synonyms", []).map_err(sql)?;
        {
            let mut ins = tx.prepare("INSERT OR IGNORE INTO synonyms(a, b, score) VALUES (?1, ?2, ?3)").map_err(sql)?;
            for (i, j, s) in &pairs {
                ins.execute(params![m.ids[*i], m.ids[*j], *s as f64]).map_err(sql)?;
            }
        }
        if now == seen {
            meta::set_meta(&tx, "synonyms_dirty", "0")?;
        }
        meta::bump_graph_version(&tx)?;
        tx.commit().map_err(sql)?;
        Ok(pairs.len() as u64)
    }
}
