//! Importers: other tools' outputs turned into [`Prepared`] documents for the pipeline.
//!
//! - HippoRAG OpenIE JSON: each passage becomes a document with one chunk; its named
//!   entities become mentions; its triples become facts and RELATED edges.
//! - Edge lists (`source,relation,target[,description]`), the multi-hop pipeline's input:
//!   the file becomes one document (no chunks) supporting the entities, edges and facts.

use std::path::Path;

use rhizome_core::ids::{chunk_id, document_id};
use rhizome_core::text::count_tokens;
use rhizome_core::{Chunk, Document, Error, ExtractedEntity, ExtractedFact, ExtractedRelation, Extraction, Result};
use serde_json::Value;

use crate::pipeline::Prepared;

/// What an import read, and what it had to drop (with reasons, for warnings).
#[derive(Debug, Default)]
pub struct Imported {
    pub items: Vec<Prepared>,
    pub dropped: Vec<String>,
}

fn read(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| Error::bad_input(path.display().to_string(), format!("not valid UTF-8 ({e})")))
}

/// The one chunk of a passage imported whole (a passage is not split).
pub fn whole_chunk(doc_id: &str, text: String) -> Chunk {
    Chunk {
        id: chunk_id(doc_id, 0, &text),
        doc_id: doc_id.to_string(),
        ordinal: 0,
        tokens: count_tokens(&text) as u32,
        start: 0,
        end: text.chars().count() as u32,
        text,
        pages: None,
    }
}

/// Read a HippoRAG OpenIE results file (`{"docs": [{title, text, passage,
/// extracted_entities, extracted_triples}]}`; a bare list of such docs is accepted too).
pub fn hipporag_openie(path: &Path) -> Result<Imported> {
    let src = path.display().to_string();
    let v: Value = serde_json::from_str(&python_json_to_json(&read(path)?))
        .map_err(|e| Error::bad_input(&src, format!("invalid JSON at line {} column {}: {e}", e.line(), e.column())))?;
    let docs = match &v {
        Value::Object(o) => o.get("docs").and_then(Value::as_array),
        Value::Array(a) => Some(a),
        _ => None,
    }
    .ok_or_else(|| Error::bad_input(&src, "expected a HippoRAG OpenIE file: an object with a \"docs\" list"))?;
    let mut out = Imported::default();
    for (i, d) in docs.iter().enumerate() {
        let title = d.get("title").and_then(Value::as_str).unwrap_or("").trim().to_string();
        let text = d
            .get("text")
            .and_then(Value::as_str)
            .or_else(|| d.get("passage").and_then(Value::as_str))
            .unwrap_or("")
            .trim()
            .to_string();
        if text.is_empty() {
            out.dropped.push(format!("{src}: docs[{i}] has no text; skipped"));
            continue;
        }
        let doc = Document {
            id: document_id(&title, &text),
            source: format!("{src}#{i}"),
            title,
            text: text.clone(),
            pages: None,
            meta: Default::default(),
        };
        let chunk = whole_chunk(&doc.id, text);
        let mut ex = Extraction::default();
        for e in d.get("extracted_entities").and_then(Value::as_array).into_iter().flatten() {
            match e.as_str().map(str::trim) {
                Some(name) if !name.is_empty() => ex.entities.push(ExtractedEntity {
                    name: name.to_string(),
                    entity_type: "ENTITY".into(),
                    description: String::new(),
                    count: 1,
                    importance: None,
                }),
                _ => out.dropped.push(format!("{src}: docs[{i}]: entity {e} is not a name")),
            }
        }
        for t in d.get("extracted_triples").and_then(Value::as_array).into_iter().flatten() {
            let parts: Option<Vec<String>> = t
                .as_array()
                .filter(|a| a.len() == 3)
                .map(|a| a.iter().map(scalar_text).collect::<Option<Vec<_>>>())
                .unwrap_or(None);
            let Some(p) = parts.filter(|p| p.iter().all(|x| !x.trim().is_empty())) else {
                out.dropped.push(format!("{src}: docs[{i}]: triple {t} is not [subject, predicate, object]"));
                continue;
            };
            ex.relations.push(ExtractedRelation {
                source: p[0].clone(),
                target: p[2].clone(),
                rel_type: p[1].clone(),
                description: format!("{} {} {}", p[0], p[1], p[2]),
                weight: 1.0,
            });
            ex.facts.push(ExtractedFact { subject: p[0].clone(), predicate: p[1].clone(), object: p[2].clone() });
        }
        out.items.push(Prepared {
            doc,
            chunks: vec![chunk],
            extractions: vec![ex],
            doc_extraction: Extraction::default(),
            failures: vec![],
        });
    }
    Ok(out)
}

