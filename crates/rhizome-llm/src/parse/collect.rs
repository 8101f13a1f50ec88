//! Raw records as read from either format, before schema pruning and deduplication,
//! and the bookkeeping (counts, warnings) shared by the readers.

use super::fields::Score;
use super::ParseStats;

#[derive(Debug, Clone)]
pub(crate) struct RawEntity {
    pub name: String,
    pub entity_type: Option<String>,
    pub description: String,
    /// Read and validated but not part of the core model (yet).
    #[allow(dead_code)]
    pub importance: Option<Score>,
}

#[derive(Debug, Clone)]
pub(crate) struct RawRelation {
    pub source: String,
    pub target: String,
    pub rel_type: Option<String>,
    pub description: String,
    /// Unscaled.
    pub strength: Option<Score>,
    /// From a tuple record (strength on a 0..10 scale by convention).
    pub from_tuple: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct RawFact {
    pub subject: String,
    pub predicate: String,
    pub object: String,
}

/// Warnings counted by message, in first-seen order, so a response with a hundred
/// broken records yields one line, not a hundred.
#[derive(Debug, Default)]
pub(crate) struct Notes(Vec<(String, usize)>);

impl Notes {
    pub fn add(&mut self, msg: impl Into<String>) {
        self.add_n(msg, 1);
    }
    pub fn add_n(&mut self, msg: impl Into<String>, n: usize) {
        let msg = msg.into();
        match self.0.iter_mut().find(|(m, _)| *m == msg) {
            Some((_, k)) => *k += n,
            None => self.0.push((msg, n)),
        }
    }
    pub fn render(self) -> Vec<String> {
        self.0.into_iter().map(|(m, n)| if n == 1 { m } else { format!("{m} (x{n})") }).collect()
    }
}

/// Everything read so far.
#[derive(Debug, Default)]
pub(crate) struct Collector {
    pub entities: Vec<RawEntity>,
    pub relations: Vec<RawRelation>,
    pub facts: Vec<RawFact>,
    pub stats: ParseStats,
    pub notes: Notes,
    /// Some repair was needed.
    pub repaired: bool,
}

impl Collector {
    /// An entity record; dropped (and counted) without a usable name.
    pub fn entity(
        &mut self,
        name: Option<String>,
        entity_type: Option<String>,
        description: String,
        importance: Option<Score>,
    ) {
        self.stats.entity_records += 1;
        match name {
            Some(name) => self.entities.push(RawEntity { name, entity_type, description, importance }),
            None => {
                self.stats.entities_dropped += 1;
                self.notes.add("dropped entity without a usable name (empty, null or N/A)");
            }
        }
    }

    /// A relation record; dropped (and counted) without both endpoints, or as a self-loop.
    pub fn relation(
        &mut self,
        source: Option<String>,
        target: Option<String>,
        rel_type: Option<String>,
        description: String,
        strength: Option<Score>,
        from_tuple: bool,
    ) {
        self.stats.relation_records += 1;
        match (source, target) {
            (Some(source), Some(target)) => {
                if rhizome_core::ids::normalize_name(&source) == rhizome_core::ids::normalize_name(&target) {
                    self.stats.relations_dropped += 1;
                    self.notes.add("dropped relation from an entity to itself");
                    return;
                }
                self.relations.push(RawRelation { source, target, rel_type, description, strength, from_tuple })
            }
            _ => {
                self.stats.relations_dropped += 1;
                self.notes.add("dropped relation without a usable source or target");
            }
        }
    }

    /// A fact record; dropped (and counted) when a part is missing.
    pub fn fact(&mut self, subject: Option<String>, predicate: Option<String>, object: Option<String>) {
        self.stats.fact_records += 1;
        match (subject, predicate, object) {
            (Some(subject), Some(predicate), Some(object)) => self.facts.push(RawFact { subject, predicate, object }),
            _ => {
                self.stats.facts_dropped += 1;
                self.notes.add("dropped fact with a missing subject, predicate or object");
            }
        }
    }

    /// An entity record that could not be read at all.
    pub fn drop_entity(&mut self, why: &str) {
        self.stats.entity_records += 1;
        self.stats.entities_dropped += 1;
        self.notes.add(format!("dropped entity: {why}"));
    }
    pub fn drop_relation(&mut self, why: &str) {
        self.stats.relation_records += 1;
        self.stats.relations_dropped += 1;
        self.notes.add(format!("dropped relation: {why}"));
    }
    pub fn drop_fact(&mut self, why: &str) {
        self.stats.fact_records += 1;
        self.stats.facts_dropped += 1;
        self.notes.add(format!("dropped fact: {why}"));
    }
    /// A piece of output of unknown kind that could not be used.
    pub fn drop_fragment(&mut self, why: &str) {
        self.stats.fragments_dropped += 1;
        self.notes.add(format!("dropped unreadable record: {why}"));
    }
}
