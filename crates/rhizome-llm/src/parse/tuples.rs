//! Tuple-delimited records, the format of GraphRAG-style prompts:
//! `("entity"<|>NAME<|>TYPE<|>DESCRIPTION)##("relationship"<|>SRC<|>TGT<|>DESC<|>8)<|COMPLETE|>`.
//!
//! Tolerates what models write instead: typographic or no quotes, `|>` / `</|>` / `<|`
//! as field delimiters, plain `|` delimiters, Python tuples (`("entity", "A", ...)`),
//! records separated by newlines, `##`, list numbers or markdown headings, a missing
//! closing quote, a missing `)` before a `##`, and the kinds `relation`, `fact`, `triple`.
//!
//! A record cut off by the end of the text (no closing `)`, or a last field whose quote
//! never closes) is reported as incomplete, never read as if it were whole.

use serde_json::Value;

use super::collect::Collector;
use super::fields::{label_of, score_from_str, strip_decoration, text_of};
use super::json_repair::parse_lenient;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Entity,
    Relation,
    Fact,
}

/// How fields are separated in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `<|>` and its variants.
    Angle,
    /// A plain `|`.
    Pipe,
    /// A Python tuple: `("entity", "A", "PERSON", "...")`.
    Comma,
}

struct Start {
    /// Index of the record's first character (`(` or the opening quote).
    at: usize,
    kind: Kind,
    /// Index of the first separator after the kind token.
    fields_at: usize,
    style: Style,
    paren: bool,
}

/// Read every tuple record in `text` into `col`. Returns the number of records seen.
pub(crate) fn collect(text: &str, col: &mut Collector) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let starts = find_starts(&chars);
    for (k, s) in starts.iter().enumerate() {
        let next = starts.get(k + 1).map_or(chars.len(), |n| n.at);
        let (seg_end, by_eof) = segment_end(&chars, s.fields_at, next);
        match record_fields(&chars, s, seg_end, by_eof) {
            Some(fields) => emit(s.kind, fields, col),
            None => {
                let what = "record cut off at the end of the text";
                match s.kind {
                    Kind::Entity => col.drop_entity(what),
                    Kind::Relation => col.drop_relation(what),
                    Kind::Fact => col.drop_fact(what),
                }
                col.repaired = true;
            }
        }
    }
    starts.len()
}

fn is_quote_char(c: char) -> bool {
    matches!(c, '"' | '\'' | '“' | '”' | '‘' | '’' | '„' | '«' | '»')
}

/// Length of a field delimiter (`<|>`, `|>`, `</|>`, `<|`, `<||>`) at `i`, excluding
/// completion markers like `<|COMPLETE|>`.
fn delim_len(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    let lt = chars.get(j) == Some(&'<');
    if lt {
        j += 1;
        if chars.get(j) == Some(&'/') {
            j += 1;
        }
    }
    let pipes = chars[j.min(chars.len())..].iter().take_while(|&&c| c == '|').count();
    if pipes == 0 {
        return None;
    }
    j += pipes;
    let gt = chars.get(j) == Some(&'>');
    if gt {
        j += 1;
    }
    (lt || gt).then_some(j - i).filter(|_| marker_len(chars, i).is_none())
}

/// Length of a completion marker `<|WORD|>` (e.g. `<|COMPLETE|>`) at `i`.
fn marker_len(chars: &[char], i: usize) -> Option<usize> {
    if chars.get(i) != Some(&'<') || chars.get(i + 1) != Some(&'|') {
        return None;
    }
    let word = chars[i + 2..].iter().take_while(|c| c.is_alphabetic() || **c == '_').count();
    let j = i + 2 + word;
    (word > 0 && chars.get(j) == Some(&'|') && chars.get(j + 1) == Some(&'>')).then_some(j + 2 - i)
}

/// The record kind token starting at `i` (optionally quoted), followed by a separator.
fn kind_at(chars: &[char], mut i: usize, need_quote: bool) -> Option<(Kind, usize, Style)> {
    let quoted = chars.get(i).is_some_and(|&c| is_quote_char(c));
    if quoted {
        i += 1;
    } else if need_quote {
        return None;
    }
    let word: String = chars[i.min(chars.len())..].iter().take_while(|c| c.is_alphabetic()).collect();
    let kind = match word.to_lowercase().as_str() {
        "entity" => Kind::Entity,
        "relationship" | "relation" => Kind::Relation,
        "fact" | "triple" | "triplet" => Kind::Fact,
        _ => return None,
    };
    i += word.chars().count();
    if chars.get(i).is_some_and(|&c| is_quote_char(c)) {
        i += 1;
    }
    while matches!(chars.get(i), Some(' ' | '\t')) {
        i += 1;
    }
    let style = match chars.get(i) {
        _ if delim_len(chars, i).is_some() => Style::Angle,
        Some('|') => Style::Pipe,
        Some(',') => Style::Comma,
        _ => return None,
    };
    Some((kind, i, style))
}

fn find_starts(chars: &[char]) -> Vec<Start> {
    let mut starts = Vec::new();
    let mut line_start = true;
    for i in 0..chars.len() {
        let c = chars[i];
        if c == '(' {
            let mut j = i + 1;
            while matches!(chars.get(j), Some(' ' | '\t')) {
                j += 1;
            }
            if let Some((kind, fields_at, style)) = kind_at(chars, j, false) {
                starts.push(Start { at: i, kind, fields_at, style, paren: true });
            }
        } else if line_start && is_quote_char(c) {
            if let Some((kind, fields_at, style)) = kind_at(chars, i, true) {
                if style == Style::Angle {
                    starts.push(Start { at: i, kind, fields_at, style, paren: false });
                }
            }
        }
        if c == '\n' || c == '#' {
            line_start = true;
        } else if !c.is_whitespace() {
            line_start = false;
        }
    }
    starts
}

