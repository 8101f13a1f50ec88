//! `multipath` without the whole graph: on an index above `retrieval.whole_graph_up_to`
//! entities, what a question touches is read through the store, numbered in the whole
//! graph's order (entities, chunks and relations each by id) so that every tie breaks
//! and every sum adds up as over the whole graph, and the contexts are the same.
//!
//! - Names: the name search over every entity ([`crate::GraphCache::name_search`]) and
//!   the ids by number ([`crate::GraphCache::name_prefixes`]), each built once per graph
//!   version.
//! - Synonyms of the entities the four direct paths found: their edges
//!   ([`rhizome_core::StoreRead::walk_edges`]).
//! - The graph the relationship expansion and the chunk paths walk: the neighbourhood of
//!   the discovered entities, then of the neighbours the expansion walks from the best
//!   of them ([`rhizome_core::StoreRead::neighbourhood_rows`]: no degrees). Every
//!   relation within two hops and every chunk the paths score is in those, with its
//!   mentions.
//! - A relationship none of whose chunks mentions both ends is placed at the first chunk
//!   of either end: when an end was not read whole, its neighbourhood is read too.
//! - The chunks the vector and full-text paths and the facts point at are numbered
//!   among those read, without their rows.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use rhizome_core::{ChunkRow, EntityRow, GraphData, RelationRow, Result, Scored, StoreRead};

use super::chunks::{self, Searched};
use super::entities::{self, walk, Entities, Found, Keyword};
use super::names::NameIndex;
use super::Gathered;
use crate::name_prefix::NamePrefixes;
use crate::paths::relation_chunk;
use crate::{ms, timed, Graph, MultipathConfig, QueryEnv, Retrieval};

/// [`Entities`] read through the store.
struct Stored<'a> {
    store: &'a dyn StoreRead,
    ids: Arc<NamePrefixes>,
    names: Arc<NameIndex>,
}

impl Entities for Stored<'_> {
    fn names(&self) -> &NameIndex {
        &self.names
    }
    fn number(&self, id: &str) -> Option<u32> {
        self.ids.number(id)
    }
    fn synonyms(&self, entities: &[u32]) -> Result<HashMap<u32, Vec<(u32, f32)>>> {
        let ids: Vec<String> = entities.iter().map(|&e| self.ids.id(e).to_string()).collect();
        let mut out: HashMap<u32, Vec<(u32, f32)>> = entities.iter().map(|&e| (e, Vec::new())).collect();
        for (a, b, cos) in self.store.walk_edges(&ids, &[], false)?.synonyms {
            let (Some(a), Some(b)) = (self.number(&a), self.number(&b)) else { continue };
            if let Some(l) = out.get_mut(&a) {
                l.push((b, cos));
            }
            if let Some(l) = out.get_mut(&b) {
                l.push((a, cos));
            }
        }
        Ok(out)
    }
}

