//! Reading what a community's report is written from, each entity's rows once per
//! [`refresh`](crate::reports::refresh).
//!
//! Every entity is a member of one community per level, so reading members community by
//! community read each entity's row and relations once per level (four times on MuSiQue's
//! OpenIE graph: 3,816 communities, ~230k point reads, 1.08 s of a 57 s import). The
//! reader keeps what it read: each community asks the store, in one call per kind, only
//! for the members no earlier community had.
//!
//! The results are those of reading per community: entities in member order, relations
//! among the members (each once; their order is not kept, and every consumer sorts them by
//! a total order), chunks in the order asked. Claims are read per community as before (their
//! order is shown in reports) and not at all when the index holds none.

use std::collections::{HashMap, HashSet};

use rhizome_core::{ChunkWithDoc, Covariate, Entity, Relation, Result, StoreRead};

/// What was read so far, by entity and chunk id.
pub(crate) struct MaterialReader {
    claims: bool,
    entities: HashMap<String, Option<Entity>>,
    /// Relations with the entity at either end.
    relations: HashMap<String, Vec<Relation>>,
    chunks: HashMap<String, Option<ChunkWithDoc>>,
}

impl MaterialReader {
    pub(crate) fn new(store: &dyn StoreRead) -> Result<Self> {
        // A store that does not count claims is read for them.
        let claims = store.stats()?.nodes.get("Covariate").is_none_or(|&n| n > 0);
        Ok(MaterialReader { claims, entities: HashMap::new(), relations: HashMap::new(), chunks: HashMap::new() })
    }

    /// The entities of `ids` that exist, in `ids` order.
    pub(crate) fn entities(&mut self, store: &dyn StoreRead, ids: &[String]) -> Result<Vec<Entity>> {
        let new: Vec<String> = ids.iter().filter(|id| !self.entities.contains_key(*id)).cloned().collect();
        if !new.is_empty() {
            let mut found: HashMap<String, Entity> = store.entities(&new)?.into_iter().map(|e| (e.id.clone(), e)).collect();
            for id in new {
                let e = found.remove(&id);
                self.entities.insert(id, e);
            }
        }
        Ok(ids.iter().filter_map(|id| self.entities.get(id).cloned().flatten()).collect())
    }

    /// The relations with both ends among `ids`, each once.
    pub(crate) fn relations_among(&mut self, store: &dyn StoreRead, ids: &[String]) -> Result<Vec<Relation>> {
        let new: Vec<String> = ids.iter().filter(|id| !self.relations.contains_key(*id)).cloned().collect();
        if !new.is_empty() {
            let rels = store.relations_of(&new)?;
            for id in &new {
                self.relations.insert(id.clone(), Vec::new());
            }
            let new: HashSet<&str> = new.iter().map(String::as_str).collect();
            for r in rels {
                if r.target_id != r.source_id && new.contains(r.target_id.as_str()) {
                    self.relations.entry(r.target_id.clone()).or_default().push(r.clone());
                }
                if new.contains(r.source_id.as_str()) {
                    self.relations.entry(r.source_id.clone()).or_default().push(r);
                }
            }
        }
        let members: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut out = Vec::new();
        for id in ids {
            for r in self.relations.get(id).into_iter().flatten() {
                if members.contains(r.source_id.as_str())
                    && members.contains(r.target_id.as_str())
                    && seen.insert(r.id.as_str())
                {
                    out.push(r.clone());
                }
            }
        }
        Ok(out)
    }

    /// Claims about `ids` (none read when the index holds none).
    pub(crate) fn claims(&self, store: &dyn StoreRead, ids: &[String]) -> Result<Vec<Covariate>> {
        if self.claims { store.covariates_of(ids) } else { Ok(Vec::new()) }
    }

    /// The chunks of `ids` that exist, in `ids` order.
    pub(crate) fn chunks(&mut self, store: &dyn StoreRead, ids: &[String]) -> Result<Vec<ChunkWithDoc>> {
        let new: Vec<String> = ids.iter().filter(|id| !self.chunks.contains_key(*id)).cloned().collect();
        if !new.is_empty() {
            let mut found: HashMap<String, ChunkWithDoc> =
                store.chunks(&new)?.into_iter().map(|c| (c.chunk.id.clone(), c)).collect();
            for id in new {
                let c = found.remove(&id);
                self.chunks.insert(id, c);
            }
        }
        Ok(ids.iter().filter_map(|id| self.chunks.get(id).cloned().flatten()).collect())
    }
}
