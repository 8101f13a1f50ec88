//! [`StoreRead`] for [`PgStore`]: list reads are one query each (`= ANY($1)`), in the
//! orders the SQLite store gives.

use std::collections::HashMap;

use postgres::{Client, Row};
use rhizome_core::{
    ChunkWithDoc, Document, DocumentSummary, Entity, EntityRow, ExtractionFailure, Fact, FactRow, GraphData, Relation,
    Result, Scored, Stats, StoreRead, SummaryTask, VectorKind,
};

use super::pool::Conn;
use super::refresh::PgResult;
use super::rows::{chunk_row, document_row, entity_row, fact_row, failure_row, relation_row};
use super::snapshot::snapshot;
use super::vector::PgVector;
use super::{communities, export, schema, search, PgStore};
use crate::aggregate::descriptions;

/// Rows keyed by their first column, returned in the order of `ids` (unknown ids skipped);
/// the first row `f` cannot read is the error.
fn in_order<T: Clone>(ids: &[String], rows: Vec<Row>, f: impl Fn(&Row) -> PgResult<T>) -> PgResult<Vec<T>> {
    let by: HashMap<String, T> = rows.iter().map(|r| Ok((r.get::<_, String>(0), f(r)?))).collect::<PgResult<_>>()?;
    Ok(ids.iter().filter_map(|id| by.get(id).cloned()).collect())
}

impl PgStore {
    /// The rows of `table` (entities, chunks or facts).
    fn count(&self, table: &str) -> Result<u64> {
        self.q(|c| Ok(c.query_one(&format!("SELECT count(*) FROM {table}"), &[])?.get::<_, i64>(0).max(0) as u64))
    }

    fn q<T>(&self, f: impl FnOnce(&mut Client) -> PgResult<T>) -> Result<T> {
        self.with(|conn| f(&mut conn.client).map_err(|e| self.err(e)))
    }

    /// As [`PgStore::q`], with the connection's prepared statements at hand.
    fn qc<T>(&self, f: impl FnOnce(&mut Conn) -> PgResult<T>) -> Result<T> {
        self.with(|conn| f(conn).map_err(|e| self.err(e)))
    }
}

/// `f` inside one read-only repeatable-read transaction: its reads see one snapshot.
fn in_snapshot<T>(c: &mut Client, f: impl FnOnce(&mut postgres::Transaction) -> PgResult<T>) -> PgResult<T> {
    let mut tx = super::snapshot(c)?;
    let out = f(&mut tx)?;
    tx.commit()?;
    Ok(out)
}

fn stats(c: &mut Client) -> PgResult<Stats> {
    let r = c.query_one(
        "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM chunks),
           (SELECT count(*) FROM entities), (SELECT count(*) FROM facts),
           (SELECT count(*) FROM chunks WHERE ordinal > 0),
           (SELECT count(*) FROM (SELECT DISTINCT entity_id, chunk_id FROM entity_support WHERE chunk_id IS NOT NULL) m),
           (SELECT count(*) FROM relations), (SELECT count(*) FROM synonyms), (SELECT count(*) FROM similar_chunks),
           (SELECT count(*) FROM communities), (SELECT count(*) FROM community_reports),
           (SELECT count(DISTINCT id) FROM covariates),
           (SELECT COALESCE(SUM(json_array_length(entity_ids::json)), 0)::bigint FROM communities)",
        &[],
    )?;
    let n = |i: usize| r.get::<_, i64>(i) as u64;
    let mut s = Stats::default();
    s.nodes.insert("Document".into(), n(0));
    s.nodes.insert("Chunk".into(), n(1));
    s.nodes.insert("Entity".into(), n(2));
    s.nodes.insert("Fact".into(), n(3));
    s.edges.insert("PART_OF".into(), n(1));
    s.edges.insert("NEXT_CHUNK".into(), n(4));
    s.edges.insert("MENTIONED_IN".into(), n(5));
    s.edges.insert("RELATED".into(), n(6));
    s.edges.insert("SYNONYM".into(), n(7));
    s.edges.insert("SIMILAR_TO".into(), n(8));
    s.nodes.insert("Community".into(), n(9));
    s.nodes.insert("CommunityReport".into(), n(10));
    s.nodes.insert("Covariate".into(), n(11));
    s.edges.insert("IN_COMMUNITY".into(), n(12));
    Ok(s)
}

