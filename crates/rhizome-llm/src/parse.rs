//! Robust parsing of LLM extraction output.
//!
//! [`parse_extraction`] reads what a model returned for an extraction prompt — our JSON
//! object, JSON with fences, commentary, several objects, truncation and the usual
//! syntax slips, or GraphRAG-style tuple records — into a core [`Extraction`]. It never
//! fails and never panics: the worst outcome is an empty extraction with warnings saying
//! why. Records that cannot be used are counted in [`ParseOutcome::dropped`], never
//! silently lost.
//!
//! Modules: `json_repair` (lenient JSON reader), `json_records` (JSON to records),
//! `tuples` (tuple-delimited records), `fields` (key synonyms and value coercion),
//! `collect` (raw records and counts), `assemble` (schema, scaling, dedupe); `claims`
//! reads the claims prompt's replies ([`parse_claims`]).

mod assemble;
mod claims;
mod collect;
mod fields;
mod json_records;
mod json_repair;
mod tuples;

use rhizome_core::model::Extraction;

pub use claims::{parse_claims, ClaimsOutcome};

/// The entity types asked for when no schema is configured.
pub const DEFAULT_ENTITY_TYPES: [&str; 9] =
    ["PERSON", "ORGANIZATION", "LOCATION", "EVENT", "CONCEPT", "TECHNOLOGY", "PRODUCT", "DATE", "MONEY"];

/// [`DEFAULT_ENTITY_TYPES`] as owned strings, the form [`parse_extraction`] takes.
pub fn default_schema() -> Vec<String> {
    DEFAULT_ENTITY_TYPES.iter().map(|s| s.to_string()).collect()
}

/// What [`parse_extraction`] made of a response.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParseOutcome {
    /// The usable records: entities deduplicated by normalised name, every relation
    /// endpoint present among the entities, scores in 0..1.
    pub extraction: Extraction,
    /// Human-readable notes on everything that was repaired, mapped or dropped (one line
    /// per kind of problem, with a count).
    pub warnings: Vec<String>,
    /// Records that could not be used (entities, relations, facts and unreadable
    /// fragments), see [`ParseStats`] for the breakdown.
    pub dropped: usize,
    /// The output needed repair: broken JSON syntax, truncation, or relation endpoints
    /// that had to be added as entities.
    pub repaired: bool,
    /// Counts behind the outcome.
    pub stats: ParseStats,
}

/// Counts of what was read and what became of it.
///
/// For entities: `entities.len() == entity_records - entities_dropped - entities_merged +
/// endpoints_added`; for relations: `relations.len() == relation_records -
/// relations_dropped`; for facts: `facts.len() == fact_records - facts_dropped -
/// facts_merged`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseStats {
    /// JSON objects/arrays holding extraction records.
    pub json_values: usize,
    /// Tuple-delimited records.
    pub tuple_records: usize,
    /// Entity records seen (including dropped ones).
    pub entity_records: usize,
    /// Relation records seen (including dropped ones).
    pub relation_records: usize,
    /// Fact records seen (including dropped ones).
    pub fact_records: usize,
    /// Entities dropped: no usable name, cut off, or a type outside a schema without
    /// CONCEPT.
    pub entities_dropped: usize,
    /// Relations dropped: missing endpoint, self-loop, cut off, or an endpoint dropped by
    /// the schema.
    pub relations_dropped: usize,
    /// Facts dropped: a missing part, or cut off.
    pub facts_dropped: usize,
    /// Cut-off or unreadable pieces whose kind is unknown.
    pub fragments_dropped: usize,
    /// Entity records merged into an earlier one with the same normalised name.
    pub entities_merged: usize,
    /// Duplicate facts removed.
    pub facts_merged: usize,
    /// Relation endpoints that were not among the entities, added as CONCEPT.
    pub endpoints_added: usize,
    /// Entities whose type is not in the schema, mapped to CONCEPT.
    pub retyped: usize,
}

