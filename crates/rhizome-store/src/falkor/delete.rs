//! Deleting what a document supports, and cleaning up after a writer that died mid-batch.

use std::collections::{BTreeSet, HashMap};

use rhizome_core::{DeleteReport, FactRecord, MentionRecord, RelationRecord, Result, VectorKind};

use super::keys::{cmd, sentences_key, vec_key, BM25_ID, BM25_LEN, COVARIATES, FAILURES, PARTIAL, PENDING};
use super::support::Row;
use super::write::s;
use super::{Cell, FalkorStore};

impl FalkorStore {
    /// Remove everything `doc_id` supports (see `StoreWrite::delete_document`); also used
    /// to clean up after a writer that died mid-batch.
    pub(crate) fn delete_records(&self, doc_id: &str) -> Result<DeleteReport> {
        let mut report = DeleteReport::default();
        let lrange = |k: &str| cmd([b"LRANGE".to_vec(), self.key(&format!("{k}:{doc_id}")), b"0".to_vec(), b"-1".to_vec()]);
        let lists = self.pipe(vec![lrange("dm"), lrange("dr"), lrange("df"), lrange("dc")])?;
        let parse = |v: &super::Value| -> Vec<Vec<u8>> {
            match v {
                super::Value::Array(xs) => xs.iter().filter_map(|x| match x {
                    super::Value::Bytes(b) => Some(b.clone()),
                    _ => None,
                }).collect(),
                _ => Vec::new(),
            }
        };
        let mentions: Vec<Row<MentionRecord>> =
            parse(&lists[0]).iter().filter_map(|b| serde_json::from_slice(b).ok()).collect();
        let relations: Vec<Row<RelationRecord>> =
            parse(&lists[1]).iter().filter_map(|b| serde_json::from_slice(b).ok()).collect();
        let facts: Vec<Row<FactRecord>> = parse(&lists[2]).iter().filter_map(|b| serde_json::from_slice(b).ok()).collect();
        let covariate_seqs = parse(&lists[3]);
        let chunks = self.rop(&[("d", s(doc_id))], "MATCH (c:Chunk {doc_id: $d}) RETURN c.id, c.seq")?;
        report.chunks = chunks.len() as u64;
        let mut cmds = Vec::new();
        // BM25 postings of the chunks.
        let seqs: Vec<String> = chunks.iter().map(|r| r.get(1).map(Cell::int).unwrap_or(0).to_string()).collect();
        let term_lists = self.pipe(seqs.iter().map(|q| cmd([b"GET".to_vec(), self.key(&format!("bm25:terms:{q}"))])).collect())?;
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
            cmds.push(cmd([b"HDEL".to_vec(), self.key(&format!("es:{}", m.rec.entity_id)), m.seq.to_string().into_bytes()]));
            entities.insert(m.rec.entity_id.clone());
        }
        for r in &relations {
            cmds.push(cmd([b"HDEL".to_vec(), self.key(&format!("rs:{}", r.rec.relation.id)), r.seq.to_string().into_bytes()]));
            rels.insert(r.rec.relation.id.clone());
            hints.insert(r.rec.relation.id.clone(), r.rec.relation.clone());
        }
        for f in &facts {
            cmds.push(cmd([b"HDEL".to_vec(), self.key(&format!("fs:{}", f.rec.fact.id)), f.seq.to_string().into_bytes()]));
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
        let r = self.refresh(&entities, &rels, &fact_ids, &BTreeSet::new(), &hints)?;
        report.entities = r.removed_entities;
        report.relations = r.removed_relations;
        report.facts = r.removed_facts;
        let gone = self.qp(&[("d", s(doc_id))], "MATCH (d:Document {id: $d}) WITH d, d.id AS id DETACH DELETE d RETURN count(id)")?;
        report.documents = gone.first().and_then(|r| r.first()).map(Cell::int).unwrap_or(0).max(0) as u64;
        if report.entities > 0 {
            self.meta_set("synonyms_dirty", "1")?;
        }
        Ok(report)
    }

    /// Documents a writer left half-written (it died mid-batch): remove what they support.
    pub(crate) fn clean_pending(&mut self) -> Result<()> {
        let docs = self.redis(&[b"SMEMBERS", &self.key(PENDING)])?.into_array();
        for d in docs.iter().filter_map(super::Value::as_str) {
            self.delete_records(&d)?;
            self.redis(&[b"SREM", &self.key(PENDING), d.as_bytes()])?;
            self.pipe(vec![self.bump_graph_version_cmd()])?;
        }
        self.invalidate();
        Ok(())
    }

}
