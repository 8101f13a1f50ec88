//! The valid range of every numeric and enum setting of core's sections ([`rules`]) and
//! the vocabulary of rules; the rules that tie two settings together and the sections
//! defined above core live with [`crate::config::Config`]. `Config::load` checks the layered values
//! against them and names, for each violation, the key, the value, where it came from and
//! the valid range. Each field's doc comment repeats its range (`Valid: ...`; a test keeps
//! the two in step).

use std::fmt::Write as _;

use crate::config_origin::Origins;

/// What values a setting accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// An integer from `min` to `max` inclusive ([`NO_MAX`]: no upper bound).
    Int { min: i64, max: i64 },
    /// A finite number from `min` to `max`; an `_open` bound is excluded.
    Float { min: f64, max: f64, min_open: bool, max_open: bool },
    /// One of `values` (and the empty string when `empty`).
    OneOf { values: &'static [&'static str], empty: bool },
}

/// The valid range of one setting, `section.key`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub key: &'static str,
    pub range: Range,
}

/// No upper bound for [`Range::Int`].
pub const NO_MAX: i64 = i64::MAX;
/// Token budgets of material given to a model.
pub const BUDGET: i64 = 1_000_000;
/// Tokens one LLM call may write.
pub const OUTPUT: i64 = 131_072;

/// An integer in `[min, max]`.
pub const fn int(key: &'static str, min: i64, max: i64) -> Rule {
    Rule { key, range: Range::Int { min, max } }
}
/// A number in `[min, max]`.
pub const fn num(key: &'static str, min: f64, max: f64) -> Rule {
    Rule { key, range: Range::Float { min, max, min_open: false, max_open: false } }
}
/// A number in `(min, max]`.
pub const fn above(key: &'static str, min: f64, max: f64) -> Rule {
    Rule { key, range: Range::Float { min, max, min_open: true, max_open: false } }
}
/// A number in `(min, max)`.
pub const fn between(key: &'static str, min: f64, max: f64) -> Rule {
    Rule { key, range: Range::Float { min, max, min_open: true, max_open: true } }
}
/// One of `values`.
pub const fn one_of(key: &'static str, values: &'static [&'static str]) -> Rule {
    Rule { key, range: Range::OneOf { values, empty: false } }
}

static RULES: &[Rule] = &[
    int("chunk.size", 16, 8192),
    int("chunk.overlap", 0, 8191),
    int("embed.batch_size", 1, 1024),
    int("embed.docs_per_batch", 1, 100_000),
    int("embed.chunks_per_batch", 1, 1_000_000_000),
    int("embed.import_docs_per_batch", 1, 100_000),
    one_of("extract.extractor", &["nlp", "llm"]),
    one_of("embed.fact_vectors", &["auto", "always", "never"]),
    int("extract.max_entities_per_chunk", 1, 1000),
    num("extract.resolve_similarity", 0.0, 1.0),
    int("synonymy.top_k", 0, 100),
    num("synonymy.threshold", 0.0, 1.0),
    num("similar.threshold", 0.0, 1.0),
    int("retrieval.top_k", 1, 1000),
    int("retrieval.candidates", 1, 10_000),
    num("retrieval.rrf_k", 0.0, 1000.0),
    one_of("retrieval.fusion", &["score", "rrf"]),
    num("retrieval.dense_weight", 0.0, 100.0),
    num("retrieval.bm25_weight", 0.0, 100.0),
    int("retrieval.answer_sentences", 1, 100),
    int("retrieval.whole_graph_up_to", 0, 1_000_000_000),
    Rule { key: "llm.provider", range: Range::OneOf { values: &["none", "openai", "local"], empty: true } },
    above("llm.timeout_s", 0.0, 3600.0),
    int("llm.max_retries", 0, 100),
    int("llm.retry_base_ms", 0, 600_000),
    int("llm.retry_max_ms", 0, 3_600_000),
    int("llm.concurrency", 1, 1024),
    int("llm.requests_per_minute", 0, 1_000_000),
    int("llm.tokens_per_minute", 0, 1_000_000_000),
    num("llm.temperature", 0.0, 2.0),
    int("llm.max_tokens", 1, OUTPUT),
    int("llm.gleanings", 0, 10),
    int("llm.summarize_min_descriptions", 0, 10_000),
    int("llm.context_tokens", 256, OUTPUT),
    int("communities.max_cluster_size", 2, 100_000),
    int("communities.seed", 0, NO_MAX),
    above("communities.resolution", 0.0, 100.0),
    int("communities.report_max_input_tokens", 1, BUDGET),
    int("communities.report_max_tokens", 1, OUTPUT),
    int("communities.extractive_entities", 1, 1000),
    int("communities.extractive_relations", 0, 1000),
    int("communities.extractive_sentences", 0, 1000),
    int("communities.material_cache_mb", 0, 1_000_000),
];

/// String settings that are free text, not enums, so they have no rule (booleans need
/// none either: their type is checked).
pub const FREE_TEXT: &[&str] = &[
    "store.url",      // an index directory or URL: rhizome_store::StoreUrl checks it
    "store.read_url", // a PostgreSQL URL: rhizome_engine::Engine::open checks it
    "embed.model",    // a model name: the embedder registry (rhizome-embed) checks it
    "llm.base_url",
    "llm.model",
    "llm.api_key_env",
    "llm.azure_api_version",
    "llm.prompts_dir",
    "llm.schema",
    "extract.claim_description", // words given to the model
];

/// Every single-setting rule, in the order of the settings.
pub fn rules() -> &'static [Rule] {
    RULES
}

