//! A lenient JSON reader for LLM output.
//!
//! Reads what models actually write: single and typographic quotes, unquoted keys and
//! values, Python literals (`None`, `True`), trailing and missing commas, comments, and
//! unescaped quotes inside strings (a quote only ends a string when followed by `,` `:`
//! `}` `]` `)` or a line end). Truncated input is closed at the end of the text: a
//! truncated scalar is dropped, and a truncated element of an array is replaced by the
//! [`TRUNCATED`] marker so the caller can count the incomplete record.
//!
//! Never panics; nesting deeper than [`MAX_DEPTH`] is rejected.

use serde_json::{Map, Number, Value};

/// Stands in for an array element cut off by the end of the text.
pub(crate) const TRUNCATED: &str = "\u{0}<truncated>";
/// Deeper nesting than this is not JSON an extractor writes; refuse it (no stack risk).
const MAX_DEPTH: usize = 48;

/// One JSON value found in a text.
#[derive(Debug)]
pub(crate) struct Found {
    pub value: Value,
    /// Byte range of the value in the text.
    pub start: usize,
    pub end: usize,
    /// Names of the repairs applied (e.g. "trailing comma").
    pub repairs: Vec<&'static str>,
}

/// Find the JSON objects/arrays in `text` that `accept` wants, left to right, not
/// overlapping. A candidate starts at every `{` or `[` not inside an accepted value.
///
/// Rejected candidates cost a rescan; the total is capped (about 64 reads of the text),
/// so pathological text stays fast. The flag says whether the search stopped at the cap.
pub(crate) fn find_values(text: &str, accept: impl Fn(&Value) -> bool) -> (Vec<Found>, bool) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte_at = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let budget = 64 * chars.len() + 100_000;
    let mut spent = 0usize;
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if spent > budget {
            return (found, true);
        }
        if !matches!(chars[i].1, '{' | '[') {
            i += 1;
            continue;
        }
        let mut r = Reader { chars: &chars, pos: i, depth: 0, repairs: Vec::new() };
        let got = r.value();
        spent += r.pos.saturating_sub(i) + 1;
        let (value, truncated) = match got {
            Got::Ok(v) => (v, false),
            Got::Truncated(v) => (v, true),
            Got::Fail => (Value::Null, false),
        };
        if (value.is_object() || value.is_array()) && accept(&value) {
            let end = if truncated { text.len() } else { byte_at(r.pos) };
            let mut repairs = r.repairs;
            if truncated {
                repairs.push("closed truncated JSON");
            }
            repairs.sort_unstable();
            repairs.dedup();
            found.push(Found { value, start: byte_at(i), end, repairs });
            i = r.pos.max(i + 1);
            continue;
        }
        i += 1;
    }
    (found, false)
}

/// Parse one whole text leniently (used for Python-style tuples turned into arrays).
pub(crate) fn parse_lenient(text: &str) -> Option<Value> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut r = Reader { chars: &chars, pos: 0, depth: 0, repairs: Vec::new() };
    match r.value() {
        Got::Ok(v) | Got::Truncated(v) => Some(v),
        Got::Fail => None,
    }
}

enum Got {
    Ok(Value),
    /// The text ended inside this value (what was read so far).
    Truncated(Value),
    Fail,
}

/// Where a container's next item starts ([`Reader::item_start`]).
enum Start {
    Item(char),
    Closed,
    End,
}

/// What follows a container's item ([`Reader::item_end`]).
enum After {
    Next,
    End,
    Fail,
}

