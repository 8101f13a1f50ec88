//! The retrieval methods, by name. The only place method names are spelled.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// Dense + BM25 chunk retrieval, fused.
    Basic,
    /// Microsoft GraphRAG local search: entities -> mixed context under a token budget.
    Local,
    /// HippoRAG: facts linked to the question seed Personalized PageRank.
    Hippo,
    /// Anchors, ego-graph edges and paths between anchors.
    Multihop,
    /// Entity, relationship, chunk and fact discovery by several paths.
    Multipath,
    /// Neo4j-style modes.
    ChunkOnly,
    EntityOnly,
    Hybrid,
    GraphEnhanced,
    /// Microsoft GraphRAG global search: map-reduce over community reports.
    Global,
    /// Microsoft GraphRAG DRIFT: a report primer, then rounds of local search on follow-ups.
    Drift,
    /// Think-on-Graph: beam exploration of relation paths from the question's entities.
    Tog,
    /// Query analysis picks one of the others.
    Auto,
}

impl Method {
    pub const ALL: &'static [Method] = &[
        Method::Basic,
        Method::Local,
        Method::Hippo,
        Method::Multihop,
        Method::Multipath,
        Method::ChunkOnly,
        Method::EntityOnly,
        Method::Hybrid,
        Method::GraphEnhanced,
        Method::Global,
        Method::Drift,
        Method::Tog,
        Method::Auto,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Basic => "basic",
            Method::Local => "local",
            Method::Hippo => "hippo",
            Method::Multihop => "multihop",
            Method::Multipath => "multipath",
            Method::ChunkOnly => "chunk-only",
            Method::EntityOnly => "entity-only",
            Method::Hybrid => "hybrid",
            Method::GraphEnhanced => "graph-enhanced",
            Method::Global => "global",
            Method::Drift => "drift",
            Method::Tog => "tog",
            Method::Auto => "auto",
        }
    }
}

impl Method {
    /// One line on what the method does, for pickers and listings.
    pub fn description(self) -> &'static str {
        match self {
            Method::Basic => "Dense + BM25 chunk retrieval, fused",
            Method::Local => "GraphRAG local search: entities, relations, reports and chunks under a token budget",
            Method::Hippo => "HippoRAG: facts linked to the question seed Personalized PageRank",
            Method::Multihop => "Anchors, ego-graph edges and paths between anchors",
            Method::Multipath => "Entities, relations, chunks and facts found by several paths",
            Method::ChunkOnly => "Neo4j-style: chunks only",
            Method::EntityOnly => "Neo4j-style: entities and their relations only",
            Method::Hybrid => "Neo4j-style: chunks and entities",
            Method::GraphEnhanced => "Neo4j-style: chunks, then the graph around their entities",
            Method::Global => "GraphRAG global search: map-reduce over community reports",
            Method::Drift => "GraphRAG DRIFT: a report primer, then rounds of local search",
            Method::Tog => "Think-on-Graph: beam search over relation paths",
            Method::Auto => "Query analysis picks one of the others",
        }
    }

    /// The config sections whose settings change what this method returns, besides
    /// `retrieval` (which every method reads).
    pub fn settings_sections(self) -> &'static [&'static str] {
        match self {
            Method::Basic | Method::Auto => &[],
            Method::Local => &["local"],
            Method::Hippo => &["hippo"],
            Method::Multihop => &["multihop"],
            Method::Multipath => &["multipath"],
            Method::ChunkOnly | Method::EntityOnly | Method::Hybrid | Method::GraphEnhanced => &["modes"],
            Method::Global => &["global"],
            Method::Drift => &["drift", "local"],
            Method::Tog => &["tog"],
        }
    }
}

impl Serialize for Method {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let wanted = s.trim().to_lowercase().replace('_', "-");
        Method::ALL.iter().copied().find(|m| m.as_str() == wanted).ok_or_else(|| {
            let names: Vec<&str> = Method::ALL.iter().map(|m| m.as_str()).collect();
            let s = rhizome_core::text::clip(s, 80);
            format!("unknown method {s:?}; available: {}", names.join(", "))
        })
    }
}
