//! Field names, their synonyms, and lenient coercion of values to the types we need.
//!
//! LLMs rename keys (`entity_name`, `head`, `Relationship Strength`), put numbers in
//! strings (`"0.8"`, `"high"`, `"8/10"`), lists where strings belong, and placeholders
//! (`"N/A"`, `null`) where names belong. Everything here turns such values into
//! `Option<String>` / `Option<f64>` and never fails.

use rhizome_core::ids::normalize_name;
use serde_json::{Map, Value};

use super::json_repair::TRUNCATED;

/// Key synonyms, already normalised with [`norm_key`] (lowercase ASCII alphanumerics).
pub(crate) const ENTITY_LISTS: &[&str] = &["entities", "entity", "nodes", "namedentities", "ents", "entitylist"];
pub(crate) const RELATION_LISTS: &[&str] =
    &["relations", "relationships", "relation", "relationship", "edges", "links", "rels"];
pub(crate) const FACT_LISTS: &[&str] =
    &["facts", "fact", "triples", "triplets", "statements", "openie", "extractedtriples"];

pub(crate) const NAME: &[&str] = &["name", "entityname", "entity", "entitytext", "mention"];
pub(crate) const ENTITY_TYPE: &[&str] = &["type", "entitytype", "category", "label", "kind", "class", "ner"];
pub(crate) const DESCRIPTION: &[&str] = &[
    "description",
    "desc",
    "entitydescription",
    "relationshipdescription",
    "relationdescription",
    "explanation",
    "definition",
    "details",
    "evidence",
];
pub(crate) const IMPORTANCE: &[&str] = &["importance", "salience", "relevance", "score", "weight", "confidence"];
pub(crate) const SOURCE: &[&str] =
    &["source", "src", "head", "subject", "from", "sourceentity", "sourcename", "sourceid", "entity1", "start"];
pub(crate) const TARGET: &[&str] =
    &["target", "dst", "tail", "object", "to", "targetentity", "targetname", "targetid", "entity2", "end"];
pub(crate) const REL_TYPE: &[&str] =
    &["relation", "relationtype", "reltype", "type", "predicate", "relationship", "relationshiptype", "label"];
pub(crate) const STRENGTH: &[&str] =
    &["strength", "relationshipstrength", "weight", "score", "confidence", "importance"];
pub(crate) const SUBJECT: &[&str] = &["subject", "s", "head", "source", "subj"];
pub(crate) const PREDICATE: &[&str] = &["predicate", "p", "relation", "verb", "pred", "relationship", "type"];
pub(crate) const OBJECT: &[&str] = &["object", "o", "tail", "target", "obj"];

/// A key reduced to lowercase ASCII letters and digits: `Entity_Name` → `entityname`.
pub(crate) fn norm_key(key: &str) -> String {
    key.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// The value of the first synonym (in the order given) present in `obj`.
pub(crate) fn get<'a>(obj: &'a Map<String, Value>, synonyms: &[&str]) -> Option<&'a Value> {
    synonyms.iter().find_map(|syn| obj.iter().find(|(k, v)| norm_key(k) == *syn && !v.is_null()).map(|(_, v)| v))
}

/// True when `obj` has a key among `synonyms`.
pub(crate) fn has(obj: &Map<String, Value>, synonyms: &[&str]) -> bool {
    get(obj, synonyms).is_some()
}

/// A value as text: strings trimmed, numbers and booleans printed, arrays joined with
/// ", ", objects by their name/text/value key. `None` for null and empty results.
pub(crate) fn text_of(v: &Value) -> Option<String> {
    let s = match v {
        Value::Null => return None,
        Value::String(s) if s == TRUNCATED => return None,
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Array(items) => items.iter().filter_map(text_of).collect::<Vec<_>>().join(", "),
        Value::Object(map) => return get(map, &["name", "text", "value", "label"]).and_then(text_of),
    };
    (!s.is_empty()).then_some(s)
}

/// The quote characters we strip from the ends of fields.
pub(crate) fn is_quote(c: char) -> bool {
    matches!(c, '"' | '\'' | '“' | '”' | '‘' | '’' | '„' | '«' | '»' | '`')
}

