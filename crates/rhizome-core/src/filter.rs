//! Document filters: which documents a question may draw on, by type, hashtag, source,
//! date and language. Each is written `KEY=VALUE` (`--filter type=contract`, the HTTP
//! `filter` list); several values of one key are alternatives, different keys must all
//! hold: `type=report type=manual after=2024-01-01` is a report or a manual dated 2024
//! or later.

use crate::{DocumentMeta, Error, Result};

/// The keys a filter may use, with what each matches.
pub const FILTER_KEYS: &[(&str, &str)] = &[
    ("type", "the document's type (describe.types), e.g. type=contract"),
    ("tag", "one of its hashtags, in any case, e.g. tag=\"Halvorsen Bridge\""),
    ("source", "its file or any name it arrived under, by glob (* and ?), e.g. source=*.pdf or source=reports/*"),
    ("after", "dated on or after YYYY-MM-DD (created, else modified, else indexed)"),
    ("before", "dated before YYYY-MM-DD"),
    ("lang", "its language: en, vi or zh"),
];

/// Filters written on one line (an HTTP header, a tool argument) as a list:
/// `type=report; tag="Halvorsen Bridge", after=2024-01-01 lang=en`. They are separated by
/// `;`, `,` or a space before the next `KEY=`, never inside double quotes, so a value
/// may hold spaces (`tag=Halvorsen Bridge`) or, quoted, any separator.
pub fn split_list(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let chars: Vec<char> = line.chars().collect();
    // A word of letters, digits and `_` right before a `=`.
    let starts_key = |i: usize| {
        let key = chars[i..].iter().take_while(|c| c.is_alphanumeric() || **c == '_').count();
        key > 0 && chars.get(i + key) == Some(&'=')
    };
    for (i, &c) in chars.iter().enumerate() {
        let split = !quoted && (c == ';' || c == ',' || (c.is_whitespace() && starts_key(i + 1)));
        if split {
            out.push(std::mem::take(&mut cur));
            continue;
        }
        if c == '"' {
            quoted = !quoted;
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// What a filter reads of one document.
#[derive(Debug, Clone, Copy)]
pub struct DocFacets<'a> {
    pub source: &'a str,
    pub aliases: &'a [String],
    pub language: Option<&'a str>,
    /// Seconds since the Unix epoch.
    pub indexed_at: Option<u64>,
    pub meta: &'a DocumentMeta,
}

/// A parsed filter; empty: every document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocFilter {
    pub types: Vec<String>,
    pub tags: Vec<String>,
    pub sources: Vec<String>,
    pub languages: Vec<String>,
    pub after: Option<String>,
    pub before: Option<String>,
    /// The filter as written, in order: for messages and cache keys.
    written: Vec<String>,
}

impl DocFilter {
    /// Reads `KEY=VALUE` filters (a value may be quoted); an error names the filter that
    /// cannot be read and how to write it.
    pub fn parse<S: AsRef<str>>(specs: &[S]) -> Result<DocFilter> {
        let mut f = DocFilter::default();
        for spec in specs {
            let spec = spec.as_ref().trim();
            if spec.is_empty() {
                continue;
            }
            let bad = |why: String| Error::bad_input(format!("filter {spec:?}"), why);
            let Some((key, value)) = spec.split_once('=') else {
                return Err(bad(format!("write KEY=VALUE with KEY one of {}", keys())));
            };
            let key = key.trim().to_lowercase();
            let value = value.trim().trim_matches('"').trim().to_string();
            if value.is_empty() {
                return Err(bad(format!("{key} has no value; e.g. {}", example(&key))));
            }
            match key.as_str() {
                "type" => f.types.push(value.to_lowercase()),
                "tag" => f.tags.push(value.to_lowercase()),
                "source" => f.sources.push(value),
                "lang" | "language" => f.languages.push(value.to_lowercase()),
                "after" | "before" => {
                    if !is_date(&value) {
                        return Err(bad(format!("{key} takes a date YYYY-MM-DD, e.g. {key}=2024-01-31")));
                    }
                    let slot = if key == "after" { &mut f.after } else { &mut f.before };
                    // Two bounds of one side: the narrower holds.
                    let keep = match slot.take() {
                        Some(old) if (key == "after") == (old > value) => old,
                        _ => value,
                    };
                    *slot = Some(keep);
                }
                other => return Err(bad(format!("no filter key {other:?}; use one of {}", keys()))),
            }
            f.written.push(format!("{key}={}", spec.split_once('=').map_or("", |x| x.1).trim()));
        }
        Ok(f)
    }

    /// True when it lets every document through.
    pub fn is_empty(&self) -> bool {
        self.written.is_empty()
    }

    /// The filter as written, `type=contract, tag=bridge`.
    pub fn describe(&self) -> String {
        self.written.join(", ")
    }

    /// The same for equal filters whatever the order they were written in.
    pub fn key(&self) -> String {
        let mut w = self.written.clone();
        w.sort();
        w.join("\u{1f}")
    }

    /// Whether the document of `d` passes.
    pub fn matches(&self, d: &DocFacets<'_>) -> bool {
        let m = d.meta;
        let any = |want: &[String], have: &mut dyn Iterator<Item = String>| {
            let have: Vec<String> = have.collect();
            want.is_empty() || want.iter().any(|w| have.iter().any(|h| h == w))
        };
        if !any(&self.types, &mut m.doc_type.iter().map(|t| t.to_lowercase())) {
            return false;
        }
        if !any(&self.tags, &mut m.hashtags.iter().map(|t| t.to_lowercase())) {
            return false;
        }
        if !any(&self.languages, &mut d.language.iter().map(|l| l.to_lowercase())) {
            return false;
        }
        if !self.sources.is_empty() {
            let names = std::iter::once(d.source).chain(d.aliases.iter().map(String::as_str));
            let hit = names.flat_map(|n| [n, base_name(n)]).any(|n| self.sources.iter().any(|g| glob(g, n)));
            if !hit {
                return false;
            }
        }
        if self.after.is_some() || self.before.is_some() {
            let Some(date) = date_of(d) else { return false };
            if self.after.as_ref().is_some_and(|a| date.as_str() < a.as_str()) {
                return false;
            }
            if self.before.as_ref().is_some_and(|b| date.as_str() >= b.as_str()) {
                return false;
            }
        }
        true
    }
}

/// A document's date for `after` and `before`: created, else modified, else indexed
/// (`YYYY-MM-DD`).
pub fn date_of(d: &DocFacets<'_>) -> Option<String> {
    let m = d.meta;
    m.created
        .as_deref()
        .or(m.modified.as_deref())
        .map(|t| t.chars().take(10).collect())
        .or_else(|| d.indexed_at.map(|t| crate::utc_time(t as i64)[..10].to_string()))
}

/// The rows a document has in the stores' document index (`document_tags`): (key, value)
/// for its type, each hashtag and its language (lowercased, as filters compare them), its
/// media type, and its date for `after` and `before` ([`date_of`]) under `date`, so that a
/// filter's `type`, `tag`, `lang`, `after` and `before` are range reads of that index.
pub fn doc_tags(language: Option<&str>, indexed_at: Option<u64>, meta: &DocumentMeta) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut push = |k: &str, v: String| {
        if !v.is_empty() && !out.iter().any(|(a, b)| a == k && *b == v) {
            out.push((k.to_string(), v));
        }
    };
    if let Some(t) = &meta.doc_type {
        push("type", t.to_lowercase());
    }
    for t in &meta.hashtags {
        push("tag", t.to_lowercase());
    }
    if let Some(l) = language {
        push("lang", l.to_lowercase());
    }
    if let Some(m) = &meta.media_type {
        push("media", m.to_lowercase());
    }
    let facets = DocFacets { source: "", aliases: &[], language, indexed_at, meta };
    if let Some(d) = date_of(&facets) {
        push("date", d);
    }
    out
}

