//! Entity resolution, in two steps:
//! 1. [`resolve`]: within one chunk's extraction, names that normalise alike
//!    ([`normalize_name`]) are one entity (ids are hashes of the normalised name, so this
//!    also merges them with every other chunk and document).
//! 2. [`merge_similar`]: a new entity whose name embeds close to an existing entity (or an
//!    earlier new one) *and* whose name passes a lexical check ([`same_entity_name`]) becomes
//!    an alias of it: its mentions, relations and facts are written under the existing id.
//!    Embedding similarity alone is not enough: "August 29" and "August 19", or
//!    "University of Texas" and "University of North Texas", embed above 0.9.
//!
//! Descriptions of a merged entity come from several chunks; with an LLM configured,
//! `llm.summarize_min_descriptions` has them merged into one summary.

use std::collections::{BTreeMap, HashMap};

use rhizome_core::ids::{content_id, entity_id, fact_id, normalize_name, relation_id};
use rhizome_core::{
    dot, Covariate, CovariateRecord, Extraction, Fact, FactRecord, MentionRecord, Relation, RelationRecord, Result,
    StoreRead, VectorKind, WriteBatch,
};

/// Resolve one extraction into records: entities merged by normalised name; relation and
/// fact endpoints and claim subjects and objects become entities too. Records with an
/// empty name are dropped. A claim's id is made of its chunk, subject, type and
/// description: the same claim extracted again is the same record.
pub fn resolve(ex: &Extraction, doc_id: &str, chunk_id: Option<&str>, batch: &mut WriteBatch) {
    let mut mentions: BTreeMap<String, MentionRecord> = BTreeMap::new();
    let mut mention = |name: &str, ty: &str, desc: &str, count: u32, importance: Option<f32>| {
        let key = normalize_name(name);
        if key.is_empty() {
            return None;
        }
        let id = entity_id(name);
        let m = mentions.entry(id.clone()).or_insert_with(|| MentionRecord {
            entity_id: id.clone(),
            name: name.trim().to_string(),
            entity_type: ty.to_string(),
            description: desc.to_string(),
            doc_id: doc_id.to_string(),
            chunk_id: chunk_id.map(str::to_string),
            count: 0,
            importance: None,
        });
        m.count += count;
        if let Some(x) = importance.filter(|x| x.is_finite()) {
            m.importance = Some(m.importance.map_or(x, |y: f32| y.max(x)).clamp(0.0, 1.0));
        }
        if m.description.is_empty() {
            m.description = desc.to_string();
        }
        Some(id)
    };
    for e in &ex.entities {
        mention(&e.name, &e.entity_type, &e.description, e.count.max(1), e.importance);
    }
    let mut relations: BTreeMap<String, RelationRecord> = BTreeMap::new();
    for r in &ex.relations {
        let (Some(s), Some(t)) = (mention(&r.source, "ENTITY", "", 0, None), mention(&r.target, "ENTITY", "", 0, None))
        else {
            continue;
        };
        let rel_type = if r.rel_type.trim().is_empty() { "RELATED" } else { r.rel_type.trim() };
        if s == t {
            continue;
        }
        let id = relation_id(&s, rel_type, &t);
        let rec = relations.entry(id.clone()).or_insert_with(|| RelationRecord {
            relation: Relation {
                id,
                source_id: s,
                target_id: t,
                rel_type: rel_type.to_string(),
                description: r.description.clone(),
                weight: 0.0,
            },
            doc_id: doc_id.to_string(),
            chunk_id: chunk_id.map(str::to_string),
        });
        rec.relation.weight += if r.weight > 0.0 { r.weight } else { 1.0 };
    }
    let mut facts: BTreeMap<String, FactRecord> = BTreeMap::new();
    for f in &ex.facts {
        let (Some(s), Some(o)) =
            (mention(&f.subject, "ENTITY", "", 0, None), mention(&f.object, "ENTITY", "", 0, None))
        else {
            continue;
        };
        if normalize_name(&f.predicate).is_empty() {
            continue;
        }
        let id = fact_id(&f.subject, &f.predicate, &f.object);
        facts.entry(id.clone()).or_insert_with(|| FactRecord {
            fact: Fact {
                id,
                subject: f.subject.trim().to_string(),
                predicate: f.predicate.trim().to_string(),
                object: f.object.trim().to_string(),
                subject_id: s,
                object_id: o,
            },
            doc_id: doc_id.to_string(),
            chunk_id: chunk_id.map(str::to_string),
        });
    }
    let mut claims: BTreeMap<String, CovariateRecord> = BTreeMap::new();
    for c in &ex.claims {
        let Some(subject_id) = mention(&c.subject, "ENTITY", "", 0, None) else {
            continue;
        };
        let object_id = c.object.as_deref().and_then(|o| mention(o, "ENTITY", "", 0, None));
        let at = chunk_id.unwrap_or(doc_id);
        let id = content_id("clm_", &[at, &subject_id, &c.claim_type, &c.description]);
        claims.entry(id.clone()).or_insert_with(|| CovariateRecord {
            covariate: Covariate {
                id,
                covariate_type: "claim".into(),
                claim_type: c.claim_type.clone(),
                subject_id,
                object_id,
                status: c.status.clone(),
                start_date: c.start_date.clone(),
                end_date: c.end_date.clone(),
                description: c.description.clone(),
                source_text: c.source_text.clone(),
            },
            doc_id: doc_id.to_string(),
            chunk_id: chunk_id.map(str::to_string),
        });
    }
    batch.covariates.extend(claims.into_values());
    batch.mentions.extend(mentions.into_values().map(|mut m| {
        m.count = m.count.max(1);
        m
    }));
    batch.relations.extend(relations.into_values());
    batch.facts.extend(facts.into_values());
}

