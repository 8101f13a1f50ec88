//! The document index as the SQLite store keeps it (see `sqlite/tags.rs`), in plain keys:
//! `dtag`, a sorted set of `KEY\x1fVALUE\x1fDOC` members read by lexical range
//! (`ZRANGEBYLEX`), and `dtags`, a hash of each document's members (what a rewrite or a
//! deletion removes). Also the reads of names and support rows a filter's scope makes.

use rhizome_core::filter::doc_tags;
use rhizome_core::{MentionRecord, RelationRecord, Result, SupportRows};

use super::keys::cmd;
use super::rows::ids_lit;
use super::support::Row;
use super::{FalkorStore, Value};

const TAG: &str = "dtag";
const TAGS: &str = "dtags";
/// The meta key saying every document's rows are written.
const FILLED: &str = "document_tags";
const SEP: char = '\u{1f}';

impl FalkorStore {
    /// Write again the index rows of `doc_ids` from their Document nodes (none for a
    /// document that is gone).
    pub(crate) fn retag(&self, doc_ids: &[String]) -> Result<()> {
        if doc_ids.is_empty() {
            return Ok(());
        }
        self.untag(doc_ids)?;
        let docs = self.rop(
            &[("ids", ids_lit(doc_ids))],
            "UNWIND $ids AS id MATCH (d:Document {id: id}) RETURN d.id, d.language, d.indexed_at, d.meta",
        )?;
        let mut cmds = Vec::new();
        for d in &docs {
            let id = d[0].str();
            let at = d[2].opt_str().map(|_| d[2].int().max(0) as u64);
            let meta = crate::meta_from_json(d[3].opt_str());
            let members: Vec<String> = doc_tags(d[1].opt_str().as_deref(), at, &meta)
                .into_iter()
                .map(|(k, v)| format!("{k}{SEP}{v}{SEP}{id}"))
                .collect();
            if members.is_empty() {
                continue;
            }
            let mut zadd = vec![b"ZADD".to_vec(), self.key(TAG)];
            for m in &members {
                zadd.push(b"0".to_vec());
                zadd.push(m.as_bytes().to_vec());
            }
            cmds.push(zadd);
            let list = serde_json::to_string(&members).unwrap_or_default();
            cmds.push(cmd([b"HSET".to_vec(), self.key(TAGS), id.into_bytes(), list.into_bytes()]));
        }
        self.pipe(cmds).map(drop)
    }

    /// Remove the index rows of `doc_ids`.
    pub(crate) fn untag(&self, doc_ids: &[String]) -> Result<()> {
        let mut hmget = vec![b"HMGET".to_vec(), self.key(TAGS)];
        hmget.extend(doc_ids.iter().map(|d| d.as_bytes().to_vec()));
        let old = self.pipe(vec![hmget])?.pop().map(Value::into_array).unwrap_or_default();
        let mut zrem = vec![b"ZREM".to_vec(), self.key(TAG)];
        for v in &old {
            let members: Vec<String> = v.as_str().and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
            zrem.extend(members.into_iter().map(String::into_bytes));
        }
        let mut hdel = vec![b"HDEL".to_vec(), self.key(TAGS)];
        hdel.extend(doc_ids.iter().map(|d| d.as_bytes().to_vec()));
        let mut cmds = vec![hdel];
        if zrem.len() > 2 {
            cmds.push(zrem);
        }
        self.pipe(cmds).map(drop)
    }

    /// Fill the index from every Document node once (an index made before it).
    pub(crate) fn backfill_tags(&self) -> Result<()> {
        if self.meta_get(FILLED)?.is_some() {
            return Ok(());
        }
        let ids: Vec<String> = self.ro("MATCH (d:Document) RETURN d.id")?.iter().map(|r| r[0].str()).collect();
        for part in ids.chunks(500) {
            self.retag(part)?;
        }
        self.meta_set(FILLED, "1")
    }

    /// [`rhizome_core::StoreRead::tagged_documents`].
    pub(crate) fn tagged(&self, key: &str, from: &str, to: Option<&str>) -> Result<Vec<String>> {
        let lo = format!("[{key}{SEP}{from}");
        // Every member of `key` sorts before `key` followed by the next byte after SEP; the
        // members of one value (`to` is that value and U+0001) before that value, SEP, DEL.
        let hi = match to {
            None => format!("({key}\u{20}"),
            Some(t) => match t.strip_suffix('\u{1}') {
                Some(v) => format!("({key}{SEP}{v}{SEP}\u{7f}"),
                None => format!("({key}{SEP}{t}"),
            },
        };
        let got = self.redis(&[b"ZRANGEBYLEX", &self.key(TAG), lo.as_bytes(), hi.as_bytes()])?.into_array();
        let mut ids: Vec<String> = got
            .iter()
            .filter_map(Value::as_str)
            .filter_map(|m| {
                let (rest, doc) = m.rsplit_once(SEP)?;
                let value = rest.split_once(SEP)?.1;
                (value >= from && to.is_none_or(|t| value < t)).then(|| doc.to_string())
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }

    /// [`rhizome_core::StoreRead::document_names`]: the Document nodes' `source` alone
    /// and the alias names.
    pub(crate) fn names(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        let mut out: Vec<(String, String)> = self
            .rop(&[("p", prefix.into())], "MATCH (d:Document) WHERE d.source STARTS WITH $p RETURN d.id, d.source")?
            .iter()
            .map(|r| (r[0].str(), r[1].str()))
            .collect();
        for (doc, names) in self.all_aliases()? {
            out.extend(names.into_iter().filter(|n| n.starts_with(prefix)).map(|n| (doc.clone(), n)));
        }
        Ok(out)
    }

    /// [`rhizome_core::StoreRead::support_rows`]: the support hashes of each entity
    /// (`es:`) and relation (`rs:`), by the order written.
    pub(crate) fn support_rows_of(&self, entity_ids: &[String], relation_ids: &[String]) -> Result<SupportRows> {
        fn in_order<T>(lists: Vec<Vec<Row<T>>>) -> Vec<T> {
            let mut rows: Vec<Row<T>> = lists.into_iter().flatten().collect();
            rows.sort_by_key(|r| r.seq);
            rows.into_iter().map(|r| r.rec).collect()
        }
        fn refs(ids: &[String]) -> Vec<&str> {
            ids.iter().map(String::as_str).collect()
        }
        let mentions: Vec<MentionRecord> = in_order(self.hvals_rows("es", &refs(entity_ids))?);
        let relations: Vec<RelationRecord> = in_order(self.hvals_rows("rs", &refs(relation_ids))?);
        Ok((mentions, relations))
    }
}
