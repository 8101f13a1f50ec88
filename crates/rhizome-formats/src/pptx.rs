//! PowerPoint presentations (PPTX): one page per slide in presentation order, each slide's
//! text frames (a paragraph per line, table rows as `cell | cell`), then its speaker notes
//! after a line `Notes:`.

use quick_xml::events::Event;

use crate::xml::{self, attr, attr_exact, name};
use crate::zipread::{check_not_ole, Zip};
use crate::{text, Extracted, Limits, PageUnit, ReadError, Result};

const PRESENTATION: &str = "ppt/presentation.xml";

/// Reads a PPTX file.
pub fn read_pptx(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    check_not_ole(bytes)?;
    let mut zip = Zip::open(bytes, limits)?;
    let Some(pres) = zip.read_text(PRESENTATION)? else {
        return Err(ReadError::damaged("no ppt/presentation.xml: not a PowerPoint file"));
    };
    let rels = match zip.read_text(&xml::rels_path(PRESENTATION))? {
        Some(r) => xml::rels(&r, PRESENTATION),
        None => Vec::new(),
    };
    let slides: Vec<String> = slide_ids(&pres)?
        .iter()
        .filter_map(|id| rels.iter().find(|r| &r.id == id && !r.external))
        .map(|r| r.target.clone())
        .collect();
    text::check_pages(slides.len(), limits)?;
    let props = zip.read_text("docProps/core.xml")?.map(|core| xml::dublin_core(&core)).unwrap_or_default();
    let mut out = props.extracted(PageUnit::Slide);
    for (i, path) in slides.iter().enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let Some(slide) = zip.read_text(path)? else {
            out.notes.push(format!("slide {number}: missing part {path}"));
            out.push_page(number, None, "");
            continue;
        };
        let (mut body, label) = shapes_text(&slide, path)?;
        let notes_part = match zip.read_text(&xml::rels_path(path))? {
            Some(r) => xml::rels(&r, path).into_iter().find(|r| r.kind.ends_with("/notesSlide") && !r.external),
            None => None,
        };
        if let Some(rel) = notes_part {
            if let Some(notes) = zip.read_text(&rel.target)? {
                let (notes, _) = shapes_text(&notes, &rel.target)?;
                if !notes.trim().is_empty() {
                    body.push_str("\n\nNotes:\n");
                    body.push_str(&notes);
                }
            }
        }
        out.push_page(number, label, &text::tidy(&body));
        text::check_growing(out.text.len(), limits)?;
    }
    text::check_len(&out.text, limits)?;
    Ok(out)
}

/// The relationship ids of the slides, in `p:sldIdLst` order.
fn slide_ids(xml: &str) -> Result<Vec<String>> {
    let mut r = xml::reader(xml);
    let mut ids = Vec::new();
    loop {
        match xml::next(&mut r, PRESENTATION)? {
            Event::Start(e) | Event::Empty(e) if name(&e) == b"sldId" => {
                // `r:id` (any prefix), not the numeric `id`.
                let rid = e
                    .attributes()
                    .flatten()
                    .find(|a| {
                        let k = a.key.into_inner();
                        xml::local(k) == b"id" && k != b"id"
                    })
                    .map(|a| xml::value(&a));
                ids.extend(rid.or_else(|| attr_exact(&e, b"id")));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(ids)
}

/// Placeholders whose text is furniture, not content (slide numbers, dates, footers).
const FURNITURE: &[&str] = &["sldNum", "dt", "ftr", "hdr", "sldImg"];

/// The text of a slide's (or notes page's) shapes, and the text of its title placeholder.
fn shapes_text(xml: &str, part: &str) -> Result<(String, Option<String>)> {
    let mut r = xml::reader(xml);
    let mut out = String::new();
    let mut title: Option<String> = None;
    // Where the current shape's text started, and what kind of placeholder it is.
    let mut shape: Option<(usize, Option<String>)> = None;
    let mut line = String::new();
    let (mut in_t, mut tables) = (false, 0usize);
    let (mut row, mut cell): (Vec<String>, String) = (Vec::new(), String::new());
    loop {
        let ev = xml::next(&mut r, part)?;
        match ev {
            Event::Start(e) => match name(&e) {
                b"Fallback" => xml::skip_element(&mut r, part)?,
                b"sp" => {
                    shape = Some((out.len(), None));
                    push_break(&mut out);
                }
                b"t" => in_t = true,
                b"tbl" => tables += 1,
                b"tr" if tables == 1 => row.clear(),
                b"tc" if tables == 1 => cell.clear(),
                b"p" => line.clear(),
                _ => {}
            },
            Event::Empty(e) => match name(&e) {
                b"ph" => {
                    if let Some((_, kind)) = &mut shape {
                        *kind = Some(attr(&e, b"type").unwrap_or_else(|| "body".into()));
                    }
                }
                b"br" => line.push('\n'),
                b"tab" => line.push('\t'),
                _ => {}
            },
            Event::Text(t) if in_t => line.push_str(&xml::text(&t)),
            Event::GeneralRef(g) if in_t => line.push_str(&xml::reference(&g)),
            Event::End(e) => match xml::local(e.name().into_inner()) {
                b"t" => in_t = false,
                b"p" if tables > 0 => {
                    if !cell.is_empty() {
                        cell.push(' ');
                    }
                    cell.push_str(line.trim());
                    line.clear();
                }
                b"p" => {
                    out.push_str(line.trim_end());
                    out.push('\n');
                    line.clear();
                }
                b"tc" if tables == 1 => row.push(std::mem::take(&mut cell)),
                b"tr" if tables == 1 => {
                    let cells: Vec<&str> = row.iter().map(|c| c.trim()).collect();
                    if cells.iter().any(|c| !c.is_empty()) {
                        out.push_str(&cells.join(" | "));
                        out.push('\n');
                    }
                    row.clear();
                }
                b"tbl" => tables = tables.saturating_sub(1),
                b"sp" => {
                    if let Some((start, kind)) = shape.take() {
                        match kind.as_deref() {
                            Some(k) if FURNITURE.contains(&k) => out.truncate(start),
                            Some("title" | "ctrTitle") if title.is_none() => {
                                let t = text::tidy(&out[start..]).replace('\n', " ");
                                title = Some(t).filter(|t| !t.is_empty());
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok((out, title))
}

/// A blank line between shapes.
fn push_break(out: &mut String) {
    if !out.is_empty() {
        out.push('\n');
    }
}