fn summary_tasks(c: &mut Client, min: usize) -> PgResult<Vec<SummaryTask>> {
    let ids: Vec<String> = c
        .query(
            "SELECT entity_id FROM entity_support WHERE description <> ''
             GROUP BY entity_id HAVING count(DISTINCT description) >= $1 ORDER BY entity_id",
            &[&(min as i64)],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut described: HashMap<String, Vec<String>> = HashMap::new();
    for r in c.query(
        "SELECT entity_id, description FROM entity_support WHERE entity_id = ANY($1) AND description <> ''
         ORDER BY entity_id, doc_id, coalesce(chunk_id, ''), name, seq",
        &[&ids],
    )? {
        described.entry(r.get(0)).or_default().push(r.get(1));
    }
    let summaries: HashMap<String, String> = c
        .query("SELECT entity_id, fingerprint FROM entity_summaries WHERE entity_id = ANY($1)", &[&ids])?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let names: HashMap<String, String> = c
        .query("SELECT id, name FROM entities WHERE id = ANY($1)", &[&ids])?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let mut out = Vec::new();
    for id in ids {
        let all = described.remove(&id).unwrap_or_default();
        let (descriptions, fingerprint) = descriptions(all.iter().map(String::as_str));
        if summaries.get(&id) == Some(&fingerprint) {
            continue;
        }
        let name = names.get(&id).cloned().unwrap_or_default();
        out.push(SummaryTask { entity_id: id, name, descriptions, fingerprint });
    }
    Ok(out)
}

fn summary_row(r: &Row) -> DocumentSummary {
    DocumentSummary {
        id: r.get(0),
        title: r.get(1),
        source: r.get(2),
        language: r.get(3),
        indexed_at: r.get::<_, Option<i64>>(4).map(|t| t.max(0) as u64),
        chunks: r.get::<_, i64>(5) as u64,
        entities: r.get::<_, i64>(6) as u64,
        partial: r.get(7),
        aliases: Vec::new(),
        pages: crate::page_count(r.get(8)),
        meta: crate::meta_from_json(r.get(9)),
    }
}

const SEARCH: &str = "($1::text IS NULL OR d.title ILIKE $1 ESCAPE '\\' OR d.source ILIKE $1 ESCAPE '\\'
    OR EXISTS (SELECT 1 FROM document_aliases a WHERE a.doc_id = d.id AND a.source ILIKE $1 ESCAPE '\\'))";

impl StoreRead for PgStore {
    fn stats(&self) -> Result<Stats> {
        self.q(stats)
    }

    fn embedding_model(&self) -> Result<Option<String>> {
        if let Some(s) = self.snap() {
            return Ok(s.model);
        }
        self.q(|c| schema::get_meta(c, "embedding_model"))
    }

    fn meta(&self, key: &str) -> Result<Option<String>> {
        self.q(|c| schema::get_meta(c, key))
    }

    fn has_document(&self, doc_id: &str) -> Result<bool> {
        // Asked once per document an import is given: prepared, and not at all while a
        // writer knows the database empty.
        if self.known_empty()? {
            return Ok(false);
        }
        self.qc(|c| {
            Ok(!c.query(
                "SELECT 1 FROM documents WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM partial_documents WHERE doc_id = $1)",
                &[&doc_id],
            )?
            .is_empty())
        })
    }

    fn documents(&self, search: Option<&str>, offset: usize, limit: usize) -> Result<Vec<DocumentSummary>> {
        let pattern = search.map(crate::like_pattern);
        let (limit, offset) = (limit.min(i64::MAX as usize) as i64, offset.min(i64::MAX as usize) as i64);
        self.q(|c| {
            let list: Vec<DocumentSummary> = c
                .query(
                    &format!(
                        "SELECT d.id, d.title, d.source, d.language, d.indexed_at,
                       (SELECT count(*) FROM chunks c WHERE c.doc_id = d.id),
                       (SELECT count(DISTINCT s.entity_id) FROM entity_support s WHERE s.doc_id = d.id),
                       EXISTS(SELECT 1 FROM partial_documents p WHERE p.doc_id = d.id), d.pages, d.meta
                     FROM documents d WHERE {SEARCH} ORDER BY d.title, d.id LIMIT $2 OFFSET $3"
                    ),
                    &[&pattern, &limit, &offset],
                )?
                .iter()
                .map(summary_row)
                .collect();
            list.into_iter()
                .map(|mut d| {
                    d.aliases = super::aliases::of(c, &d.id)?;
                    Ok(d)
                })
                .collect()
        })
    }

