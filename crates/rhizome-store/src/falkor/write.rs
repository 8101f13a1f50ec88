//! [`StoreWrite`] for [`FalkorStore`]: batches written in order (documents, chunks,
//! support, aggregates, vectors) between the `pending` marker and the graph-version bump
//! (see the module comment of [`super`]); deletion by support.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::AtomicBool;

use rhizome_core::{
    DeleteReport, EmbedNames, Error, FactRecord, MentionRecord, RelationRecord, Result, StoreRead, StoreWrite,
    VectorKind, WriteBatch,
};

use super::keys::{cmd, sentences_key, vec_key, BM25_ID, BM25_LEN, COVARIATES, FAILURES, PARTIAL, PENDING, SUMMARIES};
use super::support::Row;
use super::{FalkorStore, Lit};
use crate::vectors::encode;

pub(crate) fn json<T: serde::Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

pub(crate) fn s(x: &str) -> Lit {
    Lit::Str(x.to_string())
}

/// What a refresh of aggregates did.
#[derive(Default)]
pub(crate) struct Refreshed {
    pub created_entities: u64,
    pub removed_entities: u64,
    pub removed_relations: u64,
    pub removed_facts: u64,
}

/// A failure record as stored (with the sequence number that orders them).
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct FailureRow {
    pub seq: i64,
    pub doc_id: String,
    pub error: String,
    pub attempts: u32,
}

impl FalkorStore {
    pub(crate) fn hvals_rows<T: serde::de::DeserializeOwned>(
        &self,
        prefix: &str,
        ids: &[&str],
    ) -> Result<Vec<Vec<Row<T>>>> {
        let cmds = ids.iter().map(|id| cmd([b"HVALS".to_vec(), self.key(&format!("{prefix}:{id}"))])).collect();
        Ok(self
            .pipe(cmds)?
            .into_iter()
            .map(|v| {
                v.into_array()
                    .iter()
                    .filter_map(|x| match x {
                        super::Value::Bytes(b) => serde_json::from_slice(b).ok(),
                        _ => None,
                    })
                    .collect()
            })
            .collect())
    }

    pub(crate) fn failure_rows(&self) -> Result<Vec<(String, FailureRow)>> {
        let v = self.redis(&[b"HGETALL", &self.key(FAILURES)])?.into_array();
        Ok(v.chunks_exact(2)
            .filter_map(|kv| Some((kv[0].as_str()?, serde_json::from_str(&kv[1].as_str()?).ok()?)))
            .collect())
    }

    pub(crate) fn write_vectors(&self, vectors: &[(VectorKind, String, Vec<f32>)]) -> Result<()> {
        let dim: Option<usize> = self.meta_get("embedding_dim")?.and_then(|d| d.parse().ok());
        let mut cmds = Vec::new();
        let mut by_label: BTreeMap<&str, Vec<Lit>> = BTreeMap::new();
        for (kind, id, v) in vectors {
            // A vector of another dimension is refused by the query below (FalkorDB's
            // vector index would skip it silently): only good ones are kept here.
            if dim.is_none_or(|d| d == v.len()) {
                cmds.push(cmd([b"HSET".to_vec(), self.key(&vec_key(*kind)), id.clone().into_bytes(), encode(v)]));
                if *kind == VectorKind::Sentence {
                    let chunk = id.split('#').next().unwrap_or(id);
                    cmds.push(cmd([b"SADD".to_vec(), self.key(&sentences_key(chunk)), id.clone().into_bytes()]));
                }
            }
            let label = match kind {
                VectorKind::Chunk => "Chunk",
                VectorKind::Entity => "__Entity__",
                VectorKind::Fact => "Fact",
                VectorKind::Report | VectorKind::Sentence => continue,
            };
            by_label.entry(label).or_default().push(Lit::Map(vec![("id", s(id)), ("v", Lit::Floats(v.clone()))]));
        }
        self.pipe(cmds)?;
        let check = dim.map_or(String::new(), |d| {
            format!("WITH n, r WHERE 1 / (CASE WHEN size(r.v) = {d} THEN 1 ELSE 0 END) = 1 ")
        });
        for (label, rows) in &by_label {
            let len = |i: usize| match rows.get(i) {
                Some(Lit::Map(kv)) => match kv.get(1) {
                    Some((_, Lit::Floats(v))) => v.len(),
                    _ => 0,
                },
                _ => 0,
            };
            self.unwind(
                rows,
                &format!("UNWIND $rows AS r MATCH (n:`{label}` {{id: r.id}}) {check}SET n.embedding = vecf32(r.v)"),
                &|i| {
                    format!(
                        "the vector of {label} {:?} (dimension {}, the index holds {})",
                        rows.get(i).map(lit_id).unwrap_or_default(),
                        len(i),
                        dim.unwrap_or(0)
                    )
                },
            )?;
        }
        Ok(())
    }

