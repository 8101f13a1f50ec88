//! A question asked of some documents only ([`rhizome_core::DocFilter`]): the [`Scope`]
//! of those documents (their chunks, the entities mentioned in them, the facts they
//! support) and the views of the index that show nothing else: a [`ScopedStore`] and the
//! graph restricted to the scope. Every method retrieves through them unchanged.
//!
//! What is in scope: a chunk of a matching document; an entity, relation or fact with
//! support from a matching document (an edge list's too: [`StoreRead::supported_by`]
//! reads the support by document), so that a relation between two entities in scope that
//! only another document states stays out; SYNONYM and SIMILAR_TO edges between nodes in
//! scope; a community with a member in scope, with its members in scope only, and a report
//! written from the scope's own material by its [`ReportWriter`] (a stored report tells
//! what every document says of the community); a claim a matching document states about
//! an entity in scope. A
//! relation's weight and description, and an entity's description, are those its support
//! from documents in scope makes ([`views`]).

mod store;
pub mod views;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use rhizome_core::{Community, CommunityReport, DocSupport, GraphData, RelationRecord, Result, StoreRead, VectorKind};

pub use store::ScopedStore;

use crate::graph::{Graph, GraphCache};

/// Writes the reports of communities (their members in scope only) from what a store seen
/// through a scope shows; the engine gives the community crate's extractive writer.
pub type ReportWriter = Arc<dyn Fn(&dyn StoreRead, &[Community]) -> Result<Vec<CommunityReport>> + Send + Sync>;

/// The documents a question may draw on, and what they support.
pub struct Scope {
    /// The index's graph version the scope was made at: its store says this version, so
    /// that the scope's graph is never rebuilt from the store (a scope of a later version
    /// is a new scope).
    pub version: u64,
    pub docs: HashSet<String>,
    pub chunks: HashSet<String>,
    pub entities: HashSet<String>,
    pub relations: HashSet<String>,
    pub facts: HashSet<String>,
    /// Claims stated by the scope's documents.
    pub claims: HashSet<String>,
    /// The graph of the scope, as a cache that holds it at the index's graph version.
    pub graph: GraphCache,
    /// Communities with a member in scope, read on first use.
    communities: OnceLock<HashSet<String>>,
    /// Their reports as the scope tells them, written on first use by `report_writer`
    /// (without one, the stored reports of those communities).
    reports: OnceLock<Vec<CommunityReport>>,
    report_writer: Option<ReportWriter>,
    /// Node counts of the whole index (what a search in scope is a share of), read on
    /// first use.
    totals: OnceLock<HashMap<String, u64>>,
    /// Reports of communities in scope, counted on first use.
    pub(crate) report_count: OnceLock<u64>,
    /// The scope's own vectors of each kind searched exactly, read on first use.
    vectors: Mutex<HashMap<VectorKind, Arc<Vec<(String, Vec<f32>)>>>>,
    /// (weight, description) of the relations in scope that other documents support too,
    /// from the scope's documents alone ([`views::relations`]).
    pub(crate) relation_views: HashMap<String, (f32, String)>,
    /// Descriptions of entities in scope as its documents tell them, read on first use of
    /// each entity ([`views::entities`]; None: the stored one).
    pub(crate) entity_views: Mutex<HashMap<String, Option<String>>>,
}

impl Scope {
    /// The scope of `docs` in the index (at graph `version`), given what they support
    /// (`store.supported_by(docs)`), their graph (`store.scope_graph(docs, support)`) and
    /// every support row of the relations they support (`store.support_rows(&[],
    /// &support.relations)`).
    pub fn new(
        mut data: GraphData,
        version: u64,
        docs: HashSet<String>,
        support: &DocSupport,
        relation_rows: Vec<RelationRecord>,
    ) -> Scope {
        let relation_views = views::relations(relation_rows, &docs);
        for r in &mut data.relations {
            if let Some((w, _)) = relation_views.get(&r.id) {
                r.weight = *w;
            }
        }
        let chunks = data.chunks.iter().map(|c| c.id.clone()).collect();
        let entities = data.entities.iter().map(|e| e.id.clone()).collect();
        let relations = data.relations.iter().map(|r| r.id.clone()).collect();
        let facts = data.facts.iter().map(|f| f.id.clone()).collect();
        Scope {
            version,
            docs,
            chunks,
            entities,
            relations,
            facts,
            claims: support.claims.iter().cloned().collect(),
            graph: GraphCache::holding(version, Arc::new(Graph::build(data))),
            communities: OnceLock::new(),
            reports: OnceLock::new(),
            report_writer: None,
            totals: OnceLock::new(),
            report_count: OnceLock::new(),
            vectors: Mutex::new(HashMap::new()),
            relation_views,
            entity_views: Mutex::new(HashMap::new()),
        }
    }

    /// The graph of the scope as the store holds it, with the relations' weights its
    /// documents give them ([`views`]).
    pub fn graph_data(&self, store: &dyn StoreRead) -> Result<GraphData> {
        let ids = |set: &HashSet<String>| set.iter().cloned().collect::<Vec<_>>();
        let support = DocSupport::new(ids(&self.entities), ids(&self.relations), ids(&self.facts));
        let mut data = store.scope_graph(&ids(&self.docs), &support)?;
        for r in &mut data.relations {
            if let Some((w, _)) = self.relation_views.get(&r.id) {
                r.weight = *w;
            }
        }
        Ok(data)
    }

