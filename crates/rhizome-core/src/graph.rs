//! The whole graph as plain rows, for methods that walk it (Personalized PageRank, paths,
//! ego graphs, communities). A backend hands this out with [`crate::StoreRead::graph_data`];
//! retrieval builds its own indexed adjacency from it once per index.

use serde::{Deserialize, Serialize};

/// An entity node: id, name and type (descriptions are fetched on demand).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityRow {
    pub id: String,
    pub name: String,
    pub entity_type: String,
}

/// A chunk node: id, its document and its position there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkRow {
    pub id: String,
    pub doc_id: String,
    pub ordinal: u32,
}

/// A RELATED edge between two entities (directed as extracted: source -> target).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelationRow {
    pub id: String,
    pub source_id: String,
    pub target_id: String,
    pub rel_type: String,
    pub weight: f32,
}

/// A fact with the chunk that supports it (one row per supporting chunk; `chunk_id` is
/// None when the supporting document has no chunks, e.g. an edge-list import).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactRow {
    pub id: String,
    pub subject_id: String,
    pub object_id: String,
    pub chunk_id: Option<String>,
}

/// Every node and edge that graph methods use. Rows are in a stable order (by id) so that
/// anything computed from them is deterministic.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphData {
    pub entities: Vec<EntityRow>,
    pub chunks: Vec<ChunkRow>,
    pub relations: Vec<RelationRow>,
    /// MENTIONED_IN: (entity id, chunk id, occurrences in that chunk).
    pub mentions: Vec<(String, String, u32)>,
    /// SYNONYM: (entity a, entity b, cosine), a < b.
    pub synonyms: Vec<(String, String, f32)>,
    /// SIMILAR_TO: (chunk a, chunk b, cosine), a < b, both of one document.
    pub similar: Vec<(String, String, f32)>,
    pub facts: Vec<FactRow>,
}

/// The part of the graph around some entities that a method reads per question instead
/// of the whole graph ([`crate::StoreRead::neighbourhood`]). For the asked entities `E`:
/// - `relations`: every relation with an end in `E`;
/// - `synonyms`: every synonym edge with an end in `E`;
/// - `entities`: `E` (those that exist) and the other ends of those relations and synonym
///   edges;
/// - `chunks`: every chunk that mentions an entity of `E`;
/// - `mentions`: the mentions of those entities in those chunks;
/// - `facts` and `similar` are left empty.
///
/// Every list is ordered as in [`GraphData`], so numbers given to its rows keep the order
/// the whole graph gives them, and whatever a method derives from `E`'s edges and chunks
/// (which chunks mention both ends of such an edge, and how often) is the same as over
/// the whole graph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Neighbourhood {
    pub graph: GraphData,
    /// (entity, relations touching it in the whole graph) for `E` and the other ends of
    /// `relations`, by entity id: their degrees, which the rows above do not show.
    pub degrees: Vec<(String, u32)>,
}

impl GraphData {
    /// The neighbourhood of `ids` cut from the whole graph: what every backend's
    /// [`crate::StoreRead::neighbourhood`] must equal (and the default one).
    pub fn around(&self, ids: &[String]) -> Neighbourhood {
        use std::collections::BTreeSet;
        let asked: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
        let relations: Vec<RelationRow> = self
            .relations
            .iter()
            .filter(|r| asked.contains(r.source_id.as_str()) || asked.contains(r.target_id.as_str()))
            .cloned()
            .collect();
        let chunks: BTreeSet<&str> =
            self.mentions.iter().filter(|m| asked.contains(m.0.as_str())).map(|m| m.1.as_str()).collect();
        let synonyms: Vec<(String, String, f32)> = self
            .synonyms
            .iter()
            .filter(|s| asked.contains(s.0.as_str()) || asked.contains(s.1.as_str()))
            .cloned()
            .collect();
        let mut wanted: BTreeSet<&str> = asked.clone();
        wanted.extend(relations.iter().flat_map(|r| [r.source_id.as_str(), r.target_id.as_str()]));
        wanted.extend(synonyms.iter().flat_map(|s| [s.0.as_str(), s.1.as_str()]));
        let mentions: Vec<(String, String, u32)> = self
            .mentions
            .iter()
            .filter(|m| chunks.contains(m.1.as_str()) && wanted.contains(m.0.as_str()))
            .cloned()
            .collect();
        let mut ends: BTreeSet<&str> = asked.clone();
        ends.extend(relations.iter().flat_map(|r| [r.source_id.as_str(), r.target_id.as_str()]));
        let entities: Vec<EntityRow> =
            self.entities.iter().filter(|e| wanted.contains(e.id.as_str())).cloned().collect();
        let degrees = self.degrees_of(&ends);
        Neighbourhood {
            graph: GraphData {
                entities,
                chunks: self.chunks.iter().filter(|c| chunks.contains(c.id.as_str())).cloned().collect(),
                relations,
                mentions,
                synonyms,
                similar: Vec::new(),
                facts: Vec::new(),
            },
            degrees,
        }
    }
}