    fn write_batch_inner(&self, b: &WriteBatch) -> Result<bool> {
        self.rename_documents(&b.renames)?;
        // Which documents are there already (and not being written in parts).
        let doc_ids: Vec<Lit> = b.documents.iter().map(|d| s(&d.id)).collect();
        let existing: HashSet<String> = if doc_ids.is_empty() {
            HashSet::new()
        } else {
            self.rop(&[("ids", Lit::List(doc_ids))], "UNWIND $ids AS id MATCH (d:Document {id: id}) RETURN d.id")?
                .into_iter()
                .map(|r| r[0].str())
                .collect()
        };
        let partial: HashSet<String> =
            self.redis(&[b"HKEYS", &self.key(PARTIAL)])?.into_array().iter().filter_map(super::Value::as_str).collect();
        let skip: HashSet<&str> = b
            .documents
            .iter()
            .map(|d| d.id.as_str())
            .filter(|d| existing.contains(*d) && !partial.contains(*d))
            .collect();
        let live: Vec<&str> = b.documents.iter().map(|d| d.id.as_str()).filter(|d| !skip.contains(d)).collect();
        if !live.is_empty() {
            let mut c = vec![b"SADD".to_vec(), self.key(PENDING)];
            c.extend(live.iter().map(|d| d.as_bytes().to_vec()));
            self.pipe(vec![c])?;
        }
        // Documents.
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |t| t.as_secs() as i64);
        let new_docs: Vec<Lit> = b
            .documents
            .iter()
            .filter(|d| !existing.contains(&d.id))
            .map(|d| {
                Lit::Map(vec![
                    ("id", s(&d.id)),
                    ("source", s(&d.source)),
                    ("title", s(&d.title)),
                    ("text", s(&d.text)),
                    ("lang", s(rhizome_core::lang::detect_language(&d.text).code())),
                    ("at", Lit::Int(now)),
                    ("pages", crate::pages_json(d).map_or(Lit::Null, Lit::Str)),
                    ("unit", d.pages.as_ref().map_or(Lit::Null, |p| s(&p.unit))),
                    ("digest", super::aliases::digest_lit(&d.text)),
                    ("meta", crate::meta_json(&d.meta).map_or(Lit::Null, Lit::Str)),
                ])
            })
            .collect();
        self.unwind(
            &new_docs,
            "UNWIND $rows AS r CREATE (:Document {id: r.id, source: r.source, title: r.title, \
            text: r.text, language: r.lang, indexed_at: r.at, pages: r.pages, page_unit: r.unit, digest: r.digest, \
            meta: r.meta})",
            &|i| format!("document {:?}", new_docs.get(i).map(lit_id).unwrap_or_default()),
        )?;
        let new: Vec<&rhizome_core::Document> = b.documents.iter().filter(|d| !existing.contains(&d.id)).collect();
        self.documents_written(&new.iter().map(|d| d.source.as_str()).collect::<Vec<_>>())?;
        self.retag(&new.iter().map(|d| d.id.clone()).collect::<Vec<_>>())?;
        // Chunks (those not there yet), with PART_OF, NEXT_CHUNK and BM25 postings.
        let cand: Vec<&rhizome_core::Chunk> = b.chunks.iter().filter(|c| !skip.contains(c.doc_id.as_str())).collect();
        let have: HashSet<String> = if cand.is_empty() {
            HashSet::new()
        } else {
            self.rop(
                &[("ids", Lit::List(cand.iter().map(|c| s(&c.id)).collect()))],
                "UNWIND $ids AS id MATCH (c:Chunk {id: id}) RETURN c.id",
            )?
            .into_iter()
            .map(|r| r[0].str())
            .collect()
        };
        let mut seen = HashSet::new();
        let new_chunks: Vec<&rhizome_core::Chunk> =
            cand.into_iter().filter(|c| !have.contains(&c.id) && seen.insert(c.id.as_str())).collect();
        let first = self.seqs(new_chunks.len())?;
        let titles: HashMap<&str, &str> = b.documents.iter().map(|d| (d.id.as_str(), d.title.as_str())).collect();
        let mut rows = Vec::new();
        let mut cmds = Vec::new();
        for (i, c) in new_chunks.iter().enumerate() {
            let q = first + i as i64;
            rows.push(Lit::Map(vec![
                ("id", s(&c.id)),
                ("doc", s(&c.doc_id)),
                ("o", Lit::Int(c.ordinal as i64)),
                ("text", s(&c.text)),
                ("tokens", Lit::Int(c.tokens as i64)),
                ("seq", Lit::Int(q)),
                ("cs", Lit::Int(c.start as i64)),
                ("ce", Lit::Int(c.end as i64)),
                ("pf", c.pages.map_or(Lit::Null, |p| Lit::Int(p.first as i64))),
                ("pl", c.pages.map_or(Lit::Null, |p| Lit::Int(p.last as i64))),
            ]));
            let title = titles.get(c.doc_id.as_str()).copied().unwrap_or("");
            let (tf, len) = crate::bm25::term_frequencies(&crate::bm25::chunk_text(title, &c.text));
            let qs = q.to_string().into_bytes();
            for (t, n) in &tf {
                cmds.push(cmd([
                    b"HSET".to_vec(),
                    self.key(&format!("bm25:t:{t}")),
                    qs.clone(),
                    n.to_string().into_bytes(),
                ]));
            }
            let terms: Vec<&str> = tf.iter().map(|(t, _)| t.as_str()).collect();
            cmds.push(cmd([b"SET".to_vec(), self.key(&format!("bm25:terms:{q}")), json(&terms)]));
            cmds.push(cmd([b"HSET".to_vec(), self.key(BM25_LEN), qs.clone(), len.to_string().into_bytes()]));
            cmds.push(cmd([b"HSET".to_vec(), self.key(BM25_ID), qs, c.id.clone().into_bytes()]));
        }
        let chunk_name = |i: usize| format!("chunk {:?}", rows.get(i).map(lit_id).unwrap_or_default());
        self.unwind(
            &rows,
            "UNWIND $rows AS r MATCH (d:Document {id: r.doc}) CREATE (c:Chunk {id: r.id, doc_id: r.doc, \
            ordinal: r.o, text: r.text, tokens: r.tokens, seq: r.seq, char_start: r.cs, char_end: r.ce, \
            page_first: r.pf, page_last: r.pl})-[:PART_OF]->(d)",
            &chunk_name,
        )?;
        self.unwind(
            &rows,
            "UNWIND $rows AS r MATCH (c:Chunk {id: r.id}) WITH c, r WHERE r.o > 0 \
            MATCH (p:Chunk {doc_id: r.doc}) WHERE p.ordinal = r.o - 1 MERGE (p)-[:NEXT_CHUNK]->(c)",
            &chunk_name,
        )?;
        self.pipe(cmds)?;
        // Support rows, under their aggregate and under their document.
        let mentions: Vec<&MentionRecord> = b.mentions.iter().filter(|m| !skip.contains(m.doc_id.as_str())).collect();
        let relations: Vec<&RelationRecord> =
            b.relations.iter().filter(|r| !skip.contains(r.doc_id.as_str())).collect();
        let facts: Vec<&FactRecord> = b.facts.iter().filter(|f| !skip.contains(f.doc_id.as_str())).collect();
        let covs: Vec<&rhizome_core::CovariateRecord> =
            b.covariates.iter().filter(|c| !skip.contains(c.doc_id.as_str())).collect();
        let mut q = self.seqs(mentions.len() + relations.len() + facts.len() + covs.len())?;
        let mut cmds = Vec::new();
        let (mut entities, mut rels, mut fact_ids, mut pairs) =
            (BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
        let mut put = |agg: String, doc_key: String, body: Vec<u8>, q: i64| {
            if !agg.is_empty() {
                cmds.push(cmd([b"HSET".to_vec(), self.key(&agg), q.to_string().into_bytes(), body.clone()]));
            }
            cmds.push(cmd([b"RPUSH".to_vec(), self.key(&doc_key), body]));
        };
        for m in &mentions {
            put(format!("es:{}", m.entity_id), format!("dm:{}", m.doc_id), json(&Row { seq: q, rec: *m }), q);
            entities.insert(m.entity_id.clone());
            if let Some(c) = &m.chunk_id {
                pairs.insert((m.entity_id.clone(), c.clone()));
            }
            q += 1;
        }
        for r in &relations {
            put(format!("rs:{}", r.relation.id), format!("dr:{}", r.doc_id), json(&Row { seq: q, rec: *r }), q);
            rels.insert(r.relation.id.clone());
            q += 1;
        }
        for f in &facts {
            put(format!("fs:{}", f.fact.id), format!("df:{}", f.doc_id), json(&Row { seq: q, rec: *f }), q);
            fact_ids.insert(f.fact.id.clone());
            q += 1;
        }
        for c in &covs {
            cmds.push(cmd([
                b"HSET".to_vec(),
                self.key(COVARIATES),
                q.to_string().into_bytes(),
                json(&Row { seq: q, rec: *c }),
            ]));
            cmds.push(cmd([b"RPUSH".to_vec(), self.key(&format!("dc:{}", c.doc_id)), q.to_string().into_bytes()]));
            q += 1;
        }
        // Failures, progress of documents in parts, resolved failures.
        let failures = self.failure_rows()?.into_iter().collect::<HashMap<_, _>>();
        for f in b.failures.iter().filter(|f| !skip.contains(f.doc_id.as_str())) {
            let row = match failures.get(&f.chunk_id) {
                Some(old) => FailureRow {
                    seq: old.seq,
                    doc_id: old.doc_id.clone(),
                    error: f.error.clone(),
                    attempts: old.attempts + 1,
                },
                None => FailureRow {
                    seq: self.seqs(1)?,
                    doc_id: f.doc_id.clone(),
                    error: f.error.clone(),
                    attempts: f.attempts.max(1),
                },
            };
            cmds.push(cmd([b"HSET".to_vec(), self.key(FAILURES), f.chunk_id.clone().into_bytes(), json(&row)]));
        }
        for (doc, done) in b.doc_progress.iter().filter(|(d, _)| !skip.contains(d.as_str())) {
            cmds.push(match done {
                Some(n) => {
                    cmd([b"HSET".to_vec(), self.key(PARTIAL), doc.clone().into_bytes(), n.to_string().into_bytes()])
                }
                None => cmd([b"HDEL".to_vec(), self.key(PARTIAL), doc.clone().into_bytes()]),
            });
        }
        for c in &b.resolved_failures {
            cmds.push(cmd([b"HDEL".to_vec(), self.key(FAILURES), c.clone().into_bytes()]));
        }
        self.pipe(cmds)?;
        self.write_aliases(&b.aliases)?;
        // SIMILAR_TO between chunks (as given; the document is chunk a's).
        let sim: Vec<Lit> = b
            .similar
            .iter()
            .map(|(a, bb, sc)| Lit::Map(vec![("a", s(a)), ("b", s(bb)), ("s", Lit::Float(*sc as f64))]))
            .collect();
        self.unwind(
            &sim,
            "UNWIND $rows AS r MATCH (a:Chunk {id: r.a}), (b:Chunk {id: r.b}) \
            MERGE (a)-[x:SIMILAR_TO]->(b) SET x.score = r.s, x.doc_id = a.doc_id",
            &|i| format!("SIMILAR_TO edge {i}"),
        )?;
        let r = self.refresh(&entities, &rels, &fact_ids, &pairs, &HashMap::new())?;
        self.write_vectors(&b.vectors)?;
        // Last step: the batch is complete.
        let mut last = vec![self.bump_graph_version_cmd()];
        if r.created_entities > 0 {
            last.insert(
                0,
                cmd([b"HSET".to_vec(), self.key(super::keys::META), b"synonyms_dirty".to_vec(), b"1".to_vec()]),
            );
        }
        if !live.is_empty() {
            let mut c = vec![b"SREM".to_vec(), self.key(PENDING)];
            c.extend(live.iter().map(|d| d.as_bytes().to_vec()));
            last.push(c);
        }
        let mut multi = vec![cmd([b"MULTI".to_vec()])];
        multi.extend(last);
        multi.push(cmd([b"EXEC".to_vec()]));
        self.pipe(multi)?;
        Ok(true)
    }
}