/// The value range `[from, to)` of the index rows of `key` that hold exactly `value`.
pub fn exact_range(value: &str) -> (String, String) {
    (value.to_string(), format!("{value}\u{1}"))
}

/// The literal start of a `source` glob that every full name it matches begins with and
/// no base name can: what a range read of the stored names (their index by name) can
/// serve. None when the glob could match a base name (`report*.pdf`, `upload:x`), which
/// is any glob whose file part (before the first `#`) has no `/` or `\\`: then every
/// name is read (the names only, not the documents).
pub fn source_prefix(glob: &str) -> Option<&str> {
    let literal = &glob[..glob.find(['*', '?']).unwrap_or(glob.len())];
    let file = literal.split('#').next().unwrap_or(literal);
    file.contains(['/', '\\']).then_some(literal)
}

impl DocFilter {
    /// Whether one name of a document (its source or an alias) passes every `source`
    /// glob alternative (true without any), as [`DocFilter::matches`] reads it.
    pub fn source_matches(&self, name: &str) -> bool {
        self.sources.is_empty() || [name, base_name(name)].iter().any(|n| self.sources.iter().any(|g| glob(g, n)))
    }
}

fn keys() -> String {
    FILTER_KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}

fn example(key: &str) -> &'static str {
    FILTER_KEYS.iter().find(|(k, _)| *k == key).map_or("type=contract", |(_, d)| d)
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
        && (1..=12).contains(&s[5..7].parse::<u32>().unwrap_or(0))
        && (1..=31).contains(&s[8..10].parse::<u32>().unwrap_or(0))
}

