//! Listing documents: by title then id, searched in titles, sources and aliases, with
//! their chunk and entity counts.

use std::collections::HashMap;

use rhizome_core::{DocumentSummary, FactRecord, MentionRecord, RelationRecord, Result};

use super::keys::PARTIAL;
use super::rows::ids_lit;
use super::support::rows_of;
use super::FalkorStore;

impl FalkorStore {
    /// All documents (id, title, source, language, indexed_at), by title then id.
    pub(super) fn all_documents(
        &self,
        search: Option<&str>,
    ) -> Result<Vec<(String, String, String, Option<String>, Option<i64>)>> {
        let rows = self.ro("MATCH (d:Document) RETURN d.id, d.title, d.source, d.language, d.indexed_at")?;
        let needle = search.map(|s| s.to_ascii_lowercase());
        let aliases = if needle.is_some() { self.all_aliases()? } else { HashMap::new() };
        let has = |text: &str, n: &str| text.to_ascii_lowercase().contains(n);
        let mut out: Vec<_> = rows
            .into_iter()
            .map(|r| (r[0].str(), r[1].str(), r[2].str(), r[3].opt_str(), r[4].opt_str().map(|_| r[4].int())))
            .filter(|d| {
                needle.as_ref().is_none_or(|n| {
                    has(&d.1, n) || has(&d.2, n) || aliases.get(&d.0).is_some_and(|l| l.iter().any(|a| has(a, n)))
                })
            })
            .collect();
        out.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
        Ok(out)
    }

    /// [`rhizome_core::StoreRead::documents`].
    pub(super) fn document_page(
        &self,
        search: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<DocumentSummary>> {
        let docs: Vec<_> = self.all_documents(search)?.into_iter().skip(offset).take(limit).collect();
        let ids: Vec<String> = docs.iter().map(|d| d.0.clone()).collect();
        let chunks: HashMap<String, u64> = self
            .rop(&[("ids", ids_lit(&ids))], "UNWIND $ids AS id MATCH (c:Chunk {doc_id: id}) RETURN id, count(c)")?
            .into_iter()
            .map(|r| (r[0].str(), r[1].int().max(0) as u64))
            .collect();
        let lists = self.pipe(ids.iter().map(|d| self.lrange("dm", d)).collect())?;
        let partial = self.set_of(PARTIAL, true)?;
        let mut described: HashMap<String, (Option<String>, Option<String>)> = self
            .rop(&[("ids", ids_lit(&ids))], "UNWIND $ids AS id MATCH (d:Document {id: id}) RETURN id, d.pages, d.meta")?
            .into_iter()
            .map(|r| (r[0].str(), (r[1].opt_str(), r[2].opt_str())))
            .collect();
        docs.into_iter()
            .zip(lists)
            .map(|(d, l)| {
                let mut ents: Vec<String> = rows_of::<MentionRecord>(&l).into_iter().map(|r| r.rec.entity_id).collect();
                ents.sort();
                ents.dedup();
                let (pages, meta) = described.remove(&d.0).unwrap_or_default();
                DocumentSummary {
                    pages: crate::page_count(pages),
                    meta: crate::meta_from_json(meta),
                    chunks: chunks.get(&d.0).copied().unwrap_or(0),
                    entities: ents.len() as u64,
                    partial: partial.contains(&d.0),
                    id: d.0,
                    title: d.1,
                    source: d.2,
                    language: d.3,
                    indexed_at: d.4.map(|t| t.max(0) as u64),
                    aliases: Vec::new(),
                }
            })
            .map(|mut d| {
                d.aliases = self.aliases_of(&d.id)?;
                Ok(d)
            })
            .collect()
    }

    /// [`rhizome_core::StoreRead::supported_by`]: the support rows kept under each
    /// document (`dm:`, `dr:`, `df:`), the same lists a deletion reads.
    pub(super) fn support_of(&self, doc_ids: &[String]) -> Result<rhizome_core::DocSupport> {
        let ids = |list: &str, id: &dyn Fn(&super::Value) -> Vec<String>| -> Result<Vec<String>> {
            let lists = self.pipe(doc_ids.iter().map(|d| self.lrange(list, d)).collect())?;
            Ok(lists.iter().flat_map(id).collect())
        };
        Ok(rhizome_core::DocSupport::new(
            ids("dm", &|l| rows_of::<MentionRecord>(l).into_iter().map(|r| r.rec.entity_id).collect())?,
            ids("dr", &|l| rows_of::<RelationRecord>(l).into_iter().map(|r| r.rec.relation.id).collect())?,
            ids("df", &|l| rows_of::<FactRecord>(l).into_iter().map(|r| r.rec.fact.id).collect())?,
        )
        .with_claims(
            self.covariate_rows()?
                .iter()
                .filter(|c| doc_ids.contains(&c.doc_id))
                .map(|c| c.covariate.id.clone())
                .collect(),
        ))
    }
}
