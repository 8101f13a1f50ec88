//! Deleting what a document supports, and cleaning up after a writer that died mid-batch.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rhizome_core::{DeleteReport, FactRecord, MentionRecord, Relation, RelationRecord, Result, VectorKind};

use super::keys::{cmd, sentences_key, vec_key, BM25_ID, BM25_LEN, COVARIATES, FAILURES, PARTIAL, PENDING, SUMMARIES};
use super::support::Row;
use super::write::{json, s};
use super::{Cell, FalkorStore};
use crate::aggregate::Rekeys;

/// The items of a Redis list reply.
fn parse(v: &super::Value) -> Vec<Vec<u8>> {
    match v {
        super::Value::Array(xs) => xs
            .iter()
            .filter_map(|x| match x {
                super::Value::Bytes(b) => Some(b.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A document's list of support rows (JSON) with the rows `f` changes: `f` gives `None`
/// for a row it leaves, `Some(None)` for a row it drops and `Some(Some(row))` for a row it
/// rewrites. Also whether any changed.
fn rewrite<T: serde::de::DeserializeOwned + serde::Serialize>(
    items: Vec<Vec<u8>>,
    mut f: impl FnMut(Row<T>) -> Option<Option<Row<T>>>,
) -> (Vec<Vec<u8>>, bool) {
    let mut changed = false;
    let out = items
        .into_iter()
        .filter_map(|body| match serde_json::from_slice::<Row<T>>(&body).ok().and_then(&mut f) {
            None => Some(body),
            Some(row) => {
                changed = true;
                row.map(|r| json(&r))
            }
        })
        .collect();
    (out, changed)
}

/// What a re-keying leaves to refresh (see [`FalkorStore::refresh`]).
#[derive(Default)]
struct Touched {
    entities: BTreeSet<String>,
    relations: BTreeSet<String>,
    facts: BTreeSet<String>,
    pairs: BTreeSet<(String, String)>,
    hints: HashMap<String, Relation>,
}

impl FalkorStore {
    /// The support that remains of the entities `doc_id` supports once its rows go: (name,
    /// count) rows by entity id.
    pub(crate) fn remaining_names(&self, doc_id: &str) -> Result<BTreeMap<String, Vec<(String, i64)>>> {
        let list = self.pipe(vec![self.lrange("dm", doc_id)])?;
        let ids: BTreeSet<String> = list
            .first()
            .map(parse)
            .unwrap_or_default()
            .iter()
            .filter_map(|b| serde_json::from_slice::<Row<MentionRecord>>(b).ok())
            .map(|m| m.rec.entity_id)
            .collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let mut out: BTreeMap<String, Vec<(String, i64)>> = BTreeMap::new();
        for (id, rows) in ids.iter().zip(self.hvals_rows::<MentionRecord>("es", &ids)?) {
            for m in rows.into_iter().filter(|m| m.rec.doc_id != doc_id) {
                out.entry(id.to_string()).or_default().push((m.rec.name, m.rec.count as i64));
            }
        }
        Ok(out)
    }

    /// Move the re-keyed entities' support rows (under their aggregate and in their
    /// document's lists), the relation and fact rows naming them and their summaries to the
    /// new ids ([`Rekeys`]). Only documents with support rows of a re-keyed entity hold
    /// relation or fact rows naming it (their endpoints are mentions too).
    fn rekey(&self, r: &Rekeys) -> Result<Touched> {
        let mut t = Touched::default();
        if r.is_empty() {
            return Ok(t);
        }
        let old: Vec<&str> = r.keys.keys().map(String::as_str).collect();
        let docs: BTreeSet<String> =
            self.hvals_rows::<MentionRecord>("es", &old)?.into_iter().flatten().map(|m| m.rec.doc_id).collect();
        let mut summaries = vec![b"HMGET".to_vec(), self.key(SUMMARIES)];
        summaries.extend(old.iter().map(|i| i.as_bytes().to_vec()));
        let summaries = self.pipe(vec![summaries])?.pop().map(|v| v.into_array()).unwrap_or_default();
        let mut cmds = Vec::new();
        // A summary of the same descriptions holds under the new id (unless it has one).
        for ((_, new), summary) in r.keys.iter().zip(summaries) {
            if let super::Value::Bytes(b) = summary {
                cmds.push(cmd([b"HSETNX".to_vec(), self.key(SUMMARIES), new.clone().into_bytes(), b]));
            }
            t.entities.insert(new.clone());
        }
        let hash = |prefix: &str, id: &str| self.key(&format!("{prefix}:{id}"));
        for doc in &docs {
            let lists = self.pipe(vec![self.lrange("dm", doc), self.lrange("dr", doc), self.lrange("df", doc)])?;
            let mentions = rewrite(parse(&lists[0]), |mut m: Row<MentionRecord>| {
                if !r.has(&m.rec.entity_id) {
                    return None;
                }
                let seq = m.seq.to_string().into_bytes();
                cmds.push(cmd([b"HDEL".to_vec(), hash("es", &m.rec.entity_id), seq.clone()]));
                m.rec.entity_id = r.map(&m.rec.entity_id).to_string();
                cmds.push(cmd([b"HSET".to_vec(), hash("es", &m.rec.entity_id), seq, json(&m)]));
                if let Some(c) = &m.rec.chunk_id {
                    t.pairs.insert((m.rec.entity_id.clone(), c.clone()));
                }
                Some(Some(m))
            });
            let relations = rewrite(parse(&lists[1]), |mut x: Row<RelationRecord>| {
                let rel = x.rec.relation.clone();
                if !r.has(&rel.source_id) && !r.has(&rel.target_id) {
                    return None;
                }
                let seq = x.seq.to_string().into_bytes();
                cmds.push(cmd([b"HDEL".to_vec(), hash("rs", &rel.id), seq.clone()]));
                t.relations.insert(rel.id.clone());
                let moved = r.relation(&rel.source_id, &rel.rel_type, &rel.target_id).map(|(source, target, id)| {
                    (x.rec.relation.source_id, x.rec.relation.target_id) = (source, target);
                    x.rec.relation.id = id.clone();
                    cmds.push(cmd([b"HSET".to_vec(), hash("rs", &id), seq, json(&x)]));
                    t.relations.insert(id);
                    x
                });
                t.hints.insert(rel.id.clone(), rel);
                Some(moved)
            });
            let facts = rewrite(parse(&lists[2]), |mut f: Row<FactRecord>| {
                if !r.has(&f.rec.fact.subject_id) && !r.has(&f.rec.fact.object_id) {
                    return None;
                }
                f.rec.fact.subject_id = r.map(&f.rec.fact.subject_id).to_string();
                f.rec.fact.object_id = r.map(&f.rec.fact.object_id).to_string();
                let seq = f.seq.to_string().into_bytes();
                cmds.push(cmd([b"HSET".to_vec(), hash("fs", &f.rec.fact.id), seq, json(&f)]));
                t.facts.insert(f.rec.fact.id.clone());
                Some(Some(f))
            });
            for (list, (items, changed)) in [("dm", mentions), ("dr", relations), ("df", facts)] {
                if changed {
                    let key = hash(list, doc);
                    cmds.push(cmd([b"DEL".to_vec(), key.clone()]));
                    if !items.is_empty() {
                        let mut push = vec![b"RPUSH".to_vec(), key];
                        push.extend(items);
                        cmds.push(push);
                    }
                }
            }
        }
        self.pipe(cmds)?;
        Ok(t)
    }

    /// Remove everything `doc_id` supports (see `StoreWrite::delete_document`), re-keying
    /// the entities of `rekeys`; also used, with no re-keying, to clean up after a writer
    /// that died mid-batch.
    pub(crate) fn delete_records(&self, doc_id: &str, rekeys: &Rekeys) -> Result<DeleteReport> {
        let mut report = DeleteReport::default();
        let lists = self.pipe(vec![
            self.lrange("dm", doc_id),
            self.lrange("dr", doc_id),
            self.lrange("df", doc_id),
            self.lrange("dc", doc_id),
        ])?;
        let mentions: Vec<Row<MentionRecord>> =
            parse(&lists[0]).iter().filter_map(|b| serde_json::from_slice(b).ok()).collect();
        let relations: Vec<Row<RelationRecord>> =
            parse(&lists[1]).iter().filter_map(|b| serde_json::from_slice(b).ok()).collect();
        let facts: Vec<Row<FactRecord>> =
            parse(&lists[2]).iter().filter_map(|b| serde_json::from_slice(b).ok()).collect();
        let covariate_seqs = parse(&lists[3]);
        let chunks = self.rop(&[("d", s(doc_id))], "MATCH (c:Chunk {doc_id: $d}) RETURN c.id, c.seq")?;
        report.chunks = chunks.len() as u64;
        let mut cmds = Vec::new();
        // BM25 postings of the chunks.
        let seqs: Vec<String> = chunks.iter().map(|r| r.get(1).map(Cell::int).unwrap_or(0).to_string()).collect();
        let term_lists =
            self.pipe(seqs.iter().map(|q| cmd([b"GET".to_vec(), self.key(&format!("bm25:terms:{q}"))])).collect())?;
        for (q, terms) in seqs.iter().zip(term_lists) {
            let terms: Vec<String> = terms.as_str().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
            for t in terms {
                cmds.push(cmd([b"HDEL".to_vec(), self.key(&format!("bm25:t:{t}")), q.clone().into_bytes()]));
            }
            cmds.push(cmd([b"HDEL".to_vec(), self.key(BM25_LEN), q.clone().into_bytes()]));
            cmds.push(cmd([b"HDEL".to_vec(), self.key(BM25_ID), q.clone().into_bytes()]));
            cmds.push(cmd([b"DEL".to_vec(), self.key(&format!("bm25:terms:{q}"))]));
        }
        for r in &chunks {
            cmds.push(cmd([b"HDEL".to_vec(), self.key(&vec_key(VectorKind::Chunk)), r[0].str().into_bytes()]));
        }
        // Sentence vectors of the chunks, by the set each chunk keeps of their ids.
        let sets: Vec<Vec<u8>> = chunks.iter().map(|r| self.key(&sentences_key(&r[0].str()))).collect();
        let members = self.pipe(sets.iter().map(|k| cmd([b"SMEMBERS".to_vec(), k.clone()])).collect())?;
        for (set, ids) in sets.into_iter().zip(members) {
            let ids = parse(&ids);
            if !ids.is_empty() {
                let mut c = vec![b"HDEL".to_vec(), self.key(&vec_key(VectorKind::Sentence))];
                c.extend(ids);
                cmds.push(c);
            }
            cmds.push(cmd([b"DEL".to_vec(), set]));
        }
        // Support rows.
        let (mut entities, mut rels, mut fact_ids) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
        let mut hints = HashMap::new();
        for m in &mentions {
            cmds.push(cmd([
                b"HDEL".to_vec(),
                self.key(&format!("es:{}", m.rec.entity_id)),
                m.seq.to_string().into_bytes(),
            ]));
            entities.insert(m.rec.entity_id.clone());
        }
        for r in &relations {
            cmds.push(cmd([
                b"HDEL".to_vec(),
                self.key(&format!("rs:{}", r.rec.relation.id)),
                r.seq.to_string().into_bytes(),
            ]));
            rels.insert(r.rec.relation.id.clone());
            hints.insert(r.rec.relation.id.clone(), r.rec.relation.clone());
        }
        for f in &facts {
            cmds.push(cmd([
                b"HDEL".to_vec(),
                self.key(&format!("fs:{}", f.rec.fact.id)),
                f.seq.to_string().into_bytes(),
            ]));
            fact_ids.insert(f.rec.fact.id.clone());
        }
        for q in covariate_seqs {
            cmds.push(cmd([b"HDEL".to_vec(), self.key(COVARIATES), q]));
        }
        for k in ["dm", "dr", "df", "dc"] {
            cmds.push(cmd([b"DEL".to_vec(), self.key(&format!("{k}:{doc_id}"))]));
        }
        cmds.push(cmd([b"HDEL".to_vec(), self.key(PARTIAL), doc_id.as_bytes().to_vec()]));
        // Extraction failures of the document.
        for (chunk, f) in self.failure_rows()? {
            if f.doc_id == doc_id {
                cmds.push(cmd([b"HDEL".to_vec(), self.key(FAILURES), chunk.into_bytes()]));
            }
        }
        self.pipe(cmds)?;
        self.qp(&[("d", s(doc_id))], "MATCH (c:Chunk {doc_id: $d}) DETACH DELETE c")?;
        let t = self.rekey(rekeys)?;
        entities.extend(t.entities);
        rels.extend(t.relations);
        fact_ids.extend(t.facts);
        hints.extend(t.hints);
        let r = self.refresh(&entities, &rels, &fact_ids, &t.pairs, &hints)?;
        let vectors: Vec<_> =
            rekeys.vectors.iter().map(|(id, v)| (VectorKind::Entity, id.clone(), v.clone())).collect();
        self.write_vectors(&vectors)?;
        report.entities = r.removed_entities;
        report.relations = r.removed_relations;
        report.facts = r.removed_facts;
        let gone = self.qp(
            &[("d", s(doc_id))],
            "MATCH (d:Document {id: $d}) WITH d, d.id AS id DETACH DELETE d RETURN count(id)",
        )?;
        report.documents = gone.first().and_then(|r| r.first()).map(Cell::int).unwrap_or(0).max(0) as u64;
        self.untag(&[doc_id.to_string()])?;
        if report.entities > 0 || r.created_entities > 0 {
            self.meta_set("synonyms_dirty", "1")?;
        }
        Ok(report)
    }

    /// Documents a writer left half-written (it died mid-batch): remove what they support.
    pub(crate) fn clean_pending(&mut self) -> Result<()> {
        let docs = self.redis(&[b"SMEMBERS", &self.key(PENDING)])?.into_array();
        for d in docs.iter().filter_map(super::Value::as_str) {
            self.delete_records(&d, &Rekeys::default())?;
            self.redis(&[b"SREM", &self.key(PENDING), d.as_bytes()])?;
            self.pipe(vec![self.bump_graph_version_cmd()])?;
        }
        self.invalidate();
        Ok(())
    }
}
