//! JSON values (as read by [`super::json_repair`]) to raw records.
//!
//! The expected shape is `{"entities":[...],"relations":[...],"facts":[...]}`, with keys
//! in any casing or a known synonym (`nodes`, `edges`, `triples`, ...). Also accepted:
//! a bare array of records, single record objects (one per line, JSONL-like), list
//! elements written as arrays (`["Alice", "works for", "Acme"]`) or plain names, maps
//! keyed by entity name, and the whole thing wrapped one or two levels deep
//! (`{"result": {...}}`).

use serde_json::{Map, Value};

use super::collect::Collector;
use super::fields::*;
use super::json_repair::TRUNCATED;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Entity,
    Relation,
    Fact,
}

/// How deep to look for the extraction inside wrapper objects.
const MAX_WRAP: usize = 3;

/// True if `v` holds anything we can read as extraction output (used to tell an
/// extraction apart from other JSON, e.g. a community report).
pub(crate) fn is_extraction(v: &Value) -> bool {
    looks_like(v, 0)
}

fn looks_like(v: &Value, depth: usize) -> bool {
    match v {
        Value::Object(obj) => {
            !containers(obj).is_empty()
                || classify(obj).is_some()
                || (depth < MAX_WRAP && obj.values().any(|v| looks_like(v, depth + 1)))
        }
        Value::Array(items) => items.iter().any(|item| match item {
            Value::Object(obj) => classify(obj).is_some(),
            Value::Array(parts) => parts.len() == 3 && parts.iter().all(is_scalar),
            _ => false,
        }),
        _ => false,
    }
}

/// Read every record in `v` into `col`.
pub(crate) fn collect(v: &Value, col: &mut Collector) {
    walk(v, col, 0);
}