    fn document_with_digest(&self, digest: &str) -> Result<Option<String>> {
        self.q(|c| super::aliases::with_digest(c, digest))
    }

    fn document_sources(&self, doc_id: &str) -> Result<Vec<String>> {
        self.q(|c| super::aliases::sources(c, doc_id))
    }

    fn document_count(&self, search: Option<&str>) -> Result<u64> {
        let pattern = search.map(crate::like_pattern);
        self.q(|c| {
            Ok(c.query_one(&format!("SELECT count(*) FROM documents d WHERE {SEARCH}"), &[&pattern])?.get::<_, i64>(0)
                as u64)
        })
    }

    fn partial_documents(&self) -> Result<Vec<(String, u32)>> {
        self.q(|c| {
            Ok(c.query("SELECT doc_id, chunks_done FROM partial_documents ORDER BY doc_id", &[])?
                .iter()
                .map(|r| (r.get(0), r.get::<_, i32>(1) as u32))
                .collect())
        })
    }

    fn find_document(&self, id_or_source: &str) -> Result<Option<Document>> {
        if self.known_empty()? {
            return Ok(None);
        }
        self.qc(|c| {
            Ok(c.query(
                "SELECT id, source, title, text, pages, meta FROM documents WHERE id = $1 OR source = $1
                 OR id = (SELECT doc_id FROM document_aliases WHERE source = $1) ORDER BY source <> $1, id LIMIT 1",
                &[&id_or_source],
            )?
            .first()
            .map(document_row))
        })
    }

    fn documents_from_source(&self, source: &str) -> Result<Vec<Document>> {
        let prefix = format!("{source}#");
        self.q(|c| {
            Ok(c.query(
                "SELECT id, source, title, text, pages, meta FROM documents
                 WHERE source = $1 OR left(source, length($2)) = $2 ORDER BY source, id",
                &[&source, &prefix],
            )?
            .iter()
            .map(document_row)
            .collect())
        })
    }

    fn chunks(&self, ids: &[String]) -> Result<Vec<ChunkWithDoc>> {
        self.qc(|c| {
            let rows = c.query(
                "SELECT c.id, c.doc_id, c.ordinal, c.text, c.tokens, c.char_start, c.char_end, c.page_first,
                 c.page_last, d.title, d.source, coalesce(d.pages::jsonb ->> 'unit', '')
                 FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id = ANY($1)",
                &[&ids],
            )?;
            in_order(ids, rows, |r| {
                Ok(ChunkWithDoc {
                    chunk: chunk_row(r),
                    doc_title: r.get(9),
                    doc_source: r.get(10),
                    doc_page_unit: r.get(11),
                })
            })
        })
    }

    fn entities(&self, ids: &[String]) -> Result<Vec<Entity>> {
        let q = "SELECT id, name, entity_type, description, importance FROM entities WHERE id = ANY($1)";
        self.qc(|c| in_order(ids, c.query(q, &[&ids])?, |r| Ok(entity_row(r))))
    }

    fn facts(&self, ids: &[String]) -> Result<Vec<Fact>> {
        let q = "SELECT id, subject, predicate, object, subject_id, object_id FROM facts WHERE id = ANY($1)";
        self.qc(|c| in_order(ids, c.query(q, &[&ids])?, |r| Ok(fact_row(r))))
    }

    fn relations_of(&self, entity_ids: &[String]) -> Result<Vec<Relation>> {
        // Per entity asked, in order: relations it starts, then those it ends, each in
        // the order they were first stored (the SQLite store's order).
        self.qc(|c| {
            let rows = c.query(
                "SELECT r.id, r.source_id, r.target_id, r.rel_type, r.description, r.weight
                 FROM unnest($1::text[]) WITH ORDINALITY AS e(id, ord)
                 JOIN relations r ON r.source_id = e.id OR r.target_id = e.id
                 ORDER BY e.ord, (r.source_id <> e.id), r.seq",
                &[&entity_ids],
            )?;
            let mut seen = std::collections::HashSet::new();
            Ok(rows.iter().filter(|r| seen.insert(r.get::<_, String>(0))).map(relation_row).collect())
        })
    }

