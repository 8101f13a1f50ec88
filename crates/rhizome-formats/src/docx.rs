//! Word documents (DOCX): paragraphs in order, headings on their own, list items one per
//! line (`- item`), tables one row per line (`cell | cell`), title and author from the
//! core properties.

use std::collections::HashSet;

use quick_xml::events::Event;

use crate::xml::{self, attr, name};
use crate::zipread::{check_not_ole, Zip};
use crate::{text, Extracted, Limits, Result};

const OFFICE_DOCUMENT: &str = "/officeDocument";

/// Reads a DOCX file.
pub fn read_docx(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    check_not_ole(bytes)?;
    let mut zip = Zip::open(bytes, limits)?;
    let main = zip
        .read_text("_rels/.rels")?
        .and_then(|rels| {
            xml::rels(&rels, "")
                .into_iter()
                .find(|r| r.kind.ends_with(OFFICE_DOCUMENT) && !r.external)
                .map(|r| r.target)
        })
        .filter(|t| zip.has(t))
        .unwrap_or_else(|| "word/document.xml".to_string());
    let Some(document) = zip.read_text(&main)? else {
        return Err(crate::ReadError::damaged("no word/document.xml: not a Word document"));
    };
    let styles = match zip.read_text("word/styles.xml")? {
        Some(s) => Styles::parse(&s),
        None => Styles::default(),
    };
    let body = body_text(&document, &main, &styles, limits)?;
    let props = zip.read_text("docProps/core.xml")?.map(|core| xml::dublin_core(&core)).unwrap_or_default();
    let text = text::tidy(&body);
    text::check_len(&text, limits)?;
    Ok(Extracted { text, ..props.extracted(crate::PageUnit::None) })
}

/// Paragraph styles that mean a heading or a list item.
#[derive(Default)]
struct Styles {
    headings: HashSet<String>,
    lists: HashSet<String>,
}

impl Styles {
    fn parse(xml: &str) -> Self {
        let mut r = xml::reader(xml);
        let mut styles = Styles::default();
        let mut id: Option<String> = None;
        while let Ok(ev) = r.read_event() {
            match ev {
                Event::Start(e) | Event::Empty(e) => match name(&e) {
                    b"style" => id = attr(&e, b"styleId"),
                    b"name" => {
                        let n = attr(&e, b"val").unwrap_or_default().to_lowercase();
                        if let Some(id) = &id {
                            if n.starts_with("heading") || n == "title" || n == "subtitle" {
                                styles.headings.insert(id.clone());
                            } else if n.starts_with("list") && n != "list paragraph" {
                                styles.lists.insert(id.clone());
                            }
                        }
                    }
                    b"outlineLvl" => styles.headings.extend(id.clone()),
                    b"numPr" => styles.lists.extend(id.clone()),
                    _ => {}
                },
                Event::Eof => break,
                _ => {}
            }
        }
        styles
    }

    fn is_heading(&self, style: &str) -> bool {
        self.headings.contains(style) || style.starts_with("Heading") || style == "Title"
    }

    fn is_list(&self, style: &str) -> bool {
        self.lists.contains(style) || style.starts_with("ListBullet") || style.starts_with("ListNumber")
    }
}

/// A paragraph being read (text boxes nest paragraphs inside paragraphs).
#[derive(Default)]
struct Para {
    text: String,
    style: String,
    list: bool,
    heading: bool,
}

/// What a finished line of the body is, for how it joins its neighbours.
#[derive(PartialEq, Clone, Copy)]
enum Kind {
    Para,
    Item,
    Row,
}

/// The body's text: blocks separated by blank lines, list items and table rows by one
/// line break within their runs.
fn body_text(xml: &str, part: &str, styles: &Styles, limits: &Limits) -> Result<String> {
    let mut r = xml::reader(xml);
    let mut out = String::new();
    let mut last: Option<Kind> = None;
    let mut paras: Vec<Para> = Vec::new();
    let (mut in_ppr, mut in_t) = (false, false);
    let mut tables = 0usize;
    let (mut row, mut cell): (Vec<String>, String) = (Vec::new(), String::new());
    let mut emit = |out: &mut String, kind: Kind, line: &str| {
        if line.trim().is_empty() {
            return;
        }
        if let Some(prev) = last {
            out.push_str(if prev == kind && kind != Kind::Para { "\n" } else { "\n\n" });
        }
        out.push_str(line);
        last = Some(kind);
    };
    loop {
        let ev = xml::next(&mut r, part)?;
        match ev {
            Event::Start(e) => match name(&e) {
                // Drawings carry their text twice: keep the modern choice, skip the fallback.
                b"Fallback" | b"delText" | b"instrText" => xml::skip_element(&mut r, part)?,
                b"p" => paras.push(Para::default()),
                b"pPr" => in_ppr = true,
                b"t" => in_t = true,
                b"tbl" => tables += 1,
                b"tr" if tables == 1 => row.clear(),
                b"tc" if tables == 1 => cell.clear(),
                _ => {}
            },
            Event::Empty(e) => match name(&e) {
                b"pStyle" => {
                    if let Some(p) = paras.last_mut() {
                        p.style = attr(&e, b"val").unwrap_or_default();
                    }
                }
                b"numPr" if in_ppr => paras.last_mut().into_iter().for_each(|p| p.list = true),
                b"outlineLvl" if in_ppr => paras.last_mut().into_iter().for_each(|p| p.heading = true),
                b"tab" if !in_ppr => paras.last_mut().into_iter().for_each(|p| p.text.push('\t')),
                b"br" | b"cr" => paras.last_mut().into_iter().for_each(|p| p.text.push('\n')),
                _ => {}
            },
            Event::Text(t) if in_t => {
                if let Some(p) = paras.last_mut() {
                    p.text.push_str(&xml::text(&t));
                }
            }
            Event::GeneralRef(g) if in_t => {
                if let Some(p) = paras.last_mut() {
                    p.text.push_str(&xml::reference(&g));
                }
            }
            Event::End(e) => match xml::local(e.name().into_inner()) {
                b"t" => in_t = false,
                b"pPr" => in_ppr = false,
                b"numPr" if in_ppr => paras.last_mut().into_iter().for_each(|p| p.list = true),
                b"p" => {
                    let Some(p) = paras.pop() else { continue };
                    let line = p.text.trim();
                    if tables > 0 {
                        if !cell.is_empty() && !line.is_empty() {
                            cell.push(' ');
                        }
                        cell.push_str(&line.replace('\n', " "));
                    } else if p.heading || styles.is_heading(&p.style) {
                        emit(&mut out, Kind::Para, &line.replace('\n', " "));
                    } else if p.list || styles.is_list(&p.style) {
                        emit(&mut out, Kind::Item, &format!("- {}", line.replace('\n', " ")));
                    } else {
                        emit(&mut out, Kind::Para, line);
                    }
                    text::check_growing(out.len(), limits)?;
                }
                b"tc" if tables == 1 => row.push(std::mem::take(&mut cell)),
                b"tr" if tables == 1 => {
                    let cells: Vec<&str> = row.iter().map(|c| c.trim()).collect();
                    if cells.iter().any(|c| !c.is_empty()) {
                        emit(&mut out, Kind::Row, &cells.join(" | "));
                    }
                    row.clear();
                }
                b"tbl" => {
                    tables = tables.saturating_sub(1);
                    if tables > 0 {
                        cell.push(' ');
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}