impl GraphData {
    /// (entity, relations touching it) for those of `ids` that exist, by id: what every
    /// backend's [`crate::StoreRead::entity_degrees`] must equal (and the default one). A
    /// relation from an entity to itself counts once.
    pub fn degrees(&self, ids: &[String]) -> Vec<(String, u32)> {
        self.degrees_of(&ids.iter().map(String::as_str).collect())
    }

    fn degrees_of(&self, ids: &std::collections::BTreeSet<&str>) -> Vec<(String, u32)> {
        let mut degrees: std::collections::BTreeMap<&str, u32> = std::collections::BTreeMap::new();
        for r in &self.relations {
            for end in [r.source_id.as_str(), r.target_id.as_str()] {
                if ids.contains(end) {
                    *degrees.entry(end).or_default() += 1;
                }
                if r.source_id == r.target_id {
                    break;
                }
            }
        }
        self.entities
            .iter()
            .filter(|e| ids.contains(e.id.as_str()))
            .map(|e| (e.id.clone(), degrees.get(e.id.as_str()).copied().unwrap_or(0)))
            .collect()
    }

    /// The edges of hippo's PageRank graph (relations, synonym edges, mentions) that touch
    /// `entities` or `chunks`, or with `among` that have both ends among them, each list
    /// in [`GraphData`] order; the other lists are left empty. What every backend's
    /// [`crate::StoreRead::walk_edges`] must equal (and the default one).
    ///
    /// A mention touches when its entity is among `entities` or its chunk among `chunks`;
    /// with `among`, both. A relation or synonym edge touches when an end is among
    /// `entities`; with `among`, both ends.
    pub fn walk_edges(&self, entities: &[String], chunks: &[String], among: bool) -> GraphData {
        use std::collections::BTreeSet;
        let e: BTreeSet<&str> = entities.iter().map(String::as_str).collect();
        let c: BTreeSet<&str> = chunks.iter().map(String::as_str).collect();
        let ends =
            |a: &str, b: &str| if among { e.contains(a) && e.contains(b) } else { e.contains(a) || e.contains(b) };
        let mention = |m: &(String, String, u32)| {
            let (x, y) = (e.contains(m.0.as_str()), c.contains(m.1.as_str()));
            if among {
                x && y
            } else {
                x || y
            }
        };
        GraphData {
            relations: self.relations.iter().filter(|r| ends(&r.source_id, &r.target_id)).cloned().collect(),
            mentions: self.mentions.iter().filter(|m| mention(m)).cloned().collect(),
            synonyms: self.synonyms.iter().filter(|s| ends(&s.0, &s.1)).cloned().collect(),
            ..GraphData::default()
        }
    }
}