fn walk(v: &Value, col: &mut Collector, depth: usize) {
    match v {
        Value::Object(obj) => {
            let lists = containers(obj);
            if !lists.is_empty() {
                for (kind, list) in lists {
                    read_list(kind, list, col);
                }
            } else if let Some(kind) = classify(obj) {
                record_from_object(kind, obj, None, col);
            } else if depth < MAX_WRAP {
                for inner in obj.values() {
                    if looks_like(inner, depth + 1) {
                        walk(inner, col, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(obj) => match classify(obj) {
                        Some(kind) => record_from_object(kind, obj, None, col),
                        None if depth < MAX_WRAP => walk(item, col, depth + 1),
                        None => {}
                    },
                    Value::Array(parts) if parts.len() == 3 => record_from_array(Kind::Fact, parts, col),
                    Value::String(s) if s == TRUNCATED => {
                        col.drop_fragment("cut off at the end of the text");
                        col.repaired = true;
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_))
}

/// The record lists of an object: `(kind, value)` for each key naming one.
fn containers(obj: &Map<String, Value>) -> Vec<(Kind, &Value)> {
    let mut out = Vec::new();
    for (k, v) in obj {
        if !(v.is_array() || v.is_object()) {
            continue;
        }
        let key = norm_key(k);
        let kind = if ENTITY_LISTS.contains(&key.as_str()) {
            Kind::Entity
        } else if RELATION_LISTS.contains(&key.as_str()) {
            Kind::Relation
        } else if FACT_LISTS.contains(&key.as_str()) {
            Kind::Fact
        } else {
            continue;
        };
        out.push((kind, v));
    }
    out
}

/// What a free-standing object is, judged by its keys.
fn classify(obj: &Map<String, Value>) -> Option<Kind> {
    let spo = has(obj, &["subject"]) && has(obj, &["predicate"]) && has(obj, &["object"]);
    if spo && !has(obj, DESCRIPTION) && !has(obj, STRENGTH) {
        Some(Kind::Fact)
    } else if has(obj, SOURCE) && has(obj, TARGET) {
        Some(Kind::Relation)
    } else if has(obj, NAME) {
        Some(Kind::Entity)
    } else {
        None
    }
}

fn read_list(kind: Kind, list: &Value, col: &mut Collector) {
    match list {
        Value::Array(items) => {
            for item in items {
                read_item(kind, item, None, col);
            }
        }
        // One record where a list belongs.
        Value::Object(obj) if classify(obj).is_some() => {
            record_from_object(kind, obj, None, col);
        }
        // A map keyed by name: {"Alice": {"type": "PERSON"}, "Bob": "a baker"}.
        Value::Object(obj) => {
            for (key, item) in obj {
                read_item(kind, item, Some(key), col);
            }
        }
        _ => {}
    }
}

/// Count a record of `kind` as dropped, with the reason.
fn drop_record(kind: Kind, why: &str, col: &mut Collector) {
    match kind {
        Kind::Entity => col.drop_entity(why),
        Kind::Relation => col.drop_relation(why),
        Kind::Fact => col.drop_fact(why),
    }
}

fn read_item(kind: Kind, item: &Value, key: Option<&str>, col: &mut Collector) {
    match item {
        Value::String(s) if s == TRUNCATED => {
            let why = "cut off at the end of the text";
            drop_record(kind, why, col);
            col.repaired = true;
        }
        Value::Object(obj) => record_from_object(kind, obj, key, col),
        Value::Array(parts) => record_from_array(kind, parts, col),
        Value::String(s) if kind == Kind::Entity => match key {
            Some(name) => col.entity(clean_name(name), None, strip_decoration(s).to_string(), None),
            None => col.entity(clean_name(s), None, String::new(), None),
        },
        _ => {
            let why = "not an object or a list";
            drop_record(kind, why, col);
        }
    }
}

fn record_from_object(kind: Kind, obj: &Map<String, Value>, key: Option<&str>, col: &mut Collector) {
    match kind {
        Kind::Entity => {
            let name = name_of(get(obj, NAME)).or_else(|| key.and_then(clean_name));
            let entity_type = get(obj, ENTITY_TYPE).and_then(text_of).and_then(|t| label_of(&t));
            let description = description_of(get(obj, DESCRIPTION));
            let importance = get(obj, IMPORTANCE).and_then(score_of);
            col.entity(name, entity_type, description, importance);
        }
        Kind::Relation => {
            let source = name_of(get(obj, SOURCE));
            let target = name_of(get(obj, TARGET));
            let mut description = description_of(get(obj, DESCRIPTION));
            let mut rel_type = get(obj, REL_TYPE).and_then(text_of).and_then(|t| label_of(&t));
            // {"relationship": "Alice has worked for Acme since 2019"}: a sentence, not a type.
            if rel_type.as_ref().is_some_and(|t| t.split_whitespace().count() > 6) {
                if description.is_empty() {
                    description = rel_type.take().unwrap_or_default();
                } else {
                    rel_type = None;
                }
            }
            let strength = get(obj, STRENGTH).and_then(score_of);
            col.relation(source, target, rel_type, description, strength, false);
        }
        Kind::Fact => {
            let subject = name_of(get(obj, SUBJECT));
            let predicate = get(obj, PREDICATE).and_then(text_of).and_then(|p| clean_name(&p));
            let object = name_of(get(obj, OBJECT));
            col.fact(subject, predicate, object);
        }
    }
}

fn record_from_array(kind: Kind, parts: &[Value], col: &mut Collector) {
    if parts.iter().any(|p| p.as_str() == Some(TRUNCATED)) {
        let why = "cut off at the end of the text";
        drop_record(kind, why, col);
        col.repaired = true;
        return;
    }
    let part = |k: usize| parts.get(k).and_then(text_of).and_then(|s| clean_name(&s));
    match kind {
        // [name, type, description]
        Kind::Entity => {
            let description = parts.get(2).and_then(text_of).unwrap_or_default();
            col.entity(part(0), part(1), strip_decoration(&description).to_string(), None)
        }
        // [source, predicate, target, description?, strength?] or [source, target]
        Kind::Relation if parts.len() == 2 => col.relation(part(0), part(1), None, String::new(), None, false),
        Kind::Relation => {
            let description = parts.get(3).and_then(text_of).unwrap_or_default();
            let strength = parts.get(4).and_then(score_of);
            col.relation(part(0), part(2), part(1), description, strength, false)
        }
        Kind::Fact => col.fact(part(0), part(1), part(2)),
    }
}
