//! The aggregation rules of the support rule, as pure functions shared by every backend:
//! an entity, relation or fact row is recomputed from the support rows that remain, and
//! two backends given the same support rows (in the same order) compute the same row.
//! [`Rekeys`] are the rule by which a deletion re-keys an entity whose name went with the
//! deleted document.

use std::collections::BTreeMap;

use rhizome_core::ids::{entity_id, normalize_name, relation_id};
use rhizome_core::{EmbedNames, Error, Result};

pub use rhizome_core::aggregate::{descriptions, entity_description, relation_row};

/// Pick the value with the largest weight; ties go to the smallest value (byte order).
pub fn majority(votes: &BTreeMap<String, u64>) -> String {
    let mut best: Option<(&String, u64)> = None;
    for (k, &v) in votes {
        if best.is_none_or(|(_, bv)| v > bv) {
            best = Some((k, v));
        }
    }
    best.map(|(k, _)| k.clone()).unwrap_or_default()
}

/// One support row of an entity, in support order (document, chunk, name).
pub struct MentionVote<'a> {
    pub doc_id: &'a str,
    pub name: &'a str,
    pub entity_type: &'a str,
    pub description: &'a str,
    pub count: i64,
    pub importance: Option<f64>,
}

/// The entity row its support makes: (name, type, descriptions, fingerprint, importance).
pub fn entity_row(rows: &[MentionVote<'_>]) -> (String, String, Vec<String>, String, Option<f64>) {
    let judged: Vec<f64> = rows.iter().filter_map(|r| r.importance).collect();
    entity_row_judged(rows, &judged)
}

/// [`entity_row`] with the extractor's judgements given apart, in the order they are
/// averaged (the FalkorDB store averages them in the order they were written); the rows'
/// own `importance` is not read.
pub fn entity_row_judged(
    rows: &[MentionVote<'_>],
    judged: &[f64],
) -> (String, String, Vec<String>, String, Option<f64>) {
    let (mut names, mut types) = (BTreeMap::new(), BTreeMap::new());
    for r in rows {
        *names.entry(r.name.to_string()).or_insert(0) += r.count.max(1) as u64;
        *types.entry(r.entity_type.to_string()).or_insert(0) += r.count.max(1) as u64;
    }
    let (descriptions, fp) = descriptions(rows.iter().map(|r| r.description));
    let importance = importance(judged, rows.iter().map(|r| (r.doc_id, r.count)));
    (majority(&names), majority(&types), descriptions, fp, importance)
}

/// An entity's importance from its support: the mean of the extractor's judgements when
/// it made some (an LLM does), else from how often it is mentioned (`f`, the support's
/// counts summed) and in how many documents (`s`): `x / (x + 3)` with
/// `x = ln(1 + f) (1 + ln s)`, so that every index has one whatever its extractor. One
/// mention in one document gives 0.19, five in one 0.37, twenty in three 0.68, a hundred
/// in twenty 0.86. Made from the support alone, it is the same after a deletion as if the
/// document had never been indexed. None without support.
pub fn importance<'a>(judged: &[f64], mentions: impl IntoIterator<Item = (&'a str, i64)>) -> Option<f64> {
    if !judged.is_empty() {
        return Some(judged.iter().sum::<f64>() / judged.len() as f64);
    }
    let (mut f, mut docs) = (0.0f64, std::collections::BTreeSet::new());
    for (doc, count) in mentions {
        f += count.max(1) as f64;
        docs.insert(doc);
    }
    if docs.is_empty() {
        return None;
    }
    let x = (1.0 + f).ln() * (1.0 + (docs.len() as f64).ln());
    Some(x / (x + 3.0))
}

/// The key an entity's remaining support gives it once a deletion took every row whose
/// name the entity is keyed by (an entity's id is the id of the name it was first written
/// under; names merged into it as aliases keep theirs): the id of the name the rows vote
/// for, weighted by count as [`entity_row`] does, and the text the new key's vector is
/// embedded from (the normalised name, as the pipeline embeds a new entity). `None` while
/// some row's name still gives `id`, or when no row remains.
pub fn new_key<'a>(id: &str, rows: impl IntoIterator<Item = (&'a str, i64)>) -> Option<(String, String)> {
    let mut votes = BTreeMap::new();
    for (name, count) in rows {
        if entity_id(name) == id {
            return None;
        }
        *votes.entry(name.to_string()).or_insert(0) += count.max(1) as u64;
    }
    if votes.is_empty() {
        return None;
    }
    let name = majority(&votes);
    Some((entity_id(&name), normalize_name(&name)))
}

