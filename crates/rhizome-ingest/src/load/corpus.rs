//! Corpus files: JSON lists of `{title, text}`, `{title: [sentences]}` maps, and JSONL.

use std::path::Path;

use std::fmt;

use rhizome_core::{ids, Document, Result};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{bad, stem};

/// Keys tried, in order, for an entry's text.
const TEXT_KEYS: [&str; 6] = ["text", "passage", "content", "body", "paragraph_text", "contents"];

/// Documents of a corpus file, and the indices of entries without text.
pub(super) struct Parsed {
    pub documents: Vec<Document>,
    pub empty: Vec<usize>,
}

/// Parses corpus `text` read from `path` (JSON, or JSONL when `jsonl`).
pub(super) fn parse(path: &Path, text: &str, jsonl: bool) -> Result<Parsed> {
    let entries = if jsonl {
        parse_lines(path, text)?
    } else {
        match serde_json::from_str::<Top>(text) {
            Ok(v) => layout(path, v)?,
            // A `.json` file holding one object per line.
            Err(e) if e.to_string().starts_with("trailing characters") => parse_lines(path, text)?,
            Err(e) => return Err(bad(path, json_error(&e, 0))),
        }
    };
    let display = path.display().to_string();
    let fallback = stem(path);
    let mut out = Parsed { documents: Vec::new(), empty: Vec::new() };
    for (n, (title, body)) in entries.into_iter().enumerate() {
        match body {
            Some(text) if !text.trim().is_empty() => {
                let title = super::to_nfc(title.unwrap_or_else(|| format!("{fallback}#{n}")));
                let text = super::to_nfc(text);
                out.documents.push(Document {
                    id: ids::document_id(&title, &text),
                    source: format!("{display}#{n}"),
                    title,
                    text,
                    pages: None,
                    meta: Default::default(),
                });
            }
            _ => out.empty.push(n),
        }
    }
    Ok(out)
}

/// An entry: its title (if it has one) and its text (if it has one).
type Entry = (Option<String>, Option<String>);

/// `invalid JSON at line L column C: MESSAGE`, with `line_offset` added to the line.
fn json_error(e: &serde_json::Error, line_offset: usize) -> String {
    let msg = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let msg = msg.strip_suffix(&suffix).unwrap_or(&msg);
    format!("invalid JSON at line {} column {}: {msg}", e.line() + line_offset, e.column())
}

/// One JSON value per non-blank line.
fn parse_lines(path: &Path, text: &str) -> Result<Vec<Entry>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| bad(path, json_error(&e, i)))?;
        out.push(match v {
            Value::Object(obj) => from_object(&obj, None),
            other => (None, text_of(&other)),
        });
    }
    Ok(out)
}

/// A whole corpus file: a list, or an object with its keys in file order (serde_json's
/// `Map` would sort them, and `{title: [sentences]}` corpora are ordered by the file).
enum Top {
    List(Vec<Value>),
    Object(Vec<(String, Value)>),
    Other,
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON list or object")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Top, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    items.push(v);
                }
                Ok(Top::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Top, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    entries.push((k, v));
                }
                Ok(Top::Object(entries))
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Top, E> {
                Ok(Top::Other)
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<Top, E> {
                Ok(Top::Other)
            }
            fn visit_u64<E>(self, _: u64) -> std::result::Result<Top, E> {
                Ok(Top::Other)
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<Top, E> {
                Ok(Top::Other)
            }
            fn visit_str<E>(self, _: &str) -> std::result::Result<Top, E> {
                Ok(Top::Other)
            }
            fn visit_unit<E>(self) -> std::result::Result<Top, E> {
                Ok(Top::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// Entries of a whole-file JSON value.
fn layout(path: &Path, v: Top) -> Result<Vec<Entry>> {
    match v {
        Top::List(items) => Ok(items
            .iter()
            .map(|item| match item {
                Value::Object(obj) => from_object(obj, None),
                other => (None, text_of(other)),
            })
            .collect()),
        Top::Object(entries) if is_single_doc(&entries) => {
            let obj: Map<String, Value> = entries.into_iter().collect();
            Ok(vec![from_object(&obj, None)])
        }
        Top::Object(entries) if entries.iter().all(|(_, v)| text_of(v).is_some() || v.is_object()) => Ok(entries
            .iter()
            .map(|(title, v)| match v {
                Value::Object(inner) => from_object(inner, Some(title)),
                other => (Some(title.clone()), text_of(other)),
            })
            .collect()),
        _ => Err(bad(
            path,
            "unsupported JSON layout: expected a list of {\"title\", \"text\"} objects, \
             a {\"Title\": [sentences]} map, or JSON lines",
        )),
    }
}

/// True when an object is itself one `{title, text}` document.
fn is_single_doc(entries: &[(String, Value)]) -> bool {
    entries.iter().any(|(k, v)| TEXT_KEYS.contains(&k.as_str()) && v.is_string())
        && entries.iter().all(|(_, v)| !v.is_array() && !v.is_object())
}

fn from_object(obj: &Map<String, Value>, default_title: Option<&String>) -> Entry {
    let title = match obj.get("title") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => default_title.cloned(),
    };
    let text = TEXT_KEYS.iter().find_map(|k| obj.get(*k).and_then(text_of));
    (title, text)
}

/// A string, or a list of strings joined as they are (HotpotQA sentences carry their own
/// leading spaces).
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) if parts.iter().all(Value::is_string) => {
            Some(parts.iter().filter_map(Value::as_str).collect::<String>())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str, jsonl: bool) -> Result<Parsed> {
        parse(Path::new("c.json"), text, jsonl)
    }

    #[test]
    fn three_layouts() {
        let a =
            p(r#"[{"title":"A","text":"x"},{"title":"B","passage":"y"},{"title":"C","text":"  "}]"#, false).unwrap();
        assert_eq!(a.documents.len(), 2);
        assert_eq!(a.documents[1].text, "y");
        assert_eq!(a.documents[1].source, "c.json#1");
        assert_eq!(a.empty, vec![2]);
        let h = p(r#"{"T": ["One.", " Two."], "A": ["Three."]}"#, false).unwrap();
        assert_eq!(h.documents[0].title, "T");
        assert_eq!(h.documents[1].title, "A", "file order kept");
        assert_eq!(h.documents[0].text, "One. Two.");
        let l = p("{\"title\":\"A\",\"text\":\"x\"}\n\n{\"title\":\"B\",\"text\":\"y\"}\n", true).unwrap();
        assert_eq!(l.documents.len(), 2);
        let e = p("{\"title\":\"A\",\"text\":\"x\"}\n{\"title\": oops}\n", true).err().unwrap();
        assert!(e.to_string().contains("invalid JSON at line 2 column 11"), "{e}");
        let single = p(r#"{"title":"A","body":"hello"}"#, false).unwrap();
        assert_eq!(single.documents[0].title, "A");
        assert!(p("[1, 2", false).err().unwrap().to_string().contains("invalid JSON at line 1"));
        assert!(p("42", false).err().unwrap().to_string().contains("unsupported JSON layout"));
    }
}