/// The last part of a path or of an `upload:` name, `#` entries kept.
fn base_name(s: &str) -> &str {
    let s = s.strip_prefix("upload:").unwrap_or(s);
    let file = s.split('#').next().unwrap_or(s);
    let at = file.rfind(['/', '\\']).map_or(0, |i| i + 1);
    &s[at..]
}

/// Whether `text` matches the glob `pattern`: `*` any run of characters, `?` one.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_line_of_filters_splits_at_separators_outside_quotes() {
        let l = split_list(r#"type=report; tag="a; b, c" , lang=en after=2024-01-01 tag=Halvorsen Bridge"#);
        assert_eq!(l, ["type=report", r#"tag="a; b, c""#, "lang=en", "after=2024-01-01", "tag=Halvorsen Bridge"]);
        assert!(split_list(" ; ,").is_empty());
        let f = DocFilter::parse(&split_list(r#"tag="Halvorsen Bridge";type=report"#)).unwrap();
        assert_eq!(
            (f.tags.as_slice(), f.types.as_slice()),
            (&["halvorsen bridge".to_string()][..], &["report".to_string()][..])
        );
    }

    use super::*;

    fn facets<'a>(source: &'a str, aliases: &'a [String], meta: &'a DocumentMeta) -> DocFacets<'a> {
        DocFacets { source, aliases, language: Some("en"), indexed_at: Some(1_700_000_000), meta }
    }

    #[test]
    fn keys_combine_and_values_are_alternatives() {
        let meta = DocumentMeta {
            doc_type: Some("report".into()),
            hashtags: vec!["Halvorsen Bridge".into()],
            created: Some("2024-03-01T09:30:00".into()),
            ..Default::default()
        };
        let aliases = vec!["upload:copy.pdf".to_string()];
        let d = facets("/data/reports/harbour.pdf", &aliases, &meta);
        let ok = |specs: &[&str]| DocFilter::parse(specs).unwrap().matches(&d);
        assert!(ok(&[]));
        assert!(ok(&["type=report"]) && ok(&["type=Contract", "type=REPORT"]) && !ok(&["type=contract"]));
        assert!(ok(&["tag=halvorsen bridge"]) && !ok(&["tag=bridge"]));
        assert!(ok(&["source=*.pdf"]) && ok(&["source=/data/reports/*"]) && ok(&["source=copy.pdf"]));
        assert!(!ok(&["source=*.docx"]) && ok(&["source=harbour.???"]));
        assert!(ok(&["after=2024-03-01"]) && !ok(&["after=2024-03-02"]) && ok(&["before=2024-03-02"]));
        assert!(!ok(&["before=2024-03-01"]) && ok(&["lang=en"]) && !ok(&["lang=vi"]));
        assert!(!ok(&["type=report", "tag=nothing"]), "different keys must all hold");
        // Without dates of its own, a document is dated by when it was indexed (2023-11-14).
        let bare = DocumentMeta::default();
        let d = facets("a.txt", &[], &bare);
        assert!(DocFilter::parse(&["after=2023-11-14"]).unwrap().matches(&d));
        assert!(!DocFilter::parse(&["type=report"]).unwrap().matches(&d));
    }

    #[test]
    fn a_filter_that_cannot_be_read_says_how_to_write_it() {
        for (spec, want) in [
            ("type", "KEY=VALUE"),
            ("typ=report", "no filter key"),
            ("after=yesterday", "YYYY-MM-DD"),
            ("tag=", "has no value"),
        ] {
            let e = DocFilter::parse(&[spec]).unwrap_err().to_string();
            assert!(e.contains(spec) && e.contains(want), "{spec}: {e}");
        }
        let f = DocFilter::parse(&["tag=\"Halvorsen Bridge\"", "type=report"]).unwrap();
        assert_eq!(f.describe(), "tag=\"Halvorsen Bridge\", type=report");
        assert_eq!(f.key(), DocFilter::parse(&["type=report", "tag=\"Halvorsen Bridge\""]).unwrap().key());
        assert!(glob("a*b?d", "aXXbcd") && !glob("a*b?d", "abd") && glob("*", ""));
    }
}