/// The entities a deletion re-keys ([`new_key`]): old id -> new id, and the new ids'
/// vectors. Every backend moves the re-keyed entities' support rows, the relation and
/// fact rows naming them, and their summaries to the new ids, then refreshes the
/// aggregates, so that the index equals one where the deleted document was never indexed.
#[derive(Debug, Default)]
pub struct Rekeys {
    pub keys: BTreeMap<String, String>,
    pub vectors: Vec<(String, Vec<f32>)>,
}

impl Rekeys {
    /// From the support that remains, once the document is gone, of each entity it
    /// supported: (name, count) rows by entity id. `embed` is called once, with the texts
    /// of the new keys, and only when some entity is re-keyed.
    pub fn plan(remaining: &BTreeMap<String, Vec<(String, i64)>>, embed: EmbedNames<'_>) -> Result<Rekeys> {
        let mut out = Rekeys::default();
        let mut texts: BTreeMap<String, String> = BTreeMap::new();
        for (id, rows) in remaining {
            if let Some((key, text)) = new_key(id, rows.iter().map(|(n, c)| (n.as_str(), *c))) {
                out.keys.insert(id.clone(), key.clone());
                texts.insert(key, text);
            }
        }
        if texts.is_empty() {
            return Ok(out);
        }
        let (ids, texts): (Vec<String>, Vec<String>) = texts.into_iter().unzip();
        let vectors = embed(&texts)?;
        if vectors.len() != texts.len() {
            return Err(Error::Store(format!(
                "re-keying entities: {} names embedded into {} vectors",
                texts.len(),
                vectors.len()
            )));
        }
        out.vectors = ids.into_iter().zip(vectors).collect();
        Ok(out)
    }

    #[cfg(any(feature = "postgres", feature = "falkordb"))]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The id an entity id becomes.
    pub fn map<'a>(&'a self, id: &'a str) -> &'a str {
        self.keys.get(id).map_or(id, String::as_str)
    }

    /// Whether an entity id is re-keyed.
    #[cfg(any(feature = "postgres", feature = "falkordb"))]
    pub fn has(&self, id: &str) -> bool {
        self.keys.contains_key(id)
    }

    /// A relation support row with a re-keyed endpoint: its new (source, target, relation
    /// id), or `None` when both endpoints become one entity (a relation of an entity with
    /// itself is dropped, as merging drops it).
    pub fn relation(&self, source: &str, rel_type: &str, target: &str) -> Option<(String, String, String)> {
        let (s, t) = (self.map(source), self.map(target));
        (s != t).then(|| (s.to_string(), t.to_string(), relation_id(s, rel_type, t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn importance_is_judged_else_made_from_frequency_and_spread() {
        assert_eq!(importance(&[0.2, 0.6], [("d1", 9)]), Some(0.4));
        assert_eq!(importance(&[], []), None);
        let one = importance(&[], [("d1", 1)]).unwrap();
        let five = importance(&[], [("d1", 5)]).unwrap();
        let spread = importance(&[], [("d1", 2), ("d2", 2), ("d3", 1)]).unwrap();
        assert!((one - 0.1876).abs() < 1e-3 && one < five && five < spread && spread < 1.0, "{one} {five} {spread}");
    }

    #[test]
    fn an_entity_is_re_keyed_only_when_no_row_names_it_by_its_key() {
        let id = entity_id("United States Congress");
        assert_eq!(new_key(&id, [("US Congress", 1), ("united states congress", 1)]), None);
        assert_eq!(new_key(&id, []), None);
        assert_eq!(
            new_key(&id, [("US Congress", 1), ("U.S. Congress", 3)]),
            Some((entity_id("U.S. Congress"), "u.s. congress".to_string()))
        );
    }

    #[test]
    fn a_plan_embeds_each_new_key_once() {
        let rows = |names: &[&str]| names.iter().map(|n| (n.to_string(), 1)).collect::<Vec<_>>();
        let remaining = BTreeMap::from([
            (entity_id("United States Congress"), rows(&["US Congress"])),
            (entity_id("USA Congress"), rows(&["US Congress"])),
            (entity_id("Washington"), rows(&["Washington"])),
        ]);
        let mut calls = Vec::new();
        let plan = Rekeys::plan(&remaining, &mut |t: &[String]| {
            calls.push(t.to_vec());
            Ok(t.iter().map(|_| vec![1.0]).collect())
        })
        .unwrap();
        assert_eq!(calls, [vec!["us congress".to_string()]]);
        assert_eq!(plan.keys.len(), 2);
        assert_eq!(plan.map(&entity_id("USA Congress")), entity_id("US Congress"));
        assert_eq!(plan.relation(&entity_id("USA Congress"), "R", &entity_id("United States Congress")), None);
        let none = Rekeys::plan(&BTreeMap::from([(entity_id("x"), rows(&["X"]))]), &mut |_: &[String]| {
            panic!("nothing to embed")
        });
        assert!(none.unwrap().is_empty());
    }
}