/// Strip whitespace, then surrounding quotes and markdown emphasis, from both ends.
pub(crate) fn strip_decoration(s: &str) -> &str {
    let mut t = s.trim();
    loop {
        let before = t.len();
        t = t.trim_matches('*').trim();
        if let Some(first) = t.chars().next() {
            if is_quote(first) {
                t = &t[first.len_utf8()..];
            }
        }
        if let Some(last) = t.chars().last() {
            if is_quote(last) {
                t = &t[..t.len() - last.len_utf8()];
            }
        }
        t = t.trim();
        if t.len() == before {
            return t;
        }
    }
}

/// A usable entity name, or `None` for empty and placeholder names (`null`, `N/A`, ...).
/// Case is kept as given; internal whitespace runs become one space.
pub(crate) fn clean_name(s: &str) -> Option<String> {
    let t = strip_decoration(s);
    let collapsed = t.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = collapsed.to_lowercase();
    const PLACEHOLDERS: &[&str] = &["null", "none", "n/a", "na", "nil", "undefined", "unknown", "-", "?", "nan"];
    if PLACEHOLDERS.contains(&lower.as_str()) || normalize_name(&collapsed).is_empty() {
        return None;
    }
    Some(collapsed)
}

/// A name from a JSON value (numbers are stringified, arrays joined).
pub(crate) fn name_of(v: Option<&Value>) -> Option<String> {
    v.and_then(|v| match v {
        // A list of names for one field: join with a space ("New", "York").
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().filter_map(text_of).collect();
            Some(parts.join(" "))
        }
        other => text_of(other),
    })
    .and_then(|s| clean_name(&s))
}

/// Free text (a description): trimmed, surrounding quotes removed; empty if absent.
pub(crate) fn description_of(v: Option<&Value>) -> String {
    let text = match v {
        Some(Value::Array(items)) => Some(items.iter().filter_map(text_of).collect::<Vec<_>>().join(" ")),
        other => other.and_then(text_of),
    };
    text.map(|s| strip_decoration(&s).to_string()).unwrap_or_default()
}

/// A type label: decoration stripped, `None` when empty or a placeholder.
pub(crate) fn label_of(s: &str) -> Option<String> {
    clean_name(s)
}

/// A score as read: `fixed` when it was written on a known 0..1 scale (a word, a
/// percentage, a fraction), so batch rescaling must leave it alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Score {
    pub value: f64,
    pub fixed: bool,
}

/// A score from a number, a numeric string (`"0.8"`, `"80%"`, `"8/10"`) or a word
/// (`"high"`, `"medium"`, `"low"`). Not yet scaled or clamped.
pub(crate) fn score_of(v: &Value) -> Option<Score> {
    let plain = |value: f64| value.is_finite().then_some(Score { value, fixed: false });
    match v {
        Value::Number(n) => n.as_f64().and_then(plain),
        Value::String(s) => score_from_str(s),
        Value::Bool(b) => Some(Score { value: if *b { 1.0 } else { 0.0 }, fixed: true }),
        Value::Array(items) => items.first().and_then(score_of),
        _ => None,
    }
}

/// See [`score_of`].
pub(crate) fn score_from_str(s: &str) -> Option<Score> {
    let t = strip_decoration(s).to_lowercase();
    let t = t.trim();
    let fixed = |value: f64| value.is_finite().then_some(Score { value, fixed: true });
    if let Some(p) = t.strip_suffix('%') {
        return p.trim().parse::<f64>().ok().and_then(|x| fixed(x / 100.0));
    }
    if let Some((a, b)) = t.split_once('/') {
        let (a, b) = (a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?);
        return if b > 0.0 { fixed(a / b) } else { None };
    }
    if let Ok(x) = t.parse::<f64>() {
        return x.is_finite().then_some(Score { value: x, fixed: false });
    }
    let word = match t {
        "very high" | "highest" | "critical" | "very strong" => 0.95,
        "high" | "strong" | "important" => 0.8,
        "medium" | "moderate" | "average" | "mid" => 0.5,
        "low" | "weak" | "minor" => 0.2,
        "very low" | "lowest" | "very weak" => 0.05,
        _ => return None,
    };
    fixed(word)
}

