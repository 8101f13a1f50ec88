//! [`Graph`]: the index's graph in memory with dense `u32` node numbers and adjacency
//! lists, built once from [`GraphData`] and shared by every graph method of a process
//! ([`GraphCache`] rebuilds it only when the store's graph version changes).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rhizome_core::{GraphData, Result, StoreRead};

use crate::name_prefix::Packed;
pub use crate::name_prefix::{name_key, NamePrefixes};

/// An entity-to-entity edge as seen from one end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Neighbor {
    /// The entity at the other end.
    pub entity: u32,
    /// Index into [`Graph::relations`].
    pub relation: u32,
    /// True when this end is the relation's source (the edge points away from us).
    pub outgoing: bool,
}

/// A relation with node numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Rel {
    pub id: String,
    pub source: u32,
    pub target: u32,
    pub rel_type: String,
    pub weight: f32,
}

/// A fact with node numbers and the chunks that support it.
#[derive(Debug, Clone, PartialEq)]
pub struct FactNode {
    pub id: String,
    pub subject: u32,
    pub object: u32,
    pub chunks: Vec<u32>,
}

#[derive(Debug, Default)]
pub struct Graph {
    pub entity_ids: Vec<String>,
    pub entity_names: Vec<String>,
    pub entity_types: Vec<String>,
    pub chunk_ids: Vec<String>,
    pub chunk_docs: Vec<String>,
    pub chunk_ordinals: Vec<u32>,
    pub relations: Vec<Rel>,
    /// Per entity: its RELATED neighbours (both directions).
    pub neighbors: Vec<Vec<Neighbor>>,
    /// Per entity: (chunk, occurrences) it is MENTIONED_IN.
    pub entity_chunks: Vec<Vec<(u32, u32)>>,
    /// Per chunk: (entity, occurrences) mentioned in it.
    pub chunk_entities: Vec<Vec<(u32, u32)>>,
    /// Per entity: (entity, cosine) SYNONYM edges.
    pub synonyms: Vec<Vec<(u32, f32)>>,
    /// Per chunk: (chunk, cosine) SIMILAR_TO edges.
    pub similar: Vec<Vec<(u32, f32)>>,
    pub facts: Vec<FactNode>,
    entity_index: HashMap<String, u32>,
    chunk_index: HashMap<String, u32>,
    fact_index: HashMap<String, u32>,
    /// Per entity: its centrality ([`crate::centrality::centrality`]), made on first use.
    centrality: OnceLock<Vec<f32>>,
    /// Entities by folded name ([`crate::query_entities::fold`]), made on first use.
    folded_names: OnceLock<HashMap<String, Vec<u32>>>,
    /// Per entity: its degree in the whole graph, when this graph is a neighbourhood
    /// ([`Graph::from_neighbourhood`]; 0 for entities whose degree it was not given).
    degrees: Option<Vec<u32>>,
}