/// Parse an LLM's extraction output into entities, relations and facts.
///
/// `schema` is the list of allowed entity types (compared case-insensitively; the
/// schema's spelling is used in the output). Common synonyms map to a schema type
/// (`geo` → LOCATION, `org` → ORGANIZATION); other types become CONCEPT when the
/// schema has it, else the entity is dropped. An empty schema accepts every type
/// (uppercased).
///
/// Both formats are read, and merged if both occur: JSON (`{"entities":[...],
/// "relations":[...],"facts":[...]}`, leniently) and tuple records
/// (`("entity"<|>NAME<|>TYPE<|>DESC)##...`). Relation strengths are brought into 0..1
/// (tuple strengths are on a 0..10 scale); missing strength is 1.0, missing relation
/// type is `RELATED`, missing description is empty; entity `count` is 1.
pub fn parse_extraction(text: &str, schema: &[String]) -> ParseOutcome {
    let run = std::panic::AssertUnwindSafe(|| parse_inner(text, schema));
    match std::panic::catch_unwind(run) {
        Ok(outcome) => outcome,
        Err(_) => ParseOutcome {
            warnings: vec!["internal error while parsing the output; nothing was kept".into()],
            ..ParseOutcome::default()
        },
    }
}

fn parse_inner(text: &str, schema: &[String]) -> ParseOutcome {
    let mut col = collect::Collector::default();
    if text.trim().is_empty() {
        col.notes.add("the output is empty");
        return assemble::finish(col, schema);
    }

    let (found, gave_up) = json_repair::find_values(text, json_records::is_extraction);
    if gave_up {
        col.notes.add("stopped looking for JSON: too many broken brackets in the output");
    }
    let mut rest = String::with_capacity(text.len());
    let mut last = 0;
    for f in &found {
        json_records::collect(&f.value, &mut col);
        if !f.repairs.is_empty() {
            col.repaired = true;
            col.notes.add(format!("repaired JSON: {}", f.repairs.join(", ")));
        }
        rest.push_str(&text[last..f.start]);
        rest.push('\n');
        last = f.end;
    }
    rest.push_str(&text[last..]);
    col.stats.json_values = found.len();
    if found.len() > 1 {
        col.notes.add(format!("merged {} JSON values", found.len()));
    }

    col.stats.tuple_records = tuples::collect(&rest, &mut col);
    if found.is_empty() && col.stats.tuple_records == 0 {
        col.notes.add("no extraction found in the output (neither JSON nor tuple records)");
    }
    assemble::finish(col, schema)
}

/// Read a model's list of names (the `query_entities` prompt): comma-, semicolon- or
/// line-separated, also a JSON array; list bullets, quotes, a `Names:` label and a final
/// full stop are removed; `NONE` / `N/A` and duplicates (by normalised name) are dropped.
pub fn parse_name_list(text: &str) -> Vec<String> {
    let trimmed = text.trim();
    let mut items: Vec<String> = Vec::new();
    if let Some(serde_json::Value::Array(values)) =
        trimmed.starts_with('[').then(|| json_repair::parse_lenient(trimmed)).flatten()
    {
        items.extend(values.iter().filter_map(fields::text_of));
    } else {
        for line in trimmed.lines() {
            let mut line = line.trim();
            for label in ["names:", "entities:", "answer:", "proper nouns:"] {
                if line.len() >= label.len()
                    && line.is_char_boundary(label.len())
                    && line[..label.len()].eq_ignore_ascii_case(label)
                {
                    line = line[label.len()..].trim();
                }
            }
            let is_sep = |c: char| matches!(c, ',' | ';' | '，' | '、' | '；');
            items.extend(line.split(is_sep).map(|s| strip_bullet(s).to_string()));
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for item in items {
        let mut item = fields::strip_decoration(&item).to_string();
        if item.ends_with('.') && item.matches('.').count() == 1 {
            item.pop();
        }
        if let Some(name) = fields::clean_name(&item) {
            if seen.insert(rhizome_core::ids::normalize_name(&name)) {
                out.push(name);
            }
        }
    }
    out
}

/// `- x`, `* x`, `• x`, `1. x`, `2) x` → `x`.
fn strip_bullet(s: &str) -> &str {
    let t = s.trim();
    if let Some(rest) = t.strip_prefix(['-', '*', '•']) {
        return rest.trim();
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        if let Some(rest) = t[digits..].strip_prefix(['.', ')']) {
            return rest.trim();
        }
    }
    t
}

/// The first JSON object in an LLM reply, read leniently (fences, prose around it,
/// single quotes, trailing commas, truncation closed at the end of the text). None when
/// the reply holds no object.
pub fn json_object_lenient(text: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let (found, _) = json_repair::find_values(text, |v| v.is_object());
    found.into_iter().find_map(|f| match f.value {
        serde_json::Value::Object(o) => Some(o),
        _ => None,
    })
}