/// Bring raw scores into 0..1. Plain numbers are rescaled as a batch: if any is above 1
/// the batch is on a 0..10 scale (0..100 if any is above 10); `force_ten` selects 0..10
/// regardless (tuple records, whose strengths are 0..10 by convention). Then clamp.
pub(crate) fn rescale(raw: &[Option<Score>], force_ten: bool) -> Vec<Option<f32>> {
    let max = raw.iter().flatten().filter(|s| !s.fixed).fold(0.0f64, |m, s| m.max(s.value));
    let divisor = if max > 10.0 {
        100.0
    } else if max > 1.0 || force_ten {
        10.0
    } else {
        1.0
    };
    raw.iter()
        .map(|s| {
            s.map(|s| {
                let v = if s.fixed { s.value } else { s.value / divisor };
                v.clamp(0.0, 1.0) as f32
            })
        })
        .collect()
}

/// Entity-type synonyms: (label written by models, schema type it stands for).
const TYPE_SYNONYMS: &[(&str, &str)] = &[
    ("GEO", "LOCATION"),
    ("GPE", "LOCATION"),
    ("LOC", "LOCATION"),
    ("PLACE", "LOCATION"),
    ("CITY", "LOCATION"),
    ("COUNTRY", "LOCATION"),
    ("GEOGRAPHY", "LOCATION"),
    ("ORG", "ORGANIZATION"),
    ("ORGANISATION", "ORGANIZATION"),
    ("COMPANY", "ORGANIZATION"),
    ("INSTITUTION", "ORGANIZATION"),
    ("PER", "PERSON"),
    ("PEOPLE", "PERSON"),
    ("CHARACTER", "PERSON"),
    ("HUMAN", "PERSON"),
    ("TIME", "DATE"),
    ("YEAR", "DATE"),
    ("DATETIME", "DATE"),
    ("TECH", "TECHNOLOGY"),
    ("CURRENCY", "MONEY"),
    ("AMOUNT", "MONEY"),
    ("IDEA", "CONCEPT"),
    ("TOPIC", "CONCEPT"),
];

/// How an entity type relates to the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypeFit {
    /// In the schema (spelled as in the schema), directly or through a common synonym.
    Known(String),
    /// Not in the schema: mapped to the schema's CONCEPT.
    Concept,
    /// Not in the schema and the schema has no CONCEPT.
    Rejected,
}

/// Fit `label` (already cleaned) to `schema` (case-insensitive). An empty schema accepts
/// every type, uppercased.
pub(crate) fn fit_type(label: &str, schema: &[String]) -> TypeFit {
    let upper = label.to_uppercase().replace([' ', '-'], "_");
    if schema.is_empty() {
        return TypeFit::Known(upper);
    }
    let find = |t: &str| schema.iter().find(|s| s.trim().eq_ignore_ascii_case(t)).cloned();
    if let Some(s) = find(&upper).or_else(|| find(label.trim())) {
        return TypeFit::Known(s.trim().to_string());
    }
    let synonym = TYPE_SYNONYMS.iter().find(|(k, _)| *k == upper).map(|(_, v)| *v);
    // Plural forms: PERSONS, ORGANIZATIONS, EVENTS.
    let singular = upper.strip_suffix('S').and_then(&find);
    // "PERSON|ORGANIZATION", "person/character": the first alternative that fits.
    let alternative = || {
        let parts = label.split(['|', '/', ',']).map(str::trim).filter(|p| !p.is_empty());
        let parts: Vec<&str> = parts.collect();
        if parts.len() < 2 {
            return None;
        }
        parts.into_iter().find_map(|p| match fit_type(p, schema) {
            TypeFit::Known(t) => Some(t),
            _ => None,
        })
    };
    match synonym.and_then(&find).or(singular).or_else(alternative) {
        Some(s) => TypeFit::Known(s.trim().to_string()),
        None if find("CONCEPT").is_some() => TypeFit::Concept,
        None => TypeFit::Rejected,
    }
}

/// The schema's spelling of CONCEPT, if it has one (or "CONCEPT" for an empty schema).
pub(crate) fn concept_type(schema: &[String]) -> Option<String> {
    if schema.is_empty() {
        return Some("CONCEPT".to_string());
    }
    schema.iter().find(|s| s.trim().eq_ignore_ascii_case("CONCEPT")).map(|s| s.trim().to_string())
}