/// Names row `i` of `rows` in error messages.
pub(crate) fn namer<'a>(what: &'static str, rows: &'a [Lit]) -> impl Fn(usize) -> String + 'a {
    move |i| format!("{what} {:?}", rows.get(i).map(lit_id).unwrap_or_default())
}

/// The `id` (or first) field of a row, for error messages.
pub(crate) fn lit_id(l: &Lit) -> String {
    match l {
        Lit::Str(x) => x.clone(),
        Lit::Map(kv) => kv.first().map(|(_, v)| lit_id(v)).unwrap_or_default(),
        _ => String::new(),
    }
}

impl StoreWrite for FalkorStore {
    fn set_embedding_model(&mut self, model_id: &str, dim: usize) -> Result<()> {
        match self.embedding_model()? {
            Some(m) if m == model_id => self.create_vector_indexes(dim),
            Some(m) => Err(Error::Index {
                path: self.url.display().into(),
                msg: format!(
                    "this index holds vectors of embedding model {m}, not {model_id}; vectors of different models \
                     are never mixed: use --set embed.model={m}, or index into another graph (--store \
                     falkordb://HOST:PORT/OTHER)"
                ),
            }),
            None => {
                self.meta_set("embedding_model", model_id)?;
                self.meta_set("embedding_dim", &dim.to_string())?;
                self.create_vector_indexes(dim)
            }
        }
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.meta_set(key, value)
    }