impl Graph {
    pub fn build(data: GraphData) -> Graph {
        let mut g = Graph::default();
        for (i, e) in data.entities.into_iter().enumerate() {
            g.entity_index.insert(e.id.clone(), i as u32);
            g.entity_ids.push(e.id);
            g.entity_names.push(e.name);
            g.entity_types.push(e.entity_type);
        }
        for (i, c) in data.chunks.into_iter().enumerate() {
            g.chunk_index.insert(c.id.clone(), i as u32);
            g.chunk_ids.push(c.id);
            g.chunk_docs.push(c.doc_id);
            g.chunk_ordinals.push(c.ordinal);
        }
        let ne = g.entity_ids.len();
        let nc = g.chunk_ids.len();
        g.neighbors = vec![Vec::new(); ne];
        g.entity_chunks = vec![Vec::new(); ne];
        g.chunk_entities = vec![Vec::new(); nc];
        g.synonyms = vec![Vec::new(); ne];
        g.similar = vec![Vec::new(); nc];
        for r in data.relations {
            let (Some(s), Some(t)) = (g.entity(&r.source_id), g.entity(&r.target_id)) else { continue };
            let idx = g.relations.len() as u32;
            g.neighbors[s as usize].push(Neighbor { entity: t, relation: idx, outgoing: true });
            if s != t {
                g.neighbors[t as usize].push(Neighbor { entity: s, relation: idx, outgoing: false });
            }
            g.relations.push(Rel { id: r.id, source: s, target: t, rel_type: r.rel_type, weight: r.weight });
        }
        for (e, c, n) in data.mentions {
            let (Some(e), Some(c)) = (g.entity(&e), g.chunk(&c)) else { continue };
            g.entity_chunks[e as usize].push((c, n));
            g.chunk_entities[c as usize].push((e, n));
        }
        for (a, b, s) in data.synonyms {
            let (Some(a), Some(b)) = (g.entity(&a), g.entity(&b)) else { continue };
            g.synonyms[a as usize].push((b, s));
            g.synonyms[b as usize].push((a, s));
        }
        for (a, b, s) in data.similar {
            let (Some(a), Some(b)) = (g.chunk(&a), g.chunk(&b)) else { continue };
            g.similar[a as usize].push((b, s));
            g.similar[b as usize].push((a, s));
        }
        for f in data.facts {
            let (Some(s), Some(o)) = (g.entity(&f.subject_id), g.entity(&f.object_id)) else { continue };
            let chunk = f.chunk_id.as_deref().and_then(|c| g.chunk(c));
            let idx = match g.fact_index.get(&f.id) {
                Some(&i) => i,
                None => {
                    let i = g.facts.len() as u32;
                    g.fact_index.insert(f.id.clone(), i);
                    g.facts.push(FactNode { id: f.id, subject: s, object: o, chunks: Vec::new() });
                    i
                }
            };
            if let Some(c) = chunk {
                let chunks = &mut g.facts[idx as usize].chunks;
                if !chunks.contains(&c) {
                    chunks.push(c);
                }
            }
        }
        g
    }

    /// The graph around some entities, read per question instead of the whole graph:
    /// their relations, chunks and those chunks' mentions are complete, and so are the
    /// degrees of their relations' ends ([`rhizome_core::Neighbourhood`]); numbers keep
    /// the whole graph's order, so whatever a method derives from those is the same.
    pub fn from_neighbourhood(n: rhizome_core::Neighbourhood) -> Graph {
        let mut g = Graph::build(n.graph);
        let mut degrees = vec![0; g.entity_ids.len()];
        for (id, d) in n.degrees {
            if let Some(e) = g.entity(&id) {
                degrees[e as usize] = d;
            }
        }
        g.degrees = Some(degrees);
        g
    }

    /// The number of relations touching `e` in the whole graph.
    pub fn degree(&self, e: u32) -> usize {
        match &self.degrees {
            Some(d) => d[e as usize] as usize,
            None => self.neighbors[e as usize].len(),
        }
    }

    pub fn entity(&self, id: &str) -> Option<u32> {
        self.entity_index.get(id).copied()
    }
    pub fn chunk(&self, id: &str) -> Option<u32> {
        self.chunk_index.get(id).copied()
    }
    pub fn fact(&self, id: &str) -> Option<u32> {
        self.fact_index.get(id).copied()
    }

    /// Each entity's centrality in the RELATED graph, 0..1 (computed once per graph).
    pub fn centrality(&self) -> &[f32] {
        self.centrality.get_or_init(|| crate::centrality::centrality(self))
    }

    /// The entities whose name folds to `folded` ([`crate::query_entities::fold`]), in
    /// entity order: a question's names are looked up, never matched against every name.
    pub(crate) fn entities_folded(&self, folded: &str) -> &[u32] {
        let index = self.folded_names.get_or_init(|| fold_names(&self.entity_names));
        index.get(folded).map_or(&[], Vec::as_slice)
    }

    /// The importance shown for an entity: its stored (support) importance blended with
    /// its centrality here ([`crate::centrality::blended_importance`]).
    pub fn importance(&self, id: &str, support: Option<f32>) -> Option<f32> {
        let c = self.entity(id).and_then(|i| self.centrality().get(i as usize).copied());
        crate::centrality::blended_importance(support, c)
    }

    /// `A --rel--> B` for a relation, with entity names.
    pub fn render_relation(&self, r: u32) -> String {
        let r = &self.relations[r as usize];
        format!("{} --{}--> {}", self.entity_names[r.source as usize], r.rel_type, self.entity_names[r.target as usize])
    }
}

