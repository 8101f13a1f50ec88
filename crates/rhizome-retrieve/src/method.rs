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
            format!("unknown method {s:?}; available: {}", names.join(", "))
        })
    }
}
