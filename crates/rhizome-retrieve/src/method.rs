//! The retrieval methods, by name. A method is known by its entry in the registry
//! ([`crate::REGISTRY`]): its name, description, settings sections, retriever and prompts.
//! Everything that lists, parses or builds methods reads that table.

use std::fmt;
use std::str::FromStr;

use rhizome_core::config::SectionKind;
use serde::{Serialize, Serializer};

use crate::Retriever;

/// A retrieval method: one of the registry's entries, named as `--method` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Method(&'static str);

/// What makes a method known: one entry of [`crate::REGISTRY`], kept in the method's own
/// module (`pub(crate) const METHODS: &[MethodEntry]`).
pub struct MethodEntry {
    pub method: Method,
    /// One line on what the method does, for pickers and listings.
    pub description: &'static str,
    /// Whether answering a question reads the entity graph: the neighbourhoods it
    /// touches, or the whole graph in memory up to `retrieval.whole_graph_up_to` entities.
    /// `basic`, `chunk-only` and `global` read text, vectors and reports only.
    pub reads_graph: bool,
    /// The config sections whose settings change what the method returns, besides
    /// `retrieval` (which every method reads): each a settings struct of the method's
    /// module, `&XConfig::KIND` ([`rhizome_core::config::Section`]).
    pub settings: &'static [&'static SectionKind],
    /// The retriever running the method (given the method: one retriever may run several).
    pub retriever: fn(Method) -> Box<dyn Retriever>,
    /// The prompts the method owns, `(name, text)`: files beside the method, embedded with
    /// `include_str!`, overridable by `NAME.txt` in `llm.prompts_dir`.
    pub prompts: &'static [(&'static str, &'static str)],
}

/// The methods that code elsewhere names (routing, the modes, drift's local search). A
/// method nobody names needs no constant: its registry entry is enough.
#[allow(non_upper_case_globals)]
impl Method {
    pub const Basic: Method = Method("basic");
    pub const Local: Method = Method("local");
    pub const Hippo: Method = Method("hippo");
    pub const Multihop: Method = Method("multihop");
    pub const Multipath: Method = Method("multipath");
    pub const ChunkOnly: Method = Method("chunk-only");
    pub const EntityOnly: Method = Method("entity-only");
    pub const Hybrid: Method = Method("hybrid");
    pub const GraphEnhanced: Method = Method("graph-enhanced");
    pub const Global: Method = Method("global");
    pub const Drift: Method = Method("drift");
    pub const Tog: Method = Method("tog");
    pub const Auto: Method = Method("auto");
}

/// Every entry of the registry, flattened, at compile time.
const ENTRIES: usize = count(crate::REGISTRY);

const fn count(table: &[&[MethodEntry]]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < table.len() {
        n += table[i].len();
        i += 1;
    }
    n
}

const fn flatten<const N: usize>(table: &[&[MethodEntry]]) -> [Method; N] {
    let mut out = [Method(""); N];
    let (mut k, mut i) = (0, 0);
    while i < table.len() {
        let mut j = 0;
        while j < table[i].len() {
            out[k] = table[i][j].method;
            k += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

const ALL_METHODS: [Method; ENTRIES] = flatten(crate::REGISTRY);

impl Method {
    /// Every method, in the registry's order (`auto` last).
    pub const ALL: &'static [Method] = &ALL_METHODS;

    /// A method of this name; only registry entries make one.
    pub(crate) const fn named(name: &'static str) -> Method {
        Method(name)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The registry entry of this method.
    pub fn entry(self) -> &'static MethodEntry {
        crate::REGISTRY
            .iter()
            .flat_map(|m| m.iter())
            .find(|e| e.method == self)
            .expect("a Method is made from a registry entry")
    }

    /// One line on what the method does, for pickers and listings.
    pub fn description(self) -> &'static str {
        self.entry().description
    }

    /// Whether answering a question reads the entity graph ([`MethodEntry::reads_graph`]).
    pub fn reads_graph(self) -> bool {
        self.entry().reads_graph
    }

    /// The config sections whose settings change what this method returns, besides
    /// `retrieval` (which every method reads).
    pub fn settings_sections(self) -> Vec<&'static str> {
        self.entry().settings.iter().map(|k| k.name).collect()
    }

    /// The retriever implementing this method.
    pub fn retriever(self) -> Box<dyn Retriever> {
        (self.entry().retriever)(self)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_names_each_method_once() {
        let mut seen = std::collections::HashSet::new();
        for m in Method::ALL {
            let name = m.as_str();
            assert!(seen.insert(name), "{name} registered twice");
            assert!(!name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{name:?}");
            assert!(!m.description().is_empty(), "{name}: no description");
            assert_eq!(name.parse::<Method>().unwrap(), *m);
        }
        assert_eq!(Method::ALL.last(), Some(&Method::Auto), "auto is listed last");
        for named in [
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
        ] {
            assert!(Method::ALL.contains(&named), "{named} has no registry entry");
        }
    }

    #[test]
    fn names_parse_loosely_and_unknown_ones_list_the_methods() {
        assert_eq!("Chunk_Only".parse::<Method>().unwrap(), Method::ChunkOnly);
        let e = "nosuch".parse::<Method>().unwrap_err();
        assert!(e.starts_with("unknown method \"nosuch\"; available: basic, local, hippo"), "{e}");
    }
}
