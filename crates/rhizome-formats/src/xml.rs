//! XML helpers shared by the OOXML and EPUB readers: decoding a part, names, attributes,
//! text and references, relationships, and the Dublin Core title and author.

use quick_xml::events::{BytesRef, BytesStart, BytesText, Event};
use quick_xml::Reader;

use crate::{ReadError, Result};

/// A part's bytes as text: UTF-8 (BOM dropped) or UTF-16 with a BOM.
pub(crate) fn decode(bytes: &[u8]) -> String {
    let utf16 = |le: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| if le { u16::from_le_bytes([c[0], c[1]]) } else { u16::from_be_bytes([c[0], c[1]]) })
            .collect();
        String::from_utf16_lossy(&units)
    };
    match bytes {
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        [0xFF, 0xFE, ..] => utf16(true),
        [0xFE, 0xFF, ..] => utf16(false),
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// A reader for `xml` that tolerates mismatched end tags.
pub(crate) fn reader(xml: &str) -> Reader<&[u8]> {
    let mut r = Reader::from_str(xml);
    r.config_mut().check_end_names = false;
    r.config_mut().allow_unmatched_ends = true;
    r
}

/// The next event, or a [`ReadError::Damaged`] naming `part`.
pub(crate) fn next<'a>(r: &mut Reader<&'a [u8]>, part: &str) -> Result<Event<'a>> {
    r.read_event().map_err(|e| ReadError::Damaged(format!("{part}: {e}")))
}