/// [`Gathered`] and the chunk searches, reading what the question touches.
pub(super) fn gather(
    env: &QueryEnv,
    cfg: &MultipathConfig,
    q: &[f32],
    keywords: &[Keyword],
    facts: &[Scored],
    question: &str,
    out: &mut Retrieval,
) -> Result<(Gathered, Searched)> {
    let t = Instant::now();
    let es =
        Stored { store: env.store, ids: env.graph.name_prefixes(env.store)?, names: env.graph.name_search(env.store)? };
    let n = env.graph.chunk_count(env.store)? as usize;
    out.timings_ms.insert("names".into(), ms(t));
    let found = timed(&mut out.timings_ms, "entities", || entities::discover(env.store, &es, cfg, q, keywords))?;
    let found: Vec<(String, Found)> = found.into_iter().map(|f| (es.ids.id(f.entity).to_string(), f)).collect();
    let searched = chunks::search(env, question, q, n, out)?;

    // The first chunk of each fact whose ends are entities, as in the whole graph.
    let t = Instant::now();
    let ids: Vec<String> = facts.iter().map(|f| f.id.clone()).collect();
    let mut fact_chunks: HashMap<String, String> = HashMap::new();
    for row in env.store.fact_rows(&ids)? {
        let (Some(c), Some(_), Some(_)) = (row.chunk_id, es.number(&row.subject_id), es.number(&row.object_id)) else {
            continue;
        };
        let first = fact_chunks.entry(row.id).or_insert_with(|| c.clone());
        if c < *first {
            *first = c;
        }
    }
    out.timings_ms.insert("fact_chunks".into(), ms(t));

    let t = Instant::now();
    let mut extra: BTreeSet<&str> = searched.dense.iter().chain(&searched.sparse).map(|s| s.id.as_str()).collect();
    extra.extend(fact_chunks.values().map(String::as_str));
    let mut read = Read::new(env.store);
    // The discovered entities whole, then the neighbours the expansion walks from (a walk
    // of relations: the chunks the other paths found need no numbers yet).
    let asked: Vec<String> = found.iter().map(|(id, _)| id.clone()).collect();
    read.add(&asked)?;
    let (g, mut local) = read.graph(&found, &BTreeSet::new());
    let scores: HashMap<u32, f32> = local.iter().map(|f| (f.entity, f.score)).collect();
    let mut next: BTreeSet<String> = BTreeSet::new();
    for f in local.iter().take(cfg.expand_entities) {
        next.extend(walk(&g, f.entity, &scores).into_iter().map(|nb| g.entity_ids[nb.entity as usize].clone()));
    }
    read.add(&next.into_iter().collect::<Vec<_>>())?;
    let (mut g, mut rels);
    loop {
        (g, local) = read.graph(&found, &extra);
        rels = entities::expand(&g, &local, cfg.expand_entities, cfg.max_relationships, question);
        // A relationship without a chunk that mentions both ends is placed at the first
        // chunk of either: both ends must have been read whole.
        let mut ends: Vec<String> = Vec::new();
        for &(r, _) in &rels {
            if relation_chunk(&g, r).is_some() {
                continue;
            }
            let rel = &g.relations[r as usize];
            for e in [rel.source, rel.target] {
                let id = &g.entity_ids[e as usize];
                if !read.whole.contains(id) {
                    ends.push(id.clone());
                }
            }
        }
        if ends.is_empty() {
            break;
        }
        read.add(&ends)?;
    }
    out.timings_ms.insert("neighbourhood".into(), ms(t));
    out.notes.push(format!(
        "read the neighbourhood of {} entities from the store in {} reads ({} relations, {} chunks with mentions) \
         instead of the whole graph (retrieval.whole_graph_up_to)",
        read.whole.len(),
        read.reads,
        g.relations.len(),
        read.chunks.len()
    ));
    Ok((Gathered { g: Arc::new(g), chunks: n, found: local, rels, fact_chunks }, searched))
}

/// The neighbourhoods read so far, merged in the whole graph's order.
struct Read<'a> {
    store: &'a dyn StoreRead,
    /// The entities whose neighbourhood was read.
    whole: BTreeSet<String>,
    reads: usize,
    entities: BTreeMap<String, EntityRow>,
    chunks: BTreeMap<String, ChunkRow>,
    relations: BTreeMap<String, RelationRow>,
    mentions: BTreeMap<(String, String), u32>,
}

impl<'a> Read<'a> {
    fn new(store: &'a dyn StoreRead) -> Read<'a> {
        Read {
            store,
            whole: BTreeSet::new(),
            reads: 0,
            entities: BTreeMap::new(),
            chunks: BTreeMap::new(),
            relations: BTreeMap::new(),
            mentions: BTreeMap::new(),
        }
    }

    /// Reads the neighbourhood of those of `ids` not read yet.
    fn add(&mut self, ids: &[String]) -> Result<()> {
        let ids: Vec<String> = ids.iter().filter(|id| !self.whole.contains(*id)).cloned().collect();
        if ids.is_empty() {
            return Ok(());
        }
        let n = self.store.neighbourhood_rows(&ids)?;
        self.reads += 1;
        self.whole.extend(ids);
        let GraphData { entities, chunks, relations, mentions, .. } = n;
        self.entities.extend(entities.into_iter().map(|e| (e.id.clone(), e)));
        self.chunks.extend(chunks.into_iter().map(|c| (c.id.clone(), c)));
        self.relations.extend(relations.into_iter().map(|r| (r.id.clone(), r)));
        self.mentions.extend(mentions.into_iter().map(|(e, c, k)| ((e, c), k)));
        Ok(())
    }

    /// The graph of what was read, with the chunks `extra` numbered among its own, and
    /// `found` in its numbers.
    fn graph(&self, found: &[(String, Found)], extra: &BTreeSet<&str>) -> (Graph, Vec<Found>) {
        let mut chunks = self.chunks.clone();
        for &id in extra {
            chunks.entry(id.to_string()).or_insert_with(|| ChunkRow {
                id: id.to_string(),
                doc_id: String::new(),
                ordinal: 0,
            });
        }
        let g = Graph::build(GraphData {
            entities: self.entities.values().cloned().collect(),
            chunks: chunks.into_values().collect(),
            relations: self.relations.values().cloned().collect(),
            mentions: self.mentions.iter().map(|((e, c), k)| (e.clone(), c.clone(), *k)).collect(),
            ..GraphData::default()
        });
        let local = found.iter().filter_map(|(id, f)| Some(Found { entity: g.entity(id)?, ..f.clone() })).collect();
        (g, local)
    }
}