    fn bm25(&self, query: &str, k: usize) -> Result<Vec<Scored>> {
        let url = self.pgurl().full.clone();
        let known = self.snap().map(|s| s.data);
        self.qc(|c| search::bm25(c, &url, known, query, k))
    }

    fn vector_search(&self, kind: VectorKind, query: &[f32], k: usize) -> Result<Vec<Scored>> {
        let url = self.pgurl().full.clone();
        let snap = self.snap();
        let q = vec![query.to_vec()];
        Ok(self.q(|c| search::vector_search(c, &url, snap.as_ref(), kind, &q, k, false))?.pop().unwrap_or_default())
    }

    fn vector_search_many(&self, kind: VectorKind, queries: &[Vec<f32>], k: usize) -> Result<Vec<Vec<Scored>>> {
        let url = self.pgurl().full.clone();
        let snap = self.snap();
        self.q(|c| search::vector_search(c, &url, snap.as_ref(), kind, queries, k, true))
    }

    fn vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<(String, Vec<f32>)>> {
        self.qc(|c| {
            let rows =
                c.query("SELECT id, vec FROM vectors WHERE kind = $1 AND id = ANY($2)", &[&kind.as_str(), &ids])?;
            in_order(ids, rows, |r| Ok((r.get::<_, String>(0), r.try_get::<_, PgVector>(1)?.0)))
        })
    }

    fn missing_vectors(&self, kind: VectorKind, ids: &[String]) -> Result<Vec<String>> {
        self.q(|c| {
            let have: std::collections::HashSet<String> = c
                .query("SELECT id FROM vectors WHERE kind = $1 AND id = ANY($2)", &[&kind.as_str(), &ids])?
                .iter()
                .map(|r| r.get(0))
                .collect();
            Ok(ids.iter().filter(|id| !have.contains(*id)).cloned().collect())
        })
    }

    fn synonyms_dirty(&self) -> Result<bool> {
        Ok(self.meta("synonyms_dirty")?.as_deref() == Some("1"))
    }

    fn summary_tasks(&self, min_descriptions: usize) -> Result<Vec<SummaryTask>> {
        if min_descriptions == 0 {
            return Ok(Vec::new());
        }
        self.q(|c| summary_tasks(c, min_descriptions))
    }

    fn extraction_failures(&self) -> Result<Vec<ExtractionFailure>> {
        self.q(|c| {
            Ok(c.query("SELECT chunk_id, doc_id, error, attempts FROM extraction_failures ORDER BY seq", &[])?
                .iter()
                .map(failure_row)
                .collect())
        })
    }

    fn graph_data(&self) -> Result<GraphData> {
        // One snapshot for all seven reads.
        self.q(|c| in_snapshot(c, |tx| super::graph_read::graph_data(tx)))
    }

    fn reads_by_id(&self) -> bool {
        true
    }

    fn neighbourhood(&self, entity_ids: &[String]) -> Result<rhizome_core::Neighbourhood> {
        self.q(|c| in_snapshot(c, |tx| super::neighbourhood::neighbourhood(tx, entity_ids, true)))
    }

    fn neighbourhood_rows(&self, entity_ids: &[String]) -> Result<GraphData> {
        self.q(|c| in_snapshot(c, |tx| Ok(super::neighbourhood::neighbourhood(tx, entity_ids, false)?.graph)))
    }

    fn walk_edges(&self, entity_ids: &[String], chunk_ids: &[String], among: bool) -> Result<GraphData> {
        self.q(|c| super::walk::walk_edges(c, entity_ids, chunk_ids, among))
    }

    fn scope_graph(&self, docs: &[String], support: &rhizome_core::DocSupport) -> Result<GraphData> {
        self.q(|c| in_snapshot(c, |tx| super::scoped::scope_graph(tx, docs, support)))
    }

    fn chunk_links(&self, chunk_ids: &[String]) -> Result<GraphData> {
        self.q(|c| in_snapshot(c, |tx| super::walk::chunk_links(tx, chunk_ids)))
    }