/// The rule of `key` (`section.key`) among core's sections, if it has one.
pub fn rule(key: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.key == key)
}

/// What is wrong with how a section declares its settings: a numeric or enum setting
/// without a rule, a string setting with both a rule and a place in the free text (or
/// neither), a default outside its rule, a rule of no setting, or a rule whose range the
/// doc comment of its field does not state (`Valid: ...`). `defaults` is the section's
/// table of defaults; `src` holds the source of `pub struct STRUKT {`.
pub fn declaration_problems(
    section: &str,
    defaults: &toml::Value,
    rules: &[Rule],
    free_text: &[&str],
    strukt: &str,
    src: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    let empty = toml::Table::new();
    let table = defaults.as_table().unwrap_or(&empty);
    for (k, v) in table {
        let key = format!("{section}.{k}");
        let ruled = rules.iter().find(|r| r.key == key);
        match (v, ruled) {
            (toml::Value::Integer(_) | toml::Value::Float(_), None) => out.push(format!("{key} has no rule")),
            (toml::Value::String(_) | toml::Value::Array(_), r) if r.is_some() == free_text.contains(&key.as_str()) => {
                out.push(format!("{key}: needs a rule or a place in the free text, not both"))
            }
            (v, Some(r)) if !r.range.accepts(v) => {
                out.push(format!("default {key} = {v} is not {}", r.range.describe()))
            }
            _ => {}
        }
    }
    let Some(start) = src.find(&format!("pub struct {strukt} {{")) else {
        out.push(format!("pub struct {strukt} not found in its source"));
        return out;
    };
    for r in rules {
        let Some(field) = r.key.strip_prefix(section).and_then(|k| k.strip_prefix('.')) else {
            out.push(format!("{}: a rule outside [{section}]", r.key));
            continue;
        };
        if !table.contains_key(field) {
            out.push(format!("{}: a rule of no setting", r.key));
        }
        let Some(at) = src[start..].find(&format!("    pub {field}:")) else {
            out.push(format!("{}: no field {field} in {strukt}", r.key));
            continue;
        };
        let line = src[..start + at].rfind('\n').map_or(0, |i| i + 1);
        let doc: Vec<&str> = src[..line]
            .lines()
            .rev()
            .take_while(|l| l.trim_start().starts_with("///"))
            .map(|l| l.trim_start().trim_start_matches("///").trim())
            .collect();
        let doc = doc.into_iter().rev().collect::<Vec<_>>().join(" ");
        let want = format!("Valid: {}.", r.range.describe());
        if !doc.contains(&want) {
            out.push(format!("{}: doc {doc:?} lacks {want:?}", r.key));
        }
    }
    out
}