impl GraphData {
    /// The graph of some documents only (a question's scope): their chunks; the entities,
    /// relations and facts they support (`support`, ids sorted) that the graph holds, a
    /// relation or fact only with both ends among those entities; the mentions, synonym
    /// and SIMILAR_TO edges among those; a fact's rows only for chunks of those documents
    /// (one row without a chunk when it has none there: an edge list's). Every list in
    /// [`GraphData`] order. What every backend's [`crate::StoreRead::scope_graph`] must
    /// equal (and the default one).
    pub fn scoped(&self, docs: &[String], support: &crate::DocSupport) -> GraphData {
        use std::collections::BTreeSet;
        let docs: BTreeSet<&str> = docs.iter().map(String::as_str).collect();
        let wanted = |ids: &[String], id: &str| ids.binary_search_by(|x| x.as_str().cmp(id)).is_ok();
        let chunks: Vec<ChunkRow> = self.chunks.iter().filter(|c| docs.contains(c.doc_id.as_str())).cloned().collect();
        let chunk_ok: BTreeSet<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
        let entities: Vec<EntityRow> =
            self.entities.iter().filter(|e| wanted(&support.entities, &e.id)).cloned().collect();
        let entity_ok: BTreeSet<&str> = entities.iter().map(|e| e.id.as_str()).collect();
        let both = |a: &str, b: &str| entity_ok.contains(a) && entity_ok.contains(b);
        let mut facts: Vec<FactRow> = Vec::new();
        let mut at = 0;
        while at < self.facts.len() {
            let id = &self.facts[at].id;
            let end = at + self.facts[at..].iter().take_while(|f| &f.id == id).count();
            let f = &self.facts[at];
            if wanted(&support.facts, id) && both(&f.subject_id, &f.object_id) {
                let mut rows: Vec<FactRow> = self.facts[at..end]
                    .iter()
                    .filter(|r| r.chunk_id.as_deref().is_some_and(|c| chunk_ok.contains(c)))
                    .cloned()
                    .collect();
                rows.dedup();
                if rows.is_empty() {
                    rows.push(FactRow { chunk_id: None, ..f.clone() });
                }
                facts.extend(rows);
            }
            at = end;
        }
        GraphData {
            mentions: self
                .mentions
                .iter()
                .filter(|m| entity_ok.contains(m.0.as_str()) && chunk_ok.contains(m.1.as_str()))
                .cloned()
                .collect(),
            synonyms: self.synonyms.iter().filter(|s| both(&s.0, &s.1)).cloned().collect(),
            similar: self
                .similar
                .iter()
                .filter(|s| chunk_ok.contains(s.0.as_str()) && chunk_ok.contains(s.1.as_str()))
                .cloned()
                .collect(),
            relations: self
                .relations
                .iter()
                .filter(|r| wanted(&support.relations, &r.id) && both(&r.source_id, &r.target_id))
                .cloned()
                .collect(),
            entities,
            chunks,
            facts,
        }
    }
}

impl GraphData {
    /// The chunks `chunk_ids` that exist, each with the previous and the next chunk of its
    /// document (by ordinal, then id), and every SIMILAR_TO edge with an end among them,
    /// each list in [`GraphData`] order; the other lists are left empty. What every
    /// backend's [`crate::StoreRead::chunk_links`] must equal (and the default one).
    pub fn chunk_links(&self, chunk_ids: &[String]) -> GraphData {
        use std::collections::{BTreeMap, BTreeSet};
        let asked: BTreeSet<&str> = chunk_ids.iter().map(String::as_str).collect();
        let mut by_doc: BTreeMap<&str, Vec<&ChunkRow>> = BTreeMap::new();
        for c in &self.chunks {
            by_doc.entry(c.doc_id.as_str()).or_default().push(c);
        }
        let mut kept: BTreeSet<&str> = BTreeSet::new();
        for doc in by_doc.values_mut() {
            doc.sort_by(|a, b| (a.ordinal, &a.id).cmp(&(b.ordinal, &b.id)));
            for (i, c) in doc.iter().enumerate().filter(|(_, c)| asked.contains(c.id.as_str())) {
                let around = i.checked_sub(1).and_then(|p| doc.get(p)).into_iter().chain(doc.get(i + 1));
                kept.extend(std::iter::once(c.id.as_str()).chain(around.map(|x| x.id.as_str())));
            }
        }
        GraphData {
            chunks: self.chunks.iter().filter(|c| kept.contains(c.id.as_str())).cloned().collect(),
            similar: self
                .similar
                .iter()
                .filter(|s| asked.contains(s.0.as_str()) || asked.contains(s.1.as_str()))
                .cloned()
                .collect(),
            ..GraphData::default()
        }
    }
}