    fn chunk_titles(&self, chunk_ids: &[String]) -> Result<Vec<(String, String)>> {
        self.q(|c| super::walk::chunk_titles(c, chunk_ids))
    }

    fn fact_rows(&self, fact_ids: &[String]) -> Result<Vec<FactRow>> {
        self.q(|c| super::walk::fact_rows(c, fact_ids))
    }

    fn entity_rows(&self) -> Result<Vec<EntityRow>> {
        self.q(super::graph_read::entity_rows)
    }

    fn entity_degrees(&self, entity_ids: &[String]) -> Result<Vec<(String, u32)>> {
        self.q(|c| super::neighbourhood::entity_degrees(c, entity_ids))
    }

    fn document_chunk_rows(&self, doc_id: &str) -> Result<Vec<rhizome_core::ChunkRow>> {
        self.q(|c| super::neighbourhood::document_chunk_rows(c, doc_id))
    }

    fn entity_count(&self) -> Result<u64> {
        self.count("entities")
    }

    fn fact_count(&self) -> Result<u64> {
        self.count("facts")
    }

    fn chunk_count(&self) -> Result<u64> {
        self.count("chunks")
    }

    fn freshness(&self) -> Result<(u64, u64)> {
        let s = self.qc(snapshot)?;
        let out = (s.graph, s.reports.unwrap_or(0));
        self.set_snap(Some(s));
        Ok(out)
    }

    fn graph_version(&self) -> Result<u64> {
        if let Some(s) = self.snap() {
            return Ok(s.graph);
        }
        self.q(|c| schema::counter(c, "graph_version"))
    }

    fn communities(&self) -> Result<Vec<rhizome_core::Community>> {
        self.q(communities::communities)
    }

    fn community(&self, id: &str) -> Result<Option<rhizome_core::Community>> {
        self.q(|c| communities::community(c, id))
    }

    fn communities_version(&self) -> Result<Option<u64>> {
        Ok(self.meta("communities_version")?.and_then(|v| v.parse().ok()))
    }

    fn reports_version(&self) -> Result<Option<u64>> {
        if let Some(s) = self.snap() {
            return Ok(s.reports);
        }
        Ok(self.meta("reports_version")?.and_then(|v| v.parse().ok()))
    }

    fn community_reports(&self) -> Result<Vec<rhizome_core::CommunityReport>> {
        self.q(communities::reports)
    }

    fn communities_of(&self, entity_ids: &[String]) -> Result<Vec<rhizome_core::Community>> {
        self.q(|c| communities::communities_of(c, entity_ids))
    }

    fn leaf_communities(&self, community_ids: &[String]) -> Result<Vec<String>> {
        self.q(|c| communities::leaves(c, community_ids))
    }

    fn community_reports_of(&self, community_ids: &[String]) -> Result<Vec<rhizome_core::CommunityReport>> {
        self.q(|c| communities::reports_of(c, community_ids))
    }

    fn community_report_count(&self) -> Result<u64> {
        self.q(communities::report_count)
    }

    fn covariates_of(&self, entity_ids: &[String]) -> Result<Vec<rhizome_core::Covariate>> {
        self.q(|c| communities::covariates_of(c, entity_ids))
    }

    fn document_batch(&self, doc_id: &str) -> Result<Option<rhizome_core::WriteBatch>> {
        self.q(|c| export::document_batch(c, doc_id))
    }

    fn entity_summaries(&self) -> Result<Vec<(String, String, String)>> {
        self.q(export::entity_summaries)
    }

    fn support_rows(&self, entity_ids: &[String], relation_ids: &[String]) -> Result<rhizome_core::SupportRows> {
        self.q(|c| super::tags::support_rows(c, entity_ids, relation_ids))
    }

    fn tagged_documents(&self, key: &str, from: &str, to: Option<&str>) -> Result<Vec<String>> {
        self.q(|c| super::tags::tagged(c, key, from, to))
    }

    fn document_names(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        self.q(|c| super::tags::names(c, prefix))
    }

    fn supported_by(&self, doc_ids: &[String]) -> Result<rhizome_core::DocSupport> {
        self.q(|c| super::tags::supported_by(c, doc_ids))
    }
}