/// End of the segment holding a record: the next record, a `##` record separator or a
/// completion marker, whichever comes first. The flag is true when the text ends first.
fn segment_end(chars: &[char], from: usize, next: usize) -> (usize, bool) {
    for i in from..next {
        if (chars[i] == '#' && chars.get(i + 1) == Some(&'#')) || marker_len(chars, i).is_some() {
            return (i, false);
        }
    }
    (next, next == chars.len())
}

/// The fields of a record, or `None` if it was cut off by the end of the text.
fn record_fields(chars: &[char], s: &Start, seg_end: usize, by_eof: bool) -> Option<Vec<String>> {
    // The record ends at the first `)` followed by a line end, a separator or the end.
    let mut end = None;
    for p in s.fields_at..seg_end {
        let closes = if s.paren { chars[p] == ')' } else { chars[p] == '\n' };
        if !closes {
            continue;
        }
        let mut q = p + 1;
        while matches!(chars.get(q), Some(' ' | '\t' | ',' | ';')) {
            q += 1;
        }
        let at_eof = q >= chars.len();
        if at_eof || matches!(chars[q], '\n' | '\r' | '#' | '<' | '(' | '`' | '*') || !s.paren {
            end = Some((p, at_eof));
            break;
        }
    }
    let (end, eof_closed) = match end {
        Some(e) => e,
        None if by_eof => return None,
        None => (seg_end, false),
    };
    let content: String = chars[s.fields_at..end].iter().collect();
    let raw = match s.style {
        Style::Comma => comma_fields(&content)?,
        Style::Pipe => content.split('|').skip(1).map(str::to_string).collect(),
        Style::Angle => angle_fields(&content),
    };
    if eof_closed {
        // `("entity"<|>"A"<|>"PERSON"<|>"born (1900)` cut after the inner `)`.
        let last = raw.last().map(|f| f.trim()).unwrap_or("");
        let opened = last.chars().next().is_some_and(is_quote_char);
        let closed = last.chars().count() > 1 && last.chars().last().is_some_and(is_quote_char);
        if opened && !closed {
            return None;
        }
    }
    Some(raw.iter().map(|f| strip_decoration(f).to_string()).collect())
}

fn angle_fields(content: &str) -> Vec<String> {
    let chars: Vec<char> = content.chars().collect();
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    let mut first = true;
    while i < chars.len() {
        if let Some(n) = delim_len(&chars, i) {
            if !first {
                fields.push(std::mem::take(&mut cur));
            }
            first = false;
            cur.clear();
            i += n;
        } else {
            cur.push(chars[i]);
            i += 1;
        }
    }
    fields.push(cur);
    fields
}

fn comma_fields(content: &str) -> Option<Vec<String>> {
    let body = format!("[{}]", content.trim_start_matches(|c: char| c == ',' || c.is_whitespace()));
    match parse_lenient(&body)? {
        Value::Array(items) => Some(items.iter().map(|v| text_of(v).unwrap_or_default()).collect()),
        _ => None,
    }
}

fn emit(kind: Kind, fields: Vec<String>, col: &mut Collector) {
    let field = |k: usize| fields.get(k).map(String::as_str).unwrap_or("");
    match kind {
        Kind::Entity => {
            // NAME, TYPE, DESCRIPTION[, IMPORTANCE]; extra fields belong to the description.
            let mut rest: Vec<&str> = fields.iter().skip(2).map(String::as_str).collect();
            let importance = match rest.last() {
                Some(last) if rest.len() > 1 => score_from_str(last),
                _ => None,
            };
            if importance.is_some() {
                rest.pop();
            }
            let desc = rest.iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(" ");
            col.entity(super::fields::clean_name(field(0)), label_of(field(1)), desc, importance);
        }
        Kind::Relation => {
            // SRC, TGT, [TYPE,] DESCRIPTION[, KEYWORDS][, STRENGTH].
            let mut middle: Vec<&str> = fields.iter().skip(2).map(String::as_str).collect();
            let strength = middle.last().and_then(|s| score_from_str(s));
            if strength.is_some() {
                middle.pop();
            }
            let (rel_type, desc) = split_type_description(&middle);
            col.relation(
                super::fields::clean_name(field(0)),
                super::fields::clean_name(field(1)),
                rel_type,
                desc,
                strength,
                true,
            );
        }
        Kind::Fact => {
            let part = |k: usize| super::fields::clean_name(field(k));
            col.fact(part(0), part(1), part(2));
        }
    }
}

/// A short label-like field (`WORKS_FOR`, `leads`) rather than a sentence.
fn type_like(s: &str) -> bool {
    let words = s.split_whitespace().count();
    (1..=4).contains(&words) && s.chars().count() <= 40 && !s.ends_with('.')
}

/// The fields between the endpoints and the strength: one is a description; two are
/// (type, description) or (description, keywords); more are joined into the description.
fn split_type_description(middle: &[&str]) -> (Option<String>, String) {
    match middle {
        [] => (None, String::new()),
        [d] => (None, d.to_string()),
        [a, b] if type_like(a) && !type_like(b) => (label_of(a), b.to_string()),
        [a, b] if type_like(b) => (label_of(b), a.to_string()),
        [a, rest @ ..] if type_like(a) => (label_of(a), rest.join(" ")),
        all => (None, all.join(" ")),
    }
}
