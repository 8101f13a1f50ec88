//! Raw records to the core [`Extraction`]: schema pruning, score scaling, entity
//! deduplication, relation endpoints, fact deduplication.

use std::collections::{HashMap, HashSet};

use rhizome_core::ids::normalize_name;
use rhizome_core::model::{ExtractedEntity, ExtractedFact, ExtractedRelation, Extraction};

use super::collect::Collector;
use super::fields::{concept_type, fit_type, rescale, TypeFit};
use super::ParseOutcome;

/// Turn everything collected into the outcome.
pub(crate) fn finish(mut col: Collector, schema: &[String]) -> ParseOutcome {
    let concept = concept_type(schema);
    let mut entities: Vec<ExtractedEntity> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut pruned: HashSet<String> = HashSet::new();
    let mut mapped: Vec<(String, usize)> = Vec::new();
    let mut rejected: Vec<(String, usize)> = Vec::new();

    // Importance: rescaled like JSON strengths (a 0..10 or 0..100 batch is brought to 0..1).
    let importances: Vec<_> = col.entities.iter().map(|e| e.importance).collect();
    let mut importance_scaled = rescale(&importances, false).into_iter();
    for raw in std::mem::take(&mut col.entities) {
        let importance = importance_scaled.next().flatten();
        let label = raw.entity_type.clone().unwrap_or_else(|| "CONCEPT".to_string());
        if raw.entity_type.is_none() {
            col.notes.add("entity without a type: set to CONCEPT");
        }
        let entity_type = match fit_type(&label, schema) {
            TypeFit::Known(t) => {
                if !t.eq_ignore_ascii_case(label.trim()) {
                    bump(&mut mapped, format!("{label} -> {t}"));
                }
                t
            }
            TypeFit::Concept => {
                let t = concept.clone().unwrap_or_else(|| "CONCEPT".to_string());
                bump(&mut mapped, format!("{label} -> {t}"));
                col.stats.retyped += 1;
                t
            }
            TypeFit::Rejected => {
                bump(&mut rejected, label);
                pruned.insert(normalize_name(&raw.name));
                col.stats.entities_dropped += 1;
                continue;
            }
        };
        let key = normalize_name(&raw.name);
        match index.get(&key) {
            Some(&i) => {
                col.stats.entities_merged += 1;
                let kept = &mut entities[i];
                if concept.as_deref() == Some(kept.entity_type.as_str()) && concept.as_ref() != Some(&entity_type) {
                    kept.entity_type = entity_type;
                }
                merge_description(&mut kept.description, &raw.description);
                if let Some(x) = importance {
                    kept.importance = Some(kept.importance.map_or(x, |y| y.max(x)));
                }
            }
            None => {
                index.insert(key, entities.len());
                entities.push(ExtractedEntity {
                    name: raw.name,
                    entity_type,
                    description: raw.description,
                    count: 1,
                    importance,
                });
            }
        }
    }
    if !mapped.is_empty() {
        col.notes.add(format!("entity types mapped to the schema: {}", list(&mapped)));
    }
    if !rejected.is_empty() {
        col.notes.add(format!(
            "dropped {} entities of types not in the schema (which has no CONCEPT): {}",
            rejected.iter().map(|(_, n)| n).sum::<usize>(),
            list(&rejected)
        ));
    }

    // Strengths: tuple records use 0..10 by convention; JSON is rescaled only if needed.
    let raws = std::mem::take(&mut col.relations);
    let tuple_scores: Vec<_> = raws.iter().filter(|r| r.from_tuple).map(|r| r.strength).collect();
    let json_scores: Vec<_> = raws.iter().filter(|r| !r.from_tuple).map(|r| r.strength).collect();
    let (mut tuple_scaled, mut json_scaled) =
        (rescale(&tuple_scores, true).into_iter(), rescale(&json_scores, false).into_iter());

    let mut relations = Vec::new();
    for raw in raws {
        let weight = if raw.from_tuple { tuple_scaled.next() } else { json_scaled.next() }.flatten();
        let ends = [&raw.source, &raw.target].map(|n| normalize_name(n));
        if ends.iter().any(|k| !index.contains_key(k) && pruned.contains(k)) {
            col.stats.relations_dropped += 1;
            col.notes.add("dropped relation whose endpoint was dropped by the schema");
            continue;
        }
        let missing = ends.iter().any(|k| !index.contains_key(k));
        if missing && concept.is_none() {
            col.stats.relations_dropped += 1;
            col.notes.add("dropped relation whose endpoint is not an entity (schema has no CONCEPT)");
            continue;
        }
        let mut names = Vec::with_capacity(2);
        for (key, name) in ends.iter().zip([&raw.source, &raw.target]) {
            let i = match index.get(key) {
                Some(&i) => i,
                None => {
                    col.stats.endpoints_added += 1;
                    col.repaired = true;
                    col.notes.add("relation endpoint missing from the entities: added as CONCEPT");
                    index.insert(key.clone(), entities.len());
                    entities.push(ExtractedEntity {
                        name: name.clone(),
                        entity_type: concept.clone().unwrap_or_default(),
                        description: String::new(),
                        count: 1,
                        importance: None,
                    });
                    entities.len() - 1
                }
            };
            names.push(entities[i].name.clone());
        }
        let target = names.pop().unwrap_or_default();
        let source = names.pop().unwrap_or_default();
        relations.push(ExtractedRelation {
            source,
            target,
            rel_type: raw.rel_type.unwrap_or_else(|| "RELATED".to_string()),
            description: raw.description,
            weight: weight.unwrap_or(1.0),
        });
    }

    let mut facts = Vec::new();
    let mut seen = HashSet::new();
    for f in std::mem::take(&mut col.facts) {
        let key = [&f.subject, &f.predicate, &f.object].map(|s| normalize_name(s));
        if seen.insert(key) {
            facts.push(ExtractedFact { subject: f.subject, predicate: f.predicate, object: f.object });
        } else {
            col.stats.facts_merged += 1;
        }
    }

    let s = &col.stats;
    let dropped = s.entities_dropped + s.relations_dropped + s.facts_dropped + s.fragments_dropped;
    ParseOutcome {
        extraction: Extraction { entities, relations, facts, claims: Vec::new() },
        warnings: col.notes.render(),
        dropped,
        repaired: col.repaired,
        stats: col.stats,
    }
}

fn bump(counts: &mut Vec<(String, usize)>, key: String) {
    match counts.iter_mut().find(|(k, _)| *k == key) {
        Some((_, n)) => *n += 1,
        None => counts.push((key, 1)),
    }
}

fn list(counts: &[(String, usize)]) -> String {
    counts.iter().map(|(k, n)| format!("{k} ({n})")).collect::<Vec<_>>().join(", ")
}

/// Append `extra` to `desc` unless it is empty or already there.
fn merge_description(desc: &mut String, extra: &str) {
    let extra = extra.trim();
    if extra.is_empty() || desc.to_lowercase().contains(&extra.to_lowercase()) {
        return;
    }
    if desc.trim().is_empty() {
        *desc = extra.to_string();
        return;
    }
    let sentence_end = desc.trim_end().ends_with(['.', '!', '?', '。']);
    let sep = if sentence_end { " " } else { "; " };
    *desc = format!("{}{sep}{extra}", desc.trim_end());
}