/// Python's `json.dump` writes `NaN`, `Infinity` and `-Infinity`, which JSON lacks
/// (HippoRAG's OpenIE files carry `"avg_ent_chars": NaN`). Replace them, outside strings,
/// with `null`.
pub fn python_json_to_json(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_str, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        } else {
            let token = ["-Infinity", "Infinity", "NaN"].into_iter().find(|t| rest.starts_with(t));
            if let Some(t) = token {
                out.push_str("null");
                rest = &rest[t.len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// Strings as they are; numbers (OpenIE sometimes emits them) as text.
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Split one CSV line into fields (RFC 4180 quoting: "a, b" and "" for a quote).
pub fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            ('"', false) if cur.trim().is_empty() => {
                cur.clear();
                quoted = true;
            }
            (',', false) => fields.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    fields.push(cur);
    fields.into_iter().map(|f| f.trim().to_string()).collect()
}

/// Column names an edge list's header row may use (any case): the row is skipped when
/// its first three fields are all among them, e.g. `source,relation,target`,
/// `subject,predicate,object`, `head,relation,tail`, `from,type,to`.
const HEADER_NAMES: &[&str] = &[
    "source",
    "src",
    "subject",
    "head",
    "from",
    "start",
    "node1",
    "entity1",
    "relation",
    "relationship",
    "predicate",
    "rel",
    "type",
    "edge",
    "label",
    "target",
    "dst",
    "object",
    "tail",
    "to",
    "end",
    "node2",
    "entity2",
    "description",
    "desc",
];

fn is_header(f: &[String]) -> bool {
    f.len() >= 3 && f[..3].iter().all(|x| HEADER_NAMES.contains(&x.trim().to_lowercase().as_str()))
}

/// How much of a CSV file [`is_edge_list_header`] reads.
pub const EDGE_HEADER_BYTES: usize = 4096;

/// Whether a CSV file (its first [`EDGE_HEADER_BYTES`] are enough) starts with an edge list's header
/// row (`source,relation,target`, [`HEADER_NAMES`]): such a file is imported into the
/// graph; any other CSV is a table, read as a document.
pub fn is_edge_list_header(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(EDGE_HEADER_BYTES)];
    let text = String::from_utf8_lossy(head);
    let first = text.trim_start_matches('\u{feff}').lines().next().unwrap_or("");
    is_header(&csv_fields(first))
}

/// Read an edge list: `source,relation,target[,description]`, with or without a header
/// row ([`HEADER_NAMES`]).
pub fn edges_csv(path: &Path) -> Result<Imported> {
    let title = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    edges_csv_text(read(path)?, &path.display().to_string(), &title)
}

/// [`edges_csv`] of a text already read: `src` names it in messages and is the
/// document's source, `title` its title.
pub fn edges_csv_text(text: String, src: &str, title: &str) -> Result<Imported> {
    let src = src.to_string();
    let mut ex = Extraction::default();
    let mut out = Imported::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_start_matches('\u{feff}');
        if line.trim().is_empty() {
            continue;
        }
        let f = csv_fields(line);
        if n == 0 && is_header(&f) {
            continue;
        }
        if f.len() < 3 || f[..3].iter().any(|x| x.is_empty()) {
            out.dropped.push(format!("{src}:{}: expected source,relation,target[,description]; skipped", n + 1));
            continue;
        }
        let description =
            f.get(3).filter(|d| !d.is_empty()).cloned().unwrap_or_else(|| format!("{} {} {}", f[0], f[1], f[2]));
        for name in [&f[0], &f[2]] {
            ex.entities.push(ExtractedEntity {
                name: name.clone(),
                entity_type: "ENTITY".into(),
                description: String::new(),
                count: 1,
                importance: None,
            });
        }
        ex.relations.push(ExtractedRelation {
            source: f[0].clone(),
            target: f[2].clone(),
            rel_type: f[1].clone(),
            description,
            weight: 1.0,
        });
        ex.facts.push(ExtractedFact { subject: f[0].clone(), predicate: f[1].clone(), object: f[2].clone() });
    }
    if ex.relations.is_empty() {
        return Err(Error::bad_input(&src, "no edges found; expected lines of source,relation,target"));
    }
    let title = title.to_string();
    let doc =
        Document { id: document_id(&title, &text), source: src, title, text, pages: None, meta: Default::default() };
    out.items.push(Prepared { doc, chunks: vec![], extractions: vec![], doc_extraction: ex, failures: vec![] });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_nan_becomes_null() {
        let t = r#"{"a": NaN, "b": "NaN \" Infinity", "c": [-Infinity, 1]}"#;
        let v: Value = serde_json::from_str(&python_json_to_json(t)).unwrap();
        assert!(v["a"].is_null());
        assert_eq!(v["b"], "NaN \" Infinity");
        assert!(v["c"][0].is_null());
    }

    #[test]
    fn edge_list_headers_are_recognised_not_imported() {
        let dir = tempfile::tempdir().unwrap();
        for header in
            ["source,relation,target", "subject,predicate,object", "Head,Relation,Tail", "from,type,to,description"]
        {
            let p = dir.path().join("edges.csv");
            std::fs::write(&p, format!("{header}\nAage Bohr,won,Nobel Prize\n")).unwrap();
            let got = edges_csv(&p).unwrap();
            let ex = &got.items[0].doc_extraction;
            assert_eq!(ex.facts.len(), 1, "{header}: only the data row is a fact");
            assert_eq!(ex.facts[0].subject, "Aage Bohr");
        }
        // A first row that is data stays data.
        let p = dir.path().join("data.csv");
        std::fs::write(&p, "Source Code,is,open\nA,b,C\n").unwrap();
        assert_eq!(edges_csv(&p).unwrap().items[0].doc_extraction.facts.len(), 2);
    }

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_fields(r#"a,"b, c","say ""hi""""#), vec!["a", "b, c", "say \"hi\""]);
        assert_eq!(
            csv_fields("Aage Bohr,đoạt giải,Giải Nobel Vật lý 1975"),
            vec!["Aage Bohr", "đoạt giải", "Giải Nobel Vật lý 1975"]
        );
    }
}