/// Most new entities compared with each other in one batch (the comparison is quadratic);
/// beyond it, new entities are only compared with the store.
const MAX_IN_BATCH: usize = 6000;

/// Merge the new entities of `batch` (those in `new_vecs`, with their name vectors) into
/// existing or earlier new entities: cosine >= `threshold` and [`same_entity_name`].
/// Rewrites the batch's records to the surviving ids, drops the aliases from `new_vecs`, and
/// returns the aliases (alias id -> surviving id).
pub fn merge_similar(
    store: &dyn StoreRead,
    batch: &mut WriteBatch,
    new_vecs: &mut Vec<(String, Vec<f32>)>,
    threshold: f32,
) -> Result<BTreeMap<String, String>> {
    let mut aliases: BTreeMap<String, String> = BTreeMap::new();
    if new_vecs.is_empty() || threshold <= 0.0 {
        return Ok(aliases);
    }
    let names: HashMap<&str, &str> = batch.mentions.iter().map(|m| (m.entity_id.as_str(), m.name.as_str())).collect();
    let queries: Vec<Vec<f32>> = new_vecs.iter().map(|(_, v)| v.clone()).collect();
    let hits = store.vector_search_many(VectorKind::Entity, &queries, 3)?;
    // Names of the stored candidates, fetched once.
    let mut wanted: Vec<String> =
        hits.iter().flatten().filter(|h| h.score >= threshold).map(|h| h.id.clone()).collect();
    wanted.sort();
    wanted.dedup();
    let stored: HashMap<String, String> = store.entities(&wanted)?.into_iter().map(|e| (e.id, e.name)).collect();
    let mut kept: Vec<usize> = Vec::new();
    for (i, (id, v)) in new_vecs.iter().enumerate() {
        let name = names.get(id.as_str()).copied().unwrap_or("");
        let from_store = hits[i]
            .iter()
            .filter(|h| h.score >= threshold)
            .find(|h| stored.get(&h.id).is_some_and(|other| same_entity_name(name, other)));
        if let Some(h) = from_store {
            aliases.insert(id.clone(), h.id.clone());
            continue;
        }
        if new_vecs.len() <= MAX_IN_BATCH {
            let earlier = kept.iter().copied().find(|&j| {
                let (other_id, other_v) = &new_vecs[j];
                dot(v, other_v) >= threshold
                    && same_entity_name(name, names.get(other_id.as_str()).copied().unwrap_or(""))
            });
            if let Some(j) = earlier {
                aliases.insert(id.clone(), new_vecs[j].0.clone());
                continue;
            }
        }
        kept.push(i);
    }
    if aliases.is_empty() {
        return Ok(aliases);
    }
    new_vecs.retain(|(id, _)| !aliases.contains_key(id));
    apply_aliases(batch, &aliases);
    Ok(aliases)
}