struct Reader<'a> {
    chars: &'a [(usize, char)],
    pos: usize,
    depth: usize,
    repairs: Vec<&'static str>,
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|&(_, c)| c)
    }
    fn at(&self, i: usize) -> Option<char> {
        self.chars.get(i).map(|&(_, c)| c)
    }
    fn repair(&mut self, what: &'static str) {
        self.repairs.push(what);
    }

    /// Skip whitespace and `//` / `/* */` comments.
    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += 1;
            } else if c == '/' && self.at(self.pos + 1) == Some('/') {
                self.repair("comments");
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
            } else if c == '/' && self.at(self.pos + 1) == Some('*') {
                self.repair("comments");
                self.pos += 2;
                while self.peek().is_some() && !(self.peek() == Some('*') && self.at(self.pos + 1) == Some('/')) {
                    self.pos += 1;
                }
                self.pos = (self.pos + 2).min(self.chars.len());
            } else {
                break;
            }
        }
    }

    fn value(&mut self) -> Got {
        self.ws();
        let Some(c) = self.peek() else { return Got::Truncated(Value::Null) };
        match c {
            '{' | '[' => {
                if self.depth >= MAX_DEPTH {
                    return Got::Fail;
                }
                self.depth += 1;
                let got = if c == '{' { self.object() } else { self.array() };
                self.depth -= 1;
                got
            }
            c if closers(c).is_some() => self.string(c),
            c if c.is_ascii_digit() || matches!(c, '-' | '+' | '.') => self.number(),
            c if c.is_alphabetic() || c == '_' => self.bare_value(),
            _ => Got::Fail,
        }
    }

    /// The start of a container's next item: stray commas are skipped; `close` ends the
    /// container (consumed), one of `wrong` ends it too (a missing closer: left for the
    /// enclosing container).
    fn item_start(&mut self, close: char, wrong: &[char]) -> Start {
        loop {
            self.ws();
            let Some(c) = self.peek() else { return Start::End };
            if c == close {
                self.pos += 1;
                return Start::Closed;
            }
            if c == ',' {
                self.repair("stray comma");
                self.pos += 1;
            } else if wrong.contains(&c) {
                self.repair("mismatched bracket");
                return Start::Closed;
            } else {
                return Start::Item(c);
            }
        }
    }

    /// What follows an item: a comma (consumed), a closer (left), or the start of another
    /// item (`starts_item`: a missing comma, repaired).
    fn item_end(&mut self, ends: &[char], starts_item: fn(char) -> bool) -> After {
        self.ws();
        match self.peek() {
            None => After::End,
            Some(',') => {
                self.pos += 1;
                After::Next
            }
            Some(c) if ends.contains(&c) => After::Next,
            Some(c) if starts_item(c) => {
                self.repair("missing comma");
                After::Next
            }
            Some(_) => After::Fail,
        }
    }

    fn object(&mut self) -> Got {
        self.pos += 1;
        let mut map = Map::new();
        loop {
            // `{...]`: the closing brace is missing; the array closes.
            let c = match self.item_start('}', &[']', ')']) {
                Start::Item(c) => c,
                Start::Closed => return Got::Ok(Value::Object(map)),
                Start::End => return Got::Truncated(Value::Object(map)),
            };
            let key = if closers(c).is_some() {
                match self.string(c) {
                    Got::Ok(Value::String(k)) => k,
                    Got::Truncated(_) => return Got::Truncated(Value::Object(map)),
                    _ => return Got::Fail,
                }
            } else if c.is_alphanumeric() || c == '_' {
                self.repair("unquoted key");
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-')) {
                    self.pos += 1;
                }
                self.chars[start..self.pos].iter().map(|&(_, c)| c).collect()
            } else {
                return Got::Fail;
            };
            self.ws();
            match self.peek() {
                None => return Got::Truncated(Value::Object(map)),
                Some(':') => self.pos += 1,
                Some('=') => {
                    self.repair("'=' for ':'");
                    self.pos += 1;
                }
                Some(_) => return Got::Fail,
            }
            match self.value() {
                Got::Ok(v) => {
                    map.insert(key, v);
                }
                Got::Truncated(v) => {
                    // A cut-off container is kept (its complete parts count); a cut-off
                    // scalar is not.
                    if v.is_array() || v.is_object() {
                        map.insert(key, v);
                    }
                    return Got::Truncated(Value::Object(map));
                }
                Got::Fail => return Got::Fail,
            }
            match self.item_end(&['}', ']', ')'], |c| closers(c).is_some() || c.is_alphabetic()) {
                After::End => return Got::Truncated(Value::Object(map)),
                After::Fail => return Got::Fail,
                After::Next => {}
            }
        }
    }

    fn array(&mut self) -> Got {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            match self.item_start(']', &['}']) {
                Start::Item(_) => {}
                Start::Closed => return Got::Ok(Value::Array(items)),
                Start::End => return Got::Truncated(Value::Array(items)),
            }
            match self.value() {
                Got::Ok(v) => items.push(v),
                Got::Truncated(Value::Null) => return Got::Truncated(Value::Array(items)),
                Got::Truncated(v @ Value::Array(_)) => {
                    items.push(v);
                    return Got::Truncated(Value::Array(items));
                }
                Got::Truncated(_) => {
                    items.push(Value::String(TRUNCATED.to_string()));
                    return Got::Truncated(Value::Array(items));
                }
                Got::Fail => return Got::Fail,
            }
            match self.item_end(&[']', '}'], |c| closers(c).is_some() || matches!(c, '{' | '[')) {
                After::End => return Got::Truncated(Value::Array(items)),
                After::Fail => return Got::Fail,
                After::Next => {}
            }
        }
    }

    fn string(&mut self, open: char) -> Got {
        let close = closers(open).unwrap_or(&['"']);
        if open != '"' {
            self.repair("non-standard quotes");
        }
        self.pos += 1;
        let mut s = String::new();
        loop {
            let Some(c) = self.peek() else { return Got::Truncated(Value::String(s)) };
            self.pos += 1;
            if c == '\\' {
                let Some(e) = self.peek() else { return Got::Truncated(Value::String(s)) };
                self.pos += 1;
                match e {
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    'r' => s.push('\r'),
                    'b' | 'f' => {}
                    'u' => match self.hex4() {
                        Some(ch) => s.push(ch),
                        None => s.push_str("\\u"),
                    },
                    other => s.push(other),
                }
            } else if close.contains(&c) && self.ends_string() {
                return Got::Ok(Value::String(s));
            } else {
                if close.contains(&c) {
                    self.repair("unescaped quote");
                }
                s.push(c);
            }
        }
    }

    /// After a closing-quote candidate (already consumed): does the string end here?
    fn ends_string(&self) -> bool {
        let mut i = self.pos;
        while matches!(self.at(i), Some(' ' | '\t')) {
            i += 1;
        }
        matches!(self.at(i), None | Some(',' | ':' | '}' | ']' | ')' | '\n' | '\r'))
    }

    fn hex4(&mut self) -> Option<char> {
        let digits: String = (0..4).filter_map(|k| self.at(self.pos + k)).collect();
        let code = u32::from_str_radix(&digits, 16).ok().filter(|_| digits.len() == 4)?;
        self.pos += 4;
        Some(char::from_u32(code).unwrap_or('\u{FFFD}'))
    }

    fn number(&mut self) -> Got {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')) {
            self.pos += 1;
        }
        if self.peek().is_some_and(|c| c.is_alphabetic() || c == '_') {
            // `3D printer`, `2nd`: an unquoted string that starts with digits.
            self.pos = start;
            return self.bare_text();
        }
        let raw: String = self.chars[start..self.pos].iter().map(|&(_, c)| c).collect();
        let at_end = self.peek().is_none();
        let trimmed = raw.trim_start_matches('+');
        if trimmed != raw || raw.starts_with('.') || raw.starts_with("-.") {
            self.repair("non-standard number");
        }
        let number = if let Ok(i) = trimmed.parse::<i64>() {
            Some(Value::Number(Number::from(i)))
        } else {
            trimmed.parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number)
        };
        match (number, at_end) {
            (Some(v), false) => Got::Ok(v),
            (Some(v), true) => Got::Truncated(v),
            (None, true) => Got::Truncated(Value::Null),
            (None, false) => Got::Fail,
        }
    }

    /// `true`, `None`, `NaN`, or an unquoted string running to `,` `}` `]` or line end.
    fn bare_value(&mut self) -> Got {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        let word: String = self.chars[start..self.pos].iter().map(|&(_, c)| c).collect();
        let literal = match word.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "null" => Some(Value::Null),
            _ => None,
        };
        let python = match word.as_str() {
            "True" | "TRUE" => Some(Value::Bool(true)),
            "False" | "FALSE" => Some(Value::Bool(false)),
            "None" | "NULL" | "nil" | "undefined" | "NaN" | "Infinity" => Some(Value::Null),
            _ => None,
        };
        let ends_here = |r: &Self| {
            let mut i = r.pos;
            while matches!(r.at(i), Some(' ' | '\t')) {
                i += 1;
            }
            matches!(r.at(i), None | Some(',' | '}' | ']' | ')' | '\n' | '\r'))
        };
        if let Some(v) = literal.clone().or(python.clone()).filter(|_| ends_here(self)) {
            if python.is_some() {
                self.repair("Python literals");
            }
            return if self.peek().is_none() { Got::Truncated(v) } else { Got::Ok(v) };
        }
        self.pos = start;
        self.bare_text()
    }

    fn bare_text(&mut self) -> Got {
        self.repair("unquoted string");
        let start = self.pos;
        while self.peek().is_some_and(|c| !matches!(c, ',' | '}' | ']' | '\n' | '\r')) {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().map(|&(_, c)| c).collect();
        let v = Value::String(text.trim().to_string());
        if self.peek().is_none() {
            Got::Truncated(v)
        } else {
            Got::Ok(v)
        }
    }
}

/// The characters that may close a string opened by `open`, if `open` is a quote.
fn closers(open: char) -> Option<&'static [char]> {
    Some(match open {
        '"' => &['"'],
        '\'' => &['\''],
        '“' => &['”', '“', '"'],
        '”' => &['”', '"'],
        '„' => &['“', '”', '"'],
        '‘' => &['’', '‘', '\''],
        '’' => &['’', '\''],
        _ => return None,
    })
}