impl Range {
    /// The range in words, e.g. "an integer from 16 to 8192".
    pub fn describe(&self) -> String {
        match *self {
            Range::Int { min, max: NO_MAX } => format!("an integer of at least {min}"),
            Range::Int { min, max } => format!("an integer from {min} to {max}"),
            Range::Float { min, max, min_open, max_open } => match (min_open, max_open) {
                (false, false) => format!("a number from {min} to {max}"),
                (true, false) => format!("a number greater than {min} and at most {max}"),
                (false, true) => format!("a number of at least {min} and less than {max}"),
                (true, true) => format!("a number greater than {min} and less than {max}"),
            },
            Range::OneOf { values, empty } => {
                let mut s = format!("one of: {}", values.join(", "));
                if empty {
                    let _ = write!(s, " (empty: {})", values[0]);
                }
                s
            }
        }
    }

    /// True if `v` (a layered TOML value) is in the range; the type is checked too (an
    /// integer is a number).
    pub fn accepts(&self, v: &toml::Value) -> bool {
        match (*self, v) {
            (Range::Int { min, max }, toml::Value::Integer(i)) => (min..=max).contains(i),
            (Range::Float { .. }, toml::Value::Integer(i)) => self.accepts(&toml::Value::Float(*i as f64)),
            (Range::Float { min, max, min_open, max_open }, toml::Value::Float(x)) => {
                let low = if min_open { *x > min } else { *x >= min };
                let high = if max_open { *x < max } else { *x <= max };
                x.is_finite() && low && high
            }
            (Range::OneOf { values, empty }, toml::Value::String(s)) => {
                values.contains(&s.as_str()) || (empty && s.is_empty())
            }
            _ => false,
        }
    }
}

/// `section.key = value (origin)`.
pub(crate) fn show(key: &str, v: &toml::Value, origins: &Origins) -> String {
    format!("{key} = {} ({})", show_value(v), origins.get(key))
}

/// A value as written: strings quoted, f32 settings without the widening digits (0.8,
/// not 0.800000011920929), NaN and infinities as Rust spells them.
fn show_value(v: &toml::Value) -> String {
    match v {
        toml::Value::Float(x) if (*x as f32) as f64 == *x || !x.is_finite() => format!("{}", *x as f32),
        toml::Value::Float(x) => format!("{x}"),
        toml::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// The problems of `value` (the layered settings, shaped like `defaults`, holding the
/// sections whose rules `rule_of` finds): a value out of its rule's range, or of another
/// type than the default's.
pub(crate) fn check_values(
    value: &toml::Value,
    defaults: &toml::Value,
    origins: &Origins,
    rule_of: impl Fn(&str) -> Option<&'static Rule>,
) -> Vec<String> {
    let mut out = Vec::new();
    let Some(sections) = defaults.as_table() else { return out };
    for (section, inner) in sections {
        let Some(keys) = inner.as_table() else { continue };
        for (key, default) in keys {
            let full = format!("{section}.{key}");
            let Some(v) = value.get(section).and_then(|s| s.get(key)) else { continue };
            let expected = match rule_of(&full) {
                Some(r) if r.range.accepts(v) => continue,
                Some(r) => r.range.describe(),
                None if same_type(default, v) => continue,
                None => type_name(default).to_string(),
            };
            out.push(format!("{}: must be {expected}", show(&full, v, origins)));
        }
    }
    out
}

fn same_type(default: &toml::Value, v: &toml::Value) -> bool {
    match (default, v) {
        (toml::Value::Float(_), toml::Value::Integer(_)) => true,
        (toml::Value::Array(_), toml::Value::Array(items)) => items.iter().all(|i| i.is_str()),
        (d, v) => d.type_str() == v.type_str(),
    }
}

fn type_name(default: &toml::Value) -> &'static str {
    match default {
        toml::Value::Boolean(_) => "true or false",
        toml::Value::Array(_) => "a list of strings",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a number",
        _ => "a string",
    }
}
