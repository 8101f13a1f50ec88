//! Reading what a community's report is written from, each entity's rows once per
//! [`refresh`](crate::reports::refresh).
//!
//! Every entity is a member of one community per level, so reading members community by
//! community read each entity's row and relations once per level (four times on MuSiQue's
//! OpenIE graph: 3,816 communities, ~230k point reads, 1.08 s of a 57 s import). The
//! reader keeps what it read: each community asks the store, in one call per kind, only
//! for the members no earlier community had.
//!
//! What it keeps is bounded (`communities.material_cache_mb`, about the text it holds):
//! past that, members not read yet are read per community, as before. The OpenIE import's
//! material is ~14 MB; the LLM-free MuSiQue index's (75k relations with their sentences)
//! would be ~45 MB, of which the default keeps 32.
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
    /// Text kept so far and at most (bytes, approximately).
    bytes: usize,
    limit: usize,
    entities: HashMap<String, Option<Entity>>,
    /// Every relation read, once.
    relations: Vec<Relation>,
    relation_ids: HashMap<String, u32>,
    /// Per entity: the relations (indices into `relations`) with it at either end.
    touching: HashMap<String, Vec<u32>>,
    chunks: HashMap<String, Option<ChunkWithDoc>>,
}

impl MaterialReader {
    /// A reader keeping up to `limit_mb` megabytes.
    pub(crate) fn new(store: &dyn StoreRead, limit_mb: usize) -> Result<Self> {
        // A store that does not count claims is read for them.
        let claims = store.stats()?.nodes.get("Covariate").is_none_or(|&n| n > 0);
        Ok(MaterialReader {
            claims,
            bytes: 0,
            limit: limit_mb.saturating_mul(1 << 20),
            entities: HashMap::new(),
            relations: Vec::new(),
            relation_ids: HashMap::new(),
            touching: HashMap::new(),
            chunks: HashMap::new(),
        })
    }

    /// The entities of `ids` that exist, in `ids` order.
    pub(crate) fn entities(&mut self, store: &dyn StoreRead, ids: &[String]) -> Result<Vec<Entity>> {
        let keep = !self.full();
        read_through(
            &mut self.entities,
            &mut self.bytes,
            keep,
            ids,
            |new| store.entities(new),
            |e| &e.id,
            |e| e.name.len() + e.description.len() + 64,
        )
    }

    /// The relations with both ends among `ids`, each once.
    pub(crate) fn relations_among(&mut self, store: &dyn StoreRead, ids: &[String]) -> Result<Vec<Relation>> {
        if self.full() {
            let members: HashSet<&str> = ids.iter().map(String::as_str).collect();
            let mut rels = store.relations_of(ids)?;
            rels.retain(|r| members.contains(r.source_id.as_str()) && members.contains(r.target_id.as_str()));
            return Ok(rels);
        }
        let new: Vec<String> = ids.iter().filter(|id| !self.touching.contains_key(*id)).cloned().collect();
        if !new.is_empty() {
            let rels = store.relations_of(&new)?;
            for id in &new {
                self.touching.insert(id.clone(), Vec::new());
            }
            let new: HashSet<&str> = new.iter().map(String::as_str).collect();
            for r in rels {
                let at = match self.relation_ids.get(&r.id) {
                    Some(&i) => i,
                    None => {
                        let i = self.relations.len() as u32;
                        self.bytes += 2 * r.id.len()
                            + r.source_id.len()
                            + r.target_id.len()
                            + r.rel_type.len()
                            + r.description.len()
                            + 128;
                        self.relation_ids.insert(r.id.clone(), i);
                        self.relations.push(r);
                        i
                    }
                };
                let r = &self.relations[at as usize];
                for end in [&r.source_id, &r.target_id] {
                    if new.contains(end.as_str()) {
                        self.bytes += 4;
                        let list = self.touching.entry(end.clone()).or_default();
                        if list.last() != Some(&at) {
                            list.push(at);
                        }
                    }
                }
            }
        }
        let members: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let mut seen: HashSet<u32> = HashSet::new();
        let mut out = Vec::new();
        for id in ids {
            for &i in self.touching.get(id).into_iter().flatten() {
                let r = &self.relations[i as usize];
                if members.contains(r.source_id.as_str()) && members.contains(r.target_id.as_str()) && seen.insert(i) {
                    out.push(r.clone());
                }
            }
        }
        Ok(out)
    }

    /// Claims about `ids` (none read when the index holds none).
    pub(crate) fn claims(&self, store: &dyn StoreRead, ids: &[String]) -> Result<Vec<Covariate>> {
        if self.claims {
            store.covariates_of(ids)
        } else {
            Ok(Vec::new())
        }
    }

    /// The chunks of `ids` that exist, in `ids` order.
    pub(crate) fn chunks(&mut self, store: &dyn StoreRead, ids: &[String]) -> Result<Vec<ChunkWithDoc>> {
        let keep = !self.full();
        read_through(
            &mut self.chunks,
            &mut self.bytes,
            keep,
            ids,
            |new| store.chunks(new),
            |c| &c.chunk.id,
            |c| c.chunk.text.len() + c.doc_title.len() + c.doc_source.len() + 128,
        )
    }

    fn full(&self) -> bool {
        self.bytes >= self.limit
    }
}

/// The rows of `ids` that exist, in `ids` order: those in `cache` from it, the others read
/// with one `fetch` and kept (with their size added to `bytes`) when `keep`.
fn read_through<T: Clone>(
    cache: &mut HashMap<String, Option<T>>,
    bytes: &mut usize,
    keep: bool,
    ids: &[String],
    fetch: impl FnOnce(&[String]) -> Result<Vec<T>>,
    id_of: impl Fn(&T) -> &String,
    size: impl Fn(&T) -> usize,
) -> Result<Vec<T>> {
    let new: Vec<String> = ids.iter().filter(|id| !cache.contains_key(*id)).cloned().collect();
    let mut found: HashMap<String, T> = if new.is_empty() {
        HashMap::new()
    } else {
        fetch(&new)?.into_iter().map(|x| (id_of(&x).clone(), x)).collect()
    };
    if keep {
        for id in new {
            let x = found.remove(&id);
            *bytes += id.len() + x.as_ref().map_or(0, &size);
            cache.insert(id, x);
        }
    }
    Ok(ids
        .iter()
        .filter_map(|id| match cache.get(id) {
            Some(x) => x.clone(),
            None => found.remove(id),
        })
        .collect())
}