/// Entity numbers by folded name.
fn fold_names(names: &[String]) -> HashMap<String, Vec<u32>> {
    let mut index: HashMap<String, Vec<u32>> = HashMap::new();
    for (i, name) in names.iter().enumerate() {
        index.entry(crate::query_entities::fold(name)).or_default().push(i as u32);
    }
    index
}

/// Every entity's name, looked up by folded name: what a question's names are matched
/// against when the whole graph is not held ([`GraphCache::names`]). The names and their
/// folded forms are each one buffer, and the entities sorted by folded name one list:
/// reckoned from name lengths, some 50 MB at a million entities of names like MuSiQue's,
/// against some 180 MB as a string per name and a map of folded names.
#[derive(Debug, Default)]
pub struct NameIndex {
    names: Packed,
    folded: Packed,
    /// Entity numbers by folded name, then number.
    by_folded: Vec<u32>,
}

impl NameIndex {
    /// From every entity's row, in id order (the whole graph's entity numbers).
    pub fn new(rows: Vec<rhizome_core::EntityRow>) -> NameIndex {
        let mut ix = NameIndex::default();
        for r in &rows {
            ix.names.push(&r.name);
            ix.folded.push(&crate::query_entities::fold(&r.name));
        }
        let mut by: Vec<u32> = (0..rows.len() as u32).collect();
        by.sort_by(|&a, &b| ix.folded.get(a).cmp(ix.folded.get(b)).then(a.cmp(&b)));
        ix.by_folded = by;
        ix
    }
}

/// Where a question's names are looked up: the graph or a [`NameIndex`].
pub(crate) trait NameLookup {
    /// The entities whose name folds to `folded`, in entity order.
    fn entities_folded(&self, folded: &str) -> &[u32];
    fn entity_name(&self, e: u32) -> &str;
}

impl NameLookup for Graph {
    fn entities_folded(&self, folded: &str) -> &[u32] {
        Graph::entities_folded(self, folded)
    }
    fn entity_name(&self, e: u32) -> &str {
        &self.entity_names[e as usize]
    }
}

impl NameLookup for NameIndex {
    fn entities_folded(&self, folded: &str) -> &[u32] {
        let from = self.by_folded.partition_point(|&e| self.folded.get(e) < folded);
        let to = from + self.by_folded[from..].partition_point(|&e| self.folded.get(e) == folded);
        &self.by_folded[from..to]
    }
    fn entity_name(&self, e: u32) -> &str {
        self.names.get(e)
    }
}

/// The graph of one store, loaded on first use and reloaded when the store's graph
/// version changes. Shared by concurrent queries (a server's): one of them builds a new
/// version while the others keep using the graph they hold.
#[derive(Default)]
pub struct GraphCache {
    slot: Mutex<Option<(u64, Arc<Graph>)>>,
    /// Held while a graph is built, so that concurrent queries build it once.
    building: Mutex<()>,
    /// The entity, fact and chunk counts and the name index at a graph version.
    count: Mutex<Option<(u64, u64)>>,
    facts: Mutex<Option<(u64, u64)>>,
    chunks: Mutex<Option<(u64, u64)>>,
    names: Mutex<Option<(u64, Arc<NameIndex>)>>,
    prefixes: Mutex<Option<(u64, Arc<NamePrefixes>)>>,
    search: Mutex<Option<(u64, Arc<crate::multipath::NameSearch>)>>,
}

/// What `slot` holds at `version`, or else `build` made and kept there.
fn at_version<T>(
    slot: &Mutex<Option<(u64, Arc<T>)>>,
    version: u64,
    build: impl FnOnce() -> Result<T>,
) -> Result<Arc<T>> {
    let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((v, x)) = slot.as_ref() {
        if *v == version {
            return Ok(x.clone());
        }
    }
    let x = Arc::new(build()?);
    *slot = Some((version, x.clone()));
    Ok(x)
}

