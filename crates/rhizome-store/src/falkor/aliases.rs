//! The names a document arrived under and the digest of its text, as the SQLite store
//! keeps them (see `sqlite/aliases.rs`): the digest is the Document node's `digest`
//! property; the aliases live in plain keys, `alias` (a hash: name -> document id) and
//! `da:DOC` (a document's aliases in the order they came).

use std::collections::HashMap;

use rhizome_core::ids::text_digest;
use rhizome_core::Result;

use super::keys::cmd;
use super::write::s;
use super::{FalkorStore, Lit, Value};

const ALIAS: &str = "alias";

fn aliases_key(doc_id: &str) -> String {
    format!("da:{doc_id}")
}

impl FalkorStore {
    /// Give documents written before digests were kept their digest.
    pub(crate) fn backfill_digests(&self) -> Result<()> {
        let old = self.ro("MATCH (d:Document) WHERE d.digest IS NULL RETURN d.id, d.text")?;
        for r in old {
            self.qp(
                &[("d", s(&r[0].str())), ("g", s(&text_digest(&r[1].str())))],
                "MATCH (d:Document {id: $d}) SET d.digest = $g",
            )?;
        }
        Ok(())
    }

    /// The document that has `name` as an alias.
    pub(crate) fn alias_owner(&self, name: &str) -> Result<Option<String>> {
        Ok(self.redis(&[b"HGET", &self.key(ALIAS), name.as_bytes()])?.as_str())
    }

    /// Take `name` from the document holding it as an alias, if any.
    fn free_alias(&self, name: &str) -> Result<()> {
        if let Some(owner) = self.alias_owner(name)? {
            self.pipe(vec![
                cmd([b"HDEL".to_vec(), self.key(ALIAS), name.as_bytes().to_vec()]),
                cmd([b"LREM".to_vec(), self.key(&aliases_key(&owner)), b"0".to_vec(), name.as_bytes().to_vec()]),
            ])?;
        }
        Ok(())
    }

    /// Newly written documents' sources, taken from any document holding them as aliases.
    pub(crate) fn documents_written(&self, sources: &[&str]) -> Result<()> {
        sources.iter().try_for_each(|name| self.free_alias(name))
    }

    /// Write `(document id, name)` aliases, each of a stored document and not its own source.
    pub(crate) fn write_aliases(&self, aliases: &[(String, String)]) -> Result<()> {
        for (doc_id, name) in aliases {
            let own = self.rop(&[("d", s(doc_id))], "MATCH (d:Document {id: $d}) RETURN d.source")?;
            let Some(own) = own.first().map(|r| r[0].str()) else { continue };
            if &own == name || self.alias_owner(name)?.as_deref() == Some(doc_id.as_str()) {
                continue;
            }
            self.free_alias(name)?;
            self.pipe(vec![
                cmd([b"HSET".to_vec(), self.key(ALIAS), name.as_bytes().to_vec(), doc_id.as_bytes().to_vec()]),
                cmd([b"RPUSH".to_vec(), self.key(&aliases_key(doc_id)), name.as_bytes().to_vec()]),
            ])?;
        }
        Ok(())
    }

    /// Remove a deleted document's aliases.
    pub(crate) fn delete_aliases(&self, doc_id: &str) -> Result<()> {
        let mut cmds: Vec<Vec<Vec<u8>>> = self
            .aliases_of(doc_id)?
            .into_iter()
            .map(|n| cmd([b"HDEL".to_vec(), self.key(ALIAS), n.into_bytes()]))
            .collect();
        cmds.push(cmd([b"DEL".to_vec(), self.key(&aliases_key(doc_id))]));
        self.pipe(cmds).map(drop)
    }

    /// Give each `(document id, name)`'s document that name as its source (see
    /// [`rhizome_core::WriteBatch::renames`]).
    pub(crate) fn rename_documents(&self, renames: &[(String, String)]) -> Result<()> {
        for (doc_id, name) in renames {
            let holders = self.rop(
                &[("d", s(doc_id)), ("n", s(name))],
                "MATCH (o:Document {source: $n}) WHERE o.id <> $d RETURN o.id",
            )?;
            let exists = !self.rop(&[("d", s(doc_id))], "MATCH (d:Document {id: $d}) RETURN d.id")?.is_empty();
            if !holders.is_empty() || !exists {
                continue;
            }
            self.free_alias(name)?;
            self.qp(&[("d", s(doc_id)), ("n", s(name))], "MATCH (d:Document {id: $d}) SET d.source = $n")?;
        }
        Ok(())
    }

    /// A document's aliases in the order they came.
    pub(crate) fn aliases_of(&self, doc_id: &str) -> Result<Vec<String>> {
        let v = self.redis(&[b"LRANGE", &self.key(&aliases_key(doc_id)), b"0", b"-1"])?;
        Ok(v.into_array().iter().filter_map(Value::as_str).collect())
    }

    /// Every alias: document id -> its aliases in order.
    pub(crate) fn all_aliases(&self) -> Result<HashMap<String, Vec<String>>> {
        let owners: Vec<String> = self
            .redis(&[b"HVALS", &self.key(ALIAS)])?
            .into_array()
            .iter()
            .filter_map(Value::as_str)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let lists = self.pipe(
            owners
                .iter()
                .map(|d| cmd([b"LRANGE".to_vec(), self.key(&aliases_key(d)), b"0".to_vec(), b"-1".to_vec()]))
                .collect(),
        )?;
        Ok(owners
            .into_iter()
            .zip(lists)
            .map(|(d, l)| (d, l.into_array().iter().filter_map(Value::as_str).collect()))
            .collect())
    }

    /// The complete document whose text has `digest`.
    pub(crate) fn with_digest(&self, digest: &str) -> Result<Option<String>> {
        let rows = self.rop(&[("g", s(digest))], "MATCH (d:Document) WHERE d.digest = $g RETURN d.id ORDER BY d.id")?;
        for r in rows {
            let id = r[0].str();
            if rhizome_core::StoreRead::has_document(self, &id)? {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    /// Every name of a document: its source, then its aliases.
    pub(crate) fn sources_of(&self, doc_id: &str) -> Result<Vec<String>> {
        let own = self.rop(&[("d", s(doc_id))], "MATCH (d:Document {id: $d}) RETURN d.source")?;
        let Some(own) = own.first().map(|r| r[0].str()) else { return Ok(Vec::new()) };
        let mut all = vec![own];
        all.extend(self.aliases_of(doc_id)?);
        Ok(all)
    }
}

/// A document's digest as a query literal.
pub(crate) fn digest_lit(text: &str) -> Lit {
    s(&text_digest(text))
}