    fn write_batch(&mut self, batch: &WriteBatch) -> Result<()> {
        let r = self.write_batch_inner(batch);
        self.invalidate();
        r?;
        self.take_failed()
    }

    fn delete_document(&mut self, doc_id: &str, embed: EmbedNames<'_>) -> Result<DeleteReport> {
        let rekeys = crate::aggregate::Rekeys::plan(&self.remaining_names(doc_id)?, embed)?;
        self.redis(&[b"SADD", &self.key(PENDING), doc_id.as_bytes()])?;
        let r = self.delete_records(doc_id, &rekeys).and_then(|r| self.delete_aliases(doc_id).map(|()| r));
        if r.is_ok() {
            self.pipe(vec![
                cmd([b"SREM".to_vec(), self.key(PENDING), doc_id.as_bytes().to_vec()]),
                self.bump_graph_version_cmd(),
            ])?;
        }
        self.invalidate();
        let r = r?;
        self.take_failed()?;
        Ok(r)
    }

    fn set_entity_summary(&mut self, entity_id: &str, fingerprint: &str, summary: &str) -> Result<()> {
        self.redis(&[b"HSET", &self.key(SUMMARIES), entity_id.as_bytes(), &json(&(fingerprint, summary))])?;
        let one: BTreeSet<String> = [entity_id.to_string()].into();
        self.refresh(&one, &BTreeSet::new(), &BTreeSet::new(), &BTreeSet::new(), &HashMap::new())?;
        self.invalidate();
        Ok(())
    }