    /// The writer of the scope's community reports.
    pub fn with_report_writer(mut self, writer: ReportWriter) -> Scope {
        self.report_writer = Some(writer);
        self
    }

    /// A community as the scope shows it: its members in scope only.
    pub fn restrict(&self, mut c: Community) -> Community {
        c.entity_ids.retain(|e| self.entities.contains(e));
        c
    }

    /// The reports of the communities in scope, written from what `scoped` (the index
    /// seen through this scope) shows, once per scope.
    pub fn reports(&self, scoped: &ScopedStore<'_>) -> Result<&[CommunityReport]> {
        if let Some(r) = self.reports.get() {
            return Ok(r);
        }
        let communities = scoped.communities()?;
        let made = match &self.report_writer {
            Some(write) => write(scoped, &communities)?,
            None => {
                let ids: Vec<String> = communities.into_iter().map(|c| c.id).collect();
                scoped.inner.community_reports_of(&ids)?
            }
        };
        Ok(self.reports.get_or_init(|| made))
    }

    /// How many nodes with `label` the whole index holds.
    pub fn total(&self, store: &dyn StoreRead, label: &str) -> Result<u64> {
        if self.totals.get().is_none() {
            let nodes = store.stats()?.nodes.into_iter().collect();
            let _ = self.totals.set(nodes);
        }
        Ok(self.totals.get().and_then(|t| t.get(label)).copied().unwrap_or(0))
    }

    /// The vectors of `ids` (those of `kind` in scope), read once per scope.
    pub fn vectors_of(
        &self,
        store: &dyn StoreRead,
        kind: VectorKind,
        ids: &HashSet<String>,
    ) -> Result<Arc<Vec<(String, Vec<f32>)>>> {
        if let Some(v) = self.vectors.lock().unwrap_or_else(|p| p.into_inner()).get(&kind) {
            return Ok(v.clone());
        }
        let mut sorted: Vec<String> = ids.iter().cloned().collect();
        sorted.sort();
        let v = Arc::new(store.vectors(kind, &sorted)?);
        self.vectors.lock().unwrap_or_else(|p| p.into_inner()).insert(kind, v.clone());
        Ok(v)
    }

    /// Communities with at least one member in scope.
    pub fn communities(&self, store: &dyn StoreRead) -> Result<&HashSet<String>> {
        if let Some(c) = self.communities.get() {
            return Ok(c);
        }
        let ids = store
            .communities()?
            .into_iter()
            .filter(|c| c.entity_ids.iter().any(|e| self.entities.contains(e)))
            .map(|c| c.id)
            .collect();
        Ok(self.communities.get_or_init(|| ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::{ChunkRow, EntityRow, FactRow, RelationRow};

    fn s(x: &str) -> String {
        x.to_string()
    }

    /// Two documents mention Ada and Babbage; only `d2` states a relation between them.
    /// `d3` is an edge list (no chunks) relating Ada to Lovelace Hall.
    fn graph() -> GraphData {
        let mut data = GraphData::default();
        for e in ["ada", "babbage", "hall"] {
            data.entities.push(EntityRow { id: s(e), name: s(e), entity_type: s("THING") });
        }
        for (c, d) in [("c1", "d1"), ("c2", "d2")] {
            data.chunks.push(ChunkRow { id: s(c), doc_id: s(d), ordinal: 0 });
            for e in ["ada", "babbage"] {
                data.mentions.push((s(e), s(c), 1));
            }
        }
        let rel = |id: &str, a: &str, b: &str| RelationRow {
            id: s(id),
            source_id: s(a),
            target_id: s(b),
            rel_type: s("KNEW"),
            weight: 1.0,
        };
        data.relations.push(rel("r_ab", "ada", "babbage"));
        data.relations.push(rel("r_ah", "ada", "hall"));
        data.facts.push(FactRow { id: s("f_ah"), subject_id: s("ada"), object_id: s("hall"), chunk_id: None });
        data
    }

    fn scope(docs: &[&str], support: DocSupport) -> Scope {
        let docs: Vec<String> = docs.iter().map(|d| s(d)).collect();
        let data = graph().scoped(&docs, &support);
        Scope::new(data, 1, docs.into_iter().collect(), &support, Vec::new())
    }

    #[test]
    fn a_relation_is_in_scope_only_with_support_from_a_matching_document() {
        let d1 = scope(&["d1"], DocSupport::new(vec![s("ada"), s("babbage")], vec![], vec![]));
        assert_eq!(d1.entities.len(), 2);
        assert!(d1.relations.is_empty(), "r_ab is stated by d2 only: {:?}", d1.relations);
        let d2 = scope(&["d2"], DocSupport::new(vec![s("ada"), s("babbage")], vec![s("r_ab")], vec![]));
        assert_eq!(d2.relations, HashSet::from([s("r_ab")]));
    }

    #[test]
    fn an_edge_list_brings_its_entities_relations_and_facts_into_scope() {
        let d3 = scope(&["d3"], DocSupport::new(vec![s("ada"), s("hall")], vec![s("r_ah")], vec![s("f_ah")]));
        assert!(d3.chunks.is_empty());
        assert_eq!(d3.entities, HashSet::from([s("ada"), s("hall")]));
        assert_eq!(d3.relations, HashSet::from([s("r_ah")]));
        assert_eq!(d3.facts, HashSet::from([s("f_ah")]));
    }
}
