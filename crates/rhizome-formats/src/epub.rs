//! E-books (EPUB 2 and 3): the chapters of the spine in reading order, one page each,
//! labelled with the chapter's first heading; title and author from the package (OPF).

use std::collections::HashMap;

use quick_xml::events::Event;

use crate::xml::{self, attr, name};
use crate::zipread::Zip;
use crate::{html, text, Extracted, Limits, PageUnit, ReadError, Result};

const CONTAINER: &str = "META-INF/container.xml";

/// Reads an EPUB file.
pub fn read_epub(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    let mut zip = Zip::open(bytes, limits)?;
    let Some(container) = zip.read_text(CONTAINER)? else {
        return Err(ReadError::damaged("no META-INF/container.xml: not an EPUB"));
    };
    let opf_path =
        rootfile(&container).ok_or_else(|| ReadError::damaged("META-INF/container.xml names no package file"))?;
    let Some(opf) = zip.read_text(&opf_path)? else {
        return Err(ReadError::Damaged(format!("package file {opf_path} is missing")));
    };
    let spine = spine(&opf, &opf_path)?;
    text::check_pages(spine.len(), limits)?;
    if let Some(enc) = zip.read_text("META-INF/encryption.xml")? {
        if drm_protected(&enc, &spine) {
            return Err(ReadError::Encrypted("DRM-protected e-book".into()));
        }
    }
    let mut out = xml::dublin_core(&opf).extracted(PageUnit::Chapter);
    let mut number = 0u32;
    for path in &spine {
        let Some(chapter) = zip.read_text(path)? else {
            out.notes.push(format!("{path}: listed in the spine but missing"));
            continue;
        };
        number += 1;
        let page = html::html_to_text(&chapter);
        out.push_page(number, page.heading, &page.text);
        text::check_growing(out.text.len(), limits)?;
    }
    text::check_len(&out.text, limits)?;
    Ok(out)
}

/// The package file named by `container.xml`.
fn rootfile(xml: &str) -> Option<String> {
    let mut r = xml::reader(xml);
    while let Ok(ev) = r.read_event() {
        match ev {
            Event::Start(e) | Event::Empty(e) if name(&e) == b"rootfile" => {
                let media = attr(&e, b"media-type").unwrap_or_default();
                if media.is_empty() || media == "application/oebps-package+xml" {
                    return attr(&e, b"full-path").map(|p| xml::resolve("", &p));
                }
            }
            Event::Eof => return None,
            _ => {}
        }
    }
    None
}

/// The paths of the spine's (X)HTML documents, in reading order.
fn spine(opf: &str, opf_path: &str) -> Result<Vec<String>> {
    let mut r = xml::reader(opf);
    let mut items: HashMap<String, (String, String)> = HashMap::new(); // id -> (path, media type)
    let mut order: Vec<String> = Vec::new();
    loop {
        match xml::next(&mut r, opf_path)? {
            Event::Start(e) | Event::Empty(e) => match name(&e) {
                b"item" => {
                    if let (Some(id), Some(href)) = (attr(&e, b"id"), attr(&e, b"href")) {
                        let media = attr(&e, b"media-type").unwrap_or_default();
                        items.insert(id, (xml::resolve(opf_path, &href), media));
                    }
                }
                b"itemref" => order.extend(attr(&e, b"idref")),
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(order
        .iter()
        .filter_map(|id| items.get(id))
        .filter(|(path, media)| media.contains("html") || path.ends_with("html") || path.ends_with(".htm"))
        .map(|(path, _)| path.clone())
        .collect())
}

/// Whether `encryption.xml` encrypts any chapter (fonts alone are obfuscated, not DRM).
fn drm_protected(enc: &str, spine: &[String]) -> bool {
    let mut r = xml::reader(enc);
    while let Ok(ev) = r.read_event() {
        match ev {
            Event::Start(e) | Event::Empty(e) if name(&e) == b"CipherReference" => {
                let uri = attr(&e, b"URI").map(|u| xml::resolve("", &u)).unwrap_or_default();
                if spine.contains(&uri) {
                    return true;
                }
            }
            Event::Eof => return false,
            _ => {}
        }
    }
    false
}