    fn set_document_meta(&mut self, metas: &[(String, rhizome_core::DocumentMeta)]) -> Result<u64> {
        let mut n = 0;
        for part in metas.chunks(500) {
            let rows: Vec<Lit> = part
                .iter()
                .map(|(id, m)| Lit::Map(vec![("id", s(id)), ("meta", crate::meta_json(m).map_or(Lit::Null, Lit::Str))]))
                .collect();
            n += self
                .qp(
                    &[("rows", Lit::List(rows))],
                    "UNWIND $rows AS r MATCH (d:Document {id: r.id}) SET d.meta = r.meta RETURN d.id",
                )?
                .len() as u64;
            self.retag(&part.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>())?;
        }
        Ok(n)
    }

    fn rebuild_synonyms(&mut self, top_k: usize, threshold: f32, cancel: &AtomicBool) -> Result<u64> {
        let seen = self.graph_version()?;
        let m = self.matrix(VectorKind::Entity)?;
        let pairs = m.knn_pairs(top_k, threshold, cancel).ok_or(Error::Cancelled)?;
        let edges: Vec<(String, String, f32)> =
            pairs.iter().map(|(i, j, sc)| (m.ids[*i].clone(), m.ids[*j].clone(), *sc)).collect();
        let now = self.graph_version()?;
        self.replace_synonyms(&edges, now == seen)?;
        Ok(pairs.len() as u64)
    }