impl GraphCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// A cache holding `graph` as the graph at `version` (a scope's graph: it is rebuilt
    /// with its scope, never from the store).
    pub fn holding(version: u64, graph: Arc<Graph>) -> Self {
        GraphCache { slot: Mutex::new(Some((version, graph))), ..GraphCache::default() }
    }

    fn current(&self, version: u64) -> Option<Arc<Graph>> {
        let slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        slot.as_ref().filter(|(v, _)| *v == version).map(|(_, g)| g.clone())
    }

    /// The whole graph when it is held at the store's version, the index holds at most
    /// `up_to` entities or the store has no reads by id of its own
    /// ([`StoreRead::reads_by_id`]; then it is loaded); None when a method should read
    /// the neighbourhoods it needs instead ([`StoreRead::neighbourhood`]).
    pub fn whole(&self, store: &dyn StoreRead, up_to: usize) -> Result<Option<Arc<Graph>>> {
        let version = store.graph_version()?;
        if let Some(g) = self.current(version) {
            return Ok(Some(g));
        }
        let held = *self.count.lock().unwrap_or_else(|p| p.into_inner());
        let count = match held {
            Some((v, n)) if v == version => n,
            _ => {
                let n = store.entity_count()?;
                *self.count.lock().unwrap_or_else(|p| p.into_inner()) = Some((version, n));
                n
            }
        };
        if count > up_to as u64 && store.reads_by_id() {
            return Ok(None);
        }
        self.get(store).map(Some)
    }

    /// How many facts the index holds: from the graph when it is held, else read once per
    /// graph version.
    pub fn fact_count(&self, store: &dyn StoreRead) -> Result<u64> {
        self.counted(&self.facts, store, |g| g.facts.len(), |s| s.fact_count())
    }

    /// How many chunks the index holds: from the graph when it is held, else read once
    /// per graph version.
    pub fn chunk_count(&self, store: &dyn StoreRead) -> Result<u64> {
        self.counted(&self.chunks, store, |g| g.chunk_ids.len(), |s| s.chunk_count())
    }

    fn counted(
        &self,
        slot: &Mutex<Option<(u64, u64)>>,
        store: &dyn StoreRead,
        in_graph: impl Fn(&Graph) -> usize,
        read: impl Fn(&dyn StoreRead) -> Result<u64>,
    ) -> Result<u64> {
        let version = store.graph_version()?;
        if let Some(g) = self.current(version) {
            return Ok(in_graph(&g) as u64);
        }
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        match *slot {
            Some((v, n)) if v == version => Ok(n),
            _ => {
                let n = read(store)?;
                *slot = Some((version, n));
                Ok(n)
            }
        }
    }

    /// Every entity's name by folded name, read once per graph version: a question's
    /// names are matched against it when the whole graph is not held.
    pub fn names(&self, store: &dyn StoreRead) -> Result<Arc<NameIndex>> {
        let version = store.graph_version()?;
        at_version(&self.names, version, || {
            let _load = tracing::info_span!("graph.names", version).entered();
            Ok(NameIndex::new(store.entity_rows()?))
        })
    }

    /// Every entity's id and name by the beginnings of its words, read once per graph
    /// version: a viewer's name search reads it when the whole graph is not held.
    pub fn name_prefixes(&self, store: &dyn StoreRead) -> Result<Arc<NamePrefixes>> {
        let version = store.graph_version()?;
        at_version(&self.prefixes, version, || {
            let _load = tracing::info_span!("graph.name_prefixes", version).entered();
            Ok(NamePrefixes::new(store.entity_rows()?))
        })
    }

    /// `multipath`'s name search over every entity, read once per graph version: what it
    /// searches names with when the whole graph is not held.
    pub(crate) fn name_search(&self, store: &dyn StoreRead) -> Result<Arc<crate::multipath::NameSearch>> {
        let version = store.graph_version()?;
        at_version(&self.search, version, || {
            let _load = tracing::info_span!("graph.name_search", version).entered();
            let rows = store.entity_rows()?;
            Ok(crate::multipath::NameSearch::new(rows.iter().map(|r| r.name.as_str())))
        })
    }

    pub fn get(&self, store: &dyn StoreRead) -> Result<Arc<Graph>> {
        let version = store.graph_version()?;
        if let Some(g) = self.current(version) {
            return Ok(g);
        }
        let _building = self.building.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(g) = self.current(version) {
            return Ok(g);
        }
        let _load = tracing::info_span!("graph.load", version).entered();
        let g = Arc::new(Graph::build(store.graph_data()?));
        *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = Some((version, g.clone()));
        Ok(g)
    }
}