/// Skips the rest of the element whose start was just read (to its matching end, or the
/// end of the part).
pub(crate) fn skip_element(r: &mut Reader<&[u8]>, part: &str) -> Result<()> {
    let mut depth = 1usize;
    loop {
        match next(r, part)? {
            Event::Start(_) => depth += 1,
            Event::End(_) if depth == 1 => return Ok(()),
            Event::End(_) => depth -= 1,
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// A name without its namespace prefix.
pub(crate) fn local(name: &[u8]) -> &[u8] {
    name.rsplit(|b| *b == b':').next().unwrap_or(name)
}

/// The local name of an element.
pub(crate) fn name<'e>(e: &'e BytesStart<'_>) -> &'e [u8] {
    local(e.name().into_inner())
}

/// The unescaped value of the attribute whose local name is `key` (any prefix, or none).
pub(crate) fn attr(e: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    attr_where(e, |k| local(k) == key)
}

/// The unescaped value of the attribute named exactly `key` (prefix included).
pub(crate) fn attr_exact(e: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    attr_where(e, |k| k == key)
}

fn attr_where(e: &BytesStart<'_>, matches: impl Fn(&[u8]) -> bool) -> Option<String> {
    e.attributes().flatten().find(|a| matches(a.key.into_inner())).map(|a| value(&a))
}

/// An attribute's value, references decoded (the parts are UTF-8 by now).
pub(crate) fn value(a: &quick_xml::events::attributes::Attribute<'_>) -> String {
    let raw = String::from_utf8_lossy(&a.value);
    match quick_xml::escape::unescape_with(&raw, quick_xml::escape::resolve_predefined_entity) {
        Ok(v) => v.into_owned(),
        Err(_) => raw.into_owned(),
    }
}

/// The text of a text event (decoded, line ends normalised).
pub(crate) fn text(t: &BytesText<'_>) -> String {
    t.xml_content().map(|c| c.into_owned()).unwrap_or_default()
}

/// The text a reference stands for (`&amp;`, `&#233;`, and the common HTML names).
pub(crate) fn reference(r: &BytesRef<'_>) -> String {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return c.to_string();
    }
    let name = r.decode().unwrap_or_default();
    crate::html::entity(&name).map(|s| s.into_owned()).unwrap_or_default()
}

/// A relationship of an OPC part (`_rels/*.rels`).
pub(crate) struct Rel {
    pub id: String,
    pub kind: String,
    /// The target as a path inside the package (resolved against the source part).
    pub target: String,
    pub external: bool,
}

/// The relationships in a `.rels` part of the source part `source` (e.g. `ppt/presentation.xml`).
pub(crate) fn rels(xml: &str, source: &str) -> Vec<Rel> {
    let mut r = reader(xml);
    let mut out = Vec::new();
    while let Ok(ev) = r.read_event() {
        match ev {
            Event::Start(e) | Event::Empty(e) if name(&e) == b"Relationship" => {
                let target = attr(&e, b"Target").unwrap_or_default();
                let external = attr(&e, b"TargetMode").is_some_and(|m| m == "External");
                out.push(Rel {
                    id: attr(&e, b"Id").unwrap_or_default(),
                    kind: attr(&e, b"Type").unwrap_or_default(),
                    target: if external { target } else { resolve(source, &target) },
                    external,
                });
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// The `.rels` part of `part` (`ppt/slides/slide1.xml` -> `ppt/slides/_rels/slide1.xml.rels`).
pub(crate) fn rels_path(part: &str) -> String {
    match part.rsplit_once('/') {
        Some((dir, file)) => format!("{dir}/_rels/{file}.rels"),
        None => format!("_rels/{part}.rels"),
    }
}

/// `target` (relative, `../x`, or absolute `/x`, maybe %-escaped) against the part `source`.
pub(crate) fn resolve(source: &str, target: &str) -> String {
    let target = target.split(['#', '?']).next().unwrap_or("");
    let target = unescape_url(target);
    let mut parts: Vec<&str> = match target.strip_prefix('/') {
        Some(_) => Vec::new(),
        None => source.split('/').collect(),
    };
    if target.starts_with('/') || !parts.is_empty() {
        parts.pop(); // the source's own file name (or the empty root)
    }
    for seg in target.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

fn unescape_url(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a metadata part says of its document: title, author, and when it was created
/// and last modified (ISO 8601, as written).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Props {
    pub title: Option<String>,
    pub author: Option<String>,
    pub created: Option<String>,
    pub modified: Option<String>,
}

impl Props {
    /// An empty [`Extracted`] of pages in `unit`, with these properties.
    pub fn extracted(self, unit: crate::PageUnit) -> crate::Extracted {
        crate::Extracted {
            title: self.title,
            author: self.author,
            created: self.created,
            modified: self.modified,
            unit,
            ..Default::default()
        }
    }
}

/// The first title, creator and dates of a metadata part (OOXML `docProps/core.xml`:
/// `dc:title`, `dc:creator`, `dcterms:created`, `dcterms:modified`; OpenDocument
/// `meta.xml`: `meta:creation-date` and `dc:date`; EPUB OPF: `dc:date`), tidied; empty
/// ones and dates that do not start `YYYY-MM-DD` are `None`.
pub(crate) fn dublin_core(xml: &str) -> Props {
    #[derive(Clone, Copy, PartialEq)]
    enum Field {
        Title,
        Creator,
        Created,
        Modified,
    }
    let mut r = reader(xml);
    let mut p = Props::default();
    let mut field: Option<Field> = None;
    let mut buf = String::new();
    while let Ok(ev) = r.read_event() {
        match ev {
            Event::Start(e) => {
                let n = e.name().into_inner();
                let is_dc = n.starts_with(b"dc:") || n == b"title" || n == b"creator";
                field = match (n, local(n)) {
                    (_, b"title") if is_dc && p.title.is_none() => Some(Field::Title),
                    (_, b"creator") if is_dc && p.author.is_none() => Some(Field::Creator),
                    (b"dcterms:created" | b"meta:creation-date", _) if p.created.is_none() => Some(Field::Created),
                    (b"dcterms:modified", _) if p.modified.is_none() => Some(Field::Modified),
                    // OpenDocument's dc:date is when it was last saved; EPUB's is when it
                    // was published.
                    (b"dc:date", _) if xml.contains("urn:oasis:names:tc:opendocument") => Some(Field::Modified),
                    (b"dc:date", _) if p.created.is_none() => Some(Field::Created),
                    _ => None,
                };
                buf.clear();
            }
            Event::Text(t) if field.is_some() => buf.push_str(&text(&t)),
            Event::GeneralRef(g) if field.is_some() => buf.push_str(&reference(&g)),
            Event::End(_) => {
                let v = crate::text::tidy(&buf).replace('\n', " ");
                match field.take() {
                    _ if v.is_empty() => {}
                    Some(Field::Title) => p.title = Some(v),
                    Some(Field::Creator) => p.author = Some(v),
                    Some(Field::Created) => p.created = crate::text::iso_date(&v),
                    Some(Field::Modified) => p.modified = crate::text::iso_date(&v),
                    None => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_targets() {
        assert_eq!(resolve("ppt/presentation.xml", "slides/slide1.xml"), "ppt/slides/slide1.xml");
        assert_eq!(resolve("ppt/slides/slide1.xml", "../notesSlides/n%201.xml"), "ppt/notesSlides/n 1.xml");
        assert_eq!(resolve("ppt/presentation.xml", "/ppt/slides/s.xml"), "ppt/slides/s.xml");
        assert_eq!(resolve("", "word/document.xml"), "word/document.xml");
        assert_eq!(rels_path("ppt/slides/slide1.xml"), "ppt/slides/_rels/slide1.xml.rels");
    }

    #[test]
    fn reads_dublin_core() {
        let xml = r#"<cp:coreProperties xmlns:dc="x"><dc:title>A &amp; B</dc:title>
            <dc:creator>Nguyễn  Văn A</dc:creator></cp:coreProperties>"#;
        let p = dublin_core(xml);
        assert_eq!((p.title.as_deref(), p.author.as_deref()), (Some("A & B"), Some("Nguyễn Văn A")));
    }
}