    fn set_synonyms(&mut self, edges: &[(String, String, f32)]) -> Result<()> {
        self.replace_synonyms(edges, true)
    }

    fn replace_communities(&mut self, communities: &[rhizome_core::Community], graph_version: u64) -> Result<()> {
        let r = self.replace_communities_impl(communities, graph_version);
        self.invalidate();
        r
    }

    fn put_reports(&mut self, reports: &[rhizome_core::CommunityReport], vectors: &[(String, Vec<f32>)]) -> Result<()> {
        let r = self.put_reports_impl(reports, vectors);
        self.invalidate();
        r
    }

    fn set_reports_version(&mut self, graph_version: u64) -> Result<()> {
        self.meta_set("reports_version", &graph_version.to_string())
    }
}

impl FalkorStore {
    fn replace_synonyms(&mut self, edges: &[(String, String, f32)], clean: bool) -> Result<()> {
        self.q("MATCH (:__Entity__)-[s:SYNONYM]->(:__Entity__) DELETE s")?;
        let rows: Vec<Lit> = edges
            .iter()
            .map(|(a, b, sc)| Lit::Map(vec![("a", s(a)), ("b", s(b)), ("s", Lit::Float(*sc as f64))]))
            .collect();
        self.unwind(
            &rows,
            "UNWIND $rows AS r MATCH (a:__Entity__ {id: r.a}), (b:__Entity__ {id: r.b}) \
            MERGE (a)-[x:SYNONYM]->(b) SET x.score = r.s",
            &|i| format!("SYNONYM edge {:?}", edges.get(i)),
        )?;
        let mut cmds = Vec::new();
        if clean {
            cmds.push(cmd([b"HSET".to_vec(), self.key(super::keys::META), b"synonyms_dirty".to_vec(), b"0".to_vec()]));
        }
        cmds.push(self.bump_graph_version_cmd());
        self.pipe(cmds)?;
        self.invalidate();
        self.take_failed()
    }
}