/// Rewrite records to surviving ids; relations get the ids of their new endpoints (and a
/// relation of an entity with itself is dropped).
fn apply_aliases(batch: &mut WriteBatch, aliases: &BTreeMap<String, String>) {
    let map = |id: &mut String| {
        if let Some(to) = aliases.get(id.as_str()) {
            *id = to.clone();
        }
    };
    for m in &mut batch.mentions {
        map(&mut m.entity_id);
    }
    for r in &mut batch.relations {
        map(&mut r.relation.source_id);
        map(&mut r.relation.target_id);
        r.relation.id = relation_id(&r.relation.source_id, &r.relation.rel_type, &r.relation.target_id);
    }
    batch.relations.retain(|r| r.relation.source_id != r.relation.target_id);
    for f in &mut batch.facts {
        map(&mut f.fact.subject_id);
        map(&mut f.fact.object_id);
    }
    for c in &mut batch.covariates {
        map(&mut c.covariate.subject_id);
        if let Some(o) = c.covariate.object_id.as_mut() {
            map(o);
        }
    }
}

/// Whether two names can denote the same entity, judged by their letters alone. True when,
/// after lower-casing, dropping punctuation and spaces and a trailing parenthesis, they are
/// equal; or one is the other's plural (common nouns only); or one abbreviates a run of the
/// other's words by initials ("US Congress", "United States Congress"). Never true when
/// their numbers differ ("31 goals", "32 goals").
pub fn same_entity_name(a: &str, b: &str) -> bool {
    if digit_runs(a) != digit_runs(b) {
        return false;
    }
    let (a, b) = (strip_parenthesis(a), strip_parenthesis(b));
    let (sa, sb) = (squeeze(a), squeeze(b));
    if sa.is_empty() || sb.is_empty() {
        return false;
    }
    if sa == sb {
        return true;
    }
    let lowercase = |s: &str| !s.chars().any(char::is_uppercase);
    if lowercase(a) && lowercase(b) {
        let (short, long) = if sa.len() < sb.len() { (&sa, &sb) } else { (&sb, &sa) };
        if let Some(rest) = long.strip_prefix(short.as_str()) {
            if rest == "s" || rest == "es" {
                return true;
            }
        }
    }
    abbreviates(&words(a), &words(b)) || abbreviates(&words(b), &words(a))
}

/// Numbers in a name, in order.
fn digit_runs(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_ascii_digit()).filter(|x| !x.is_empty()).map(str::to_string).collect()
}

fn strip_parenthesis(s: &str) -> &str {
    let t = s.trim();
    match (t.ends_with(')'), t.rfind('(')) {
        (true, Some(i)) if i > 0 => t[..i].trim_end(),
        _ => t,
    }
}

/// Lower-case letters and digits only.
fn squeeze(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| c.is_whitespace() || c == '-').map(squeeze).filter(|w| !w.is_empty()).collect()
}

/// True when `short` equals `long` with one run of two or more of `long`'s words replaced
/// by the word of their initials.
fn abbreviates(short: &[String], long: &[String]) -> bool {
    if short.len() >= long.len() {
        return false;
    }
    let span = long.len() - short.len() + 1;
    (0..short.len()).any(|i| {
        let initials: String = long[i..i + span].iter().filter_map(|w| w.chars().next()).collect();
        short[..i] == long[..i] && short[i] == initials && short[i + 1..] == long[i + span..]
    })
}

#[cfg(test)]
mod tests {
    use super::same_entity_name;

    #[test]
    fn names_that_denote_the_same_entity() {
        for (a, b) in [
            ("Saint-Denis", "Saint Denis"),
            ("Yoon So - hee", "Yoon So-hee"),
            ("7/8 December 1941", "7 / 8 December 1941"),
            ("atomic bombs", "atomic bomb"),
            ("US Congress", "United States Congress"),
            ("U.S. Constitution", "United States Constitution"),
            (
                "United Kingdom Antarctic Place-Names Committee",
                "United Kingdom Antarctic Place-Names Committee (UK-APC)",
            ),
        ] {
            assert!(same_entity_name(a, b), "{a} = {b}");
        }
    }

    #[test]
    fn names_that_embed_close_but_differ() {
        for (a, b) in [
            ("August 29", "August 19"),
            ("31 goals", "32 goals"),
            ("University of Texas", "University of North Texas"),
            ("Big Eye", "Big Eyes"),
            ("Cyprus", "Cypriot"),
            ("Niels Bohr", "Aage Bohr"),
            ("Winter Olympics", "2006 Winter Olympics"),
            ("", "x"),
        ] {
            assert!(!same_entity_name(a, b), "{a} != {b}");
        }
    }
}
