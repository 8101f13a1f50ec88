//! PDF: one page per PDF page, its text laid out from glyph positions (see
//! `pdf_layout`): lines, two columns in reading order, table rows as `cell | cell`,
//! running headers, footers and page numbers dropped, hyphenated words rejoined.
//! Title and author come from the Info dictionary. Pages without a text layer are kept
//! empty and listed in the notes as `page N: no text layer` (see [`pages_without_text`]).
//!
//! Glyphs come from `pdf-extract` (over `lopdf`). Its panics on fonts it cannot decode
//! are caught per page; structures it would follow forever (a page's `/Parent` chain in
//! a loop, a form XObject drawing itself) are checked before a page is read. Every stream
//! lopdf or pdf-extract inflates is measured first (`pdf_bounds`), a page that would draw
//! more than [`pdf_bounds::MAX_PAGE_WORK`] is skipped, and one page's reading stops at
//! [`MAX_PAGE_GLYPHS`] glyphs or [`PAGE_SECONDS`].

use std::collections::HashSet;
use std::time::{Duration, Instant};
// A panic of pdf-extract or lopdf on a malformed file is guarded (it becomes a note or an
// error, prints nothing, and the fuzzer does not count it as a failure).
use rhizome_core::panic_guard::catch;

use pdf_extract::{Dictionary, Document, MediaBox, Object, ObjectId, OutputDev, OutputError, Transform};

use crate::pdf_bounds::{self, MAX_PAGE_WORK};
use crate::pdf_layout::{self, expand_ligature, Glyph, RawPage};
use crate::{text, Extracted, Limits, PageUnit, ReadError, Result};

/// How deep form XObjects may nest (each drawing the next) before a page is skipped.
const MAX_FORM_DEPTH: usize = 24;
/// How many forms one page may draw, counting repeats.
const MAX_FORM_VISITS: usize = 10_000;
/// Glyphs one page may yield (a dense page has tens of thousands).
const MAX_PAGE_GLYPHS: usize = 500_000;
/// Seconds one page's text may take to read.
const PAGE_SECONDS: u64 = 30;
/// The note a page without a text layer gets; [`pages_without_text`] reads it back.
pub(crate) const NO_TEXT: &str = "no text layer";

/// Stack of the thread a PDF is read on: lopdf and pdf-extract recurse into nested objects
/// and content, and a hostile file nests deeply. Reserved, not committed, until used.
const PDF_STACK: usize = 512 << 20;

/// Reads a PDF file (on a thread of its own with a large stack; see [`PDF_STACK`]).
pub fn read_pdf(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("pdf".into())
            .stack_size(PDF_STACK)
            .spawn_scoped(s, || read_pdf_here(bytes, limits))
            .map_err(|e| ReadError::Other(format!("cannot start the PDF reader: {e}")))?
            .join()
            .unwrap_or_else(|_| Err(ReadError::damaged("the PDF reader failed on this file")))
    })
}

fn read_pdf_here(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    if !bytes.windows(5).take(1024).any(|w| w == b"%PDF-") {
        return Err(ReadError::damaged("no %PDF- header: not a PDF file"));
    }
    pdf_bounds::check_xref_streams(bytes, limits)?;
    let mut doc = match catch(|| pdf_bounds::load(bytes, limits)) {
        Ok(Ok(Ok(doc))) => doc,
        Ok(Ok(Err(e))) => return Err(ReadError::damaged(format!("cannot parse the PDF ({e})"))),
        Ok(Err(too_large)) => return Err(too_large),
        Err(_) => return Err(ReadError::damaged("cannot parse the PDF")),
    };
    if doc.is_encrypted() {
        match catch(|| doc.decrypt("")) {
            Ok(Ok(())) => {}
            _ => return Err(ReadError::Encrypted("password-protected PDF".into())),
        }
    }
    if doc.encryption_state.is_some() || doc.is_encrypted() {
        // lopdf decrypts while loading and does not filter those objects: measured now.
        pdf_bounds::check_loaded(&doc, limits)?;
    }
    let pages: Vec<(u32, ObjectId)> = doc.get_pages().into_iter().collect();
    text::check_pages(pages.len(), limits)?;
    check_references(&doc)?;
    let mut out = Extracted {
        title: info(&doc, b"Title"),
        author: info(&doc, b"Author"),
        created: info(&doc, b"CreationDate").and_then(|d| pdf_date(&d)),
        modified: info(&doc, b"ModDate").and_then(|d| pdf_date(&d)),
        unit: PageUnit::Page,
        ..Default::default()
    };
    let mut raws = Vec::with_capacity(pages.len());
    let mut chars = 0usize;
    for &(number, id) in &pages {
        let raw = match page_hazard(&doc, id) {
            Some(why) => {
                out.notes.push(format!("page {number}: skipped ({why})"));
                RawPage::default()
            }
            None => {
                let mut dev = Collector::new();
                match catch(|| pdf_extract::output_doc_page(&doc, &mut dev, number)) {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) if dev.stopped.is_some() => {
                        let why = dev.stopped.unwrap_or_default();
                        out.notes.push(format!("page {number}: text partly read ({why})"))
                    }
                    Ok(Err(e)) => out.notes.push(format!("page {number}: text partly read ({e:?})")),
                    Err(_) => out
                        .notes
                        .push(format!("page {number}: text could not be read (unsupported font or broken content)")),
                }
                dev.page
            }
        };
        chars += raw.glyphs.iter().map(|g| g.text.len()).sum::<usize>();
        text::check_growing(chars, limits)?;
        raws.push(raw);
    }
    let mut lines: Vec<_> = raws.iter().map(pdf_layout::lines).collect();
    pdf_layout::drop_running(&raws, &mut lines);
    for ((&(number, _), raw), ls) in pages.iter().zip(&raws).zip(&lines) {
        if raw.glyphs.is_empty() {
            out.notes.push(format!("page {number}: {NO_TEXT}"));
        }
        out.push_page(number, None, &text::tidy(&pdf_layout::page_text(raw, ls)));
        text::check_growing(out.text.len(), limits)?;
    }
    text::check_len(&out.text, limits)?;
    Ok(out)
}

/// The numbers of the pages [`read_pdf`] found no text on (scans, to be read by OCR).
pub fn pages_without_text(x: &Extracted) -> Vec<u32> {
    x.notes
        .iter()
        .filter_map(|n| n.strip_prefix("page ")?.strip_suffix(&format!(": {NO_TEXT}"))?.parse().ok())
        .collect()
}

/// An output device keeping each glyph with its position, until the page's bounds.
struct Collector {
    page: RawPage,
    space: bool,
    deadline: Instant,
    stopped: Option<&'static str>,
}

impl Collector {
    fn new() -> Self {
        let deadline = Instant::now() + Duration::from_secs(PAGE_SECONDS);
        Collector { page: RawPage::default(), space: false, deadline, stopped: None }
    }

    /// Stops reading the page (pdf-extract ends it at the error) when a bound is reached.
    fn within_bounds(&mut self) -> std::result::Result<(), OutputError> {
        if self.page.glyphs.len() >= MAX_PAGE_GLYPHS {
            self.stopped = Some("more glyphs than one page may have");
        } else if Instant::now() > self.deadline {
            self.stopped = Some("reading it took too long");
        }
        match self.stopped {
            Some(_) => Err(OutputError::FormatError(std::fmt::Error)),
            None => Ok(()),
        }
    }
}

impl OutputDev for Collector {
    fn begin_page(
        &mut self,
        _: u32,
        media: &MediaBox,
        _: Option<(f64, f64, f64, f64)>,
    ) -> std::result::Result<(), OutputError> {
        self.page = RawPage {
            bottom: media.lly.min(media.ury),
            top: media.lly.max(media.ury),
            left: media.llx.min(media.urx),
            right: media.llx.max(media.urx),
            glyphs: Vec::new(),
        };
        Ok(())
    }
    fn end_page(&mut self) -> std::result::Result<(), OutputError> {
        Ok(())
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        ch: &str,
    ) -> std::result::Result<(), OutputError> {
        self.within_bounds()?;
        if ch.chars().all(char::is_whitespace) {
            self.space = true;
            return Ok(());
        }
        let scale = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt();
        let size = (font_size * scale).abs();
        let mut text = String::with_capacity(ch.len());
        for c in ch.chars().filter(|c| !c.is_control()) {
            match expand_ligature(c) {
                Some(s) => text.push_str(s),
                None => text.push(c),
            }
        }
        if text.is_empty() || !size.is_finite() {
            return Ok(());
        }
        let w = (width * font_size * trm.m11.hypot(trm.m12)).abs();
        let g = Glyph { x: trm.m31, y: trm.m32, w, size, text, space_before: std::mem::take(&mut self.space) };
        self.page.glyphs.push(g);
        Ok(())
    }
    fn begin_word(&mut self) -> std::result::Result<(), OutputError> {
        Ok(())
    }
    fn end_word(&mut self) -> std::result::Result<(), OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> std::result::Result<(), OutputError> {
        Ok(())
    }
    fn stroke(
        &mut self,
        _: &Transform,
        _: &pdf_extract::ColorSpace,
        _: &[f64],
        _: &pdf_extract::Path,
    ) -> std::result::Result<(), OutputError> {
        self.within_bounds()
    }
    fn fill(
        &mut self,
        _: &Transform,
        _: &pdf_extract::ColorSpace,
        _: &[f64],
        _: &pdf_extract::Path,
    ) -> std::result::Result<(), OutputError> {
        self.within_bounds()
    }
}

/// `Title` or `Author` of the Info dictionary, decoded.
fn info(doc: &Document, key: &[u8]) -> Option<String> {
    let dict = match doc.trailer.get(b"Info").ok()? {
        Object::Reference(id) => doc.get_dictionary(*id).ok()?,
        Object::Dictionary(d) => d,
        _ => return None,
    };
    let value = match dict.get(key).ok()? {
        Object::Reference(id) => doc.get_object(*id).ok()?,
        v => v,
    };
    let Object::String(bytes, _) = value else { return None };
    let s = text::tidy(&pdf_text_string(bytes));
    (!s.is_empty()).then_some(s)
}

/// A PDF date (`D:YYYYMMDDHHmmSSOHH'mm'`, every part after the year optional) in ISO
/// 8601: `2024-03-01` or `2024-03-01T09:30:00` (the zone is left out: dates are compared
/// by day).
fn pdf_date(s: &str) -> Option<String> {
    let d: String = s.trim().trim_start_matches("D:").chars().take_while(char::is_ascii_digit).collect();
    let part = |a: usize, b: usize, default: &str| d.get(a..b).unwrap_or(default).to_string();
    if d.len() < 4 {
        return None;
    }
    let date = format!("{}-{}-{}", &d[..4], part(4, 6, "01"), part(6, 8, "01"));
    let out = if d.len() >= 12 { format!("{date}T{}:{}:{}", &d[8..10], &d[10..12], part(12, 14, "00")) } else { date };
    crate::text::iso_date(&out)
}

/// A PDF text string: UTF-16BE with a byte order mark, UTF-8 with one (PDF 2.0), or
/// PDFDocEncoding (read as Latin-1, which it matches for letters).
fn pdf_text_string(b: &[u8]) -> String {
    if let Some(rest) = b.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = b.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    b.iter().map(|&c| char::from(c)).collect()
}

/// Why the page cannot be read safely, if it cannot: a `/Parent` chain that loops (which
/// pdf-extract would climb forever looking for inherited keys), or form XObjects that
/// draw themselves or nest too deep (which it would recurse into without end).
fn page_hazard(doc: &Document, page: ObjectId) -> Option<&'static str> {
    let mut seen = HashSet::new();
    let mut id = page;
    loop {
        if !seen.insert(id) {
            return Some("its /Parent chain loops");
        }
        let parent =
            doc.get_dictionary(id).ok().and_then(|d| d.get(b"Parent").ok()).and_then(|p| p.as_reference().ok());
        match parent {
            Some(p) => id = p,
            None => break,
        }
    }
    let Some(contents) = pdf_bounds::page_work(doc, page, MAX_PAGE_WORK) else {
        return Some("its content is larger than one page may draw");
    };
    let resources = inherited_resources(doc, page)?;
    let mut walk = FormWalk { visits: 0, chain: Vec::new(), left: MAX_PAGE_WORK - contents };
    forms_ok(doc, resources, &mut walk).err()
}

/// Where [`forms_ok`] is: the forms it is inside, how many it has visited, and how many
/// bytes of content the page may still draw.
struct FormWalk {
    visits: usize,
    chain: Vec<ObjectId>,
    left: u64,
}

fn inherited_resources(doc: &Document, page: ObjectId) -> Option<&Dictionary> {
    let mut id = page;
    for _ in 0..64 {
        let dict = doc.get_dictionary(id).ok()?;
        if let Ok(r) = dict.get(b"Resources") {
            return deref(doc, r).and_then(|o| o.as_dict().ok());
        }
        id = dict.get(b"Parent").ok()?.as_reference().ok()?;
    }
    None
}

fn deref<'a>(doc: &'a Document, o: &'a Object) -> Option<&'a Object> {
    match o {
        Object::Reference(id) => doc.get_object(*id).ok(),
        o => Some(o),
    }
}

/// Walks the form XObjects reachable from `resources`, depth first.
fn forms_ok<'a>(
    doc: &'a Document,
    resources: &'a Dictionary,
    w: &mut FormWalk,
) -> std::result::Result<(), &'static str> {
    let Some(Ok(xobjects)) = resources.get(b"XObject").ok().and_then(|x| deref(doc, x)).map(Object::as_dict) else {
        return Ok(());
    };
    for (_, v) in xobjects.iter() {
        let Object::Reference(id) = v else { continue };
        let Ok(stream) = doc.get_object(*id).and_then(Object::as_stream) else { continue };
        // pdf-extract draws every XObject that is not an image as a form, whatever its
        // /Subtype says (a damaged name too), so every such stream is followed here.
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Image".as_slice()) {
            continue;
        }
        w.visits += 1;
        if w.chain.contains(id) {
            return Err("a form XObject draws itself");
        }
        if w.chain.len() >= MAX_FORM_DEPTH || w.visits > MAX_FORM_VISITS {
            return Err("form XObjects nest too deep");
        }
        let drawn = pdf_bounds::decoded_len(&stream.dict, &stream.content, w.left);
        w.left -= drawn.ok_or("its content is larger than one page may draw")?;
        let own = stream.dict.get(b"Resources").ok().and_then(|r| deref(doc, r)).and_then(|r| r.as_dict().ok());
        w.chain.push(*id);
        forms_ok(doc, own.unwrap_or(resources), w)?;
        w.chain.pop();
    }
    Ok(())
}

/// Refuses a PDF in which an object is a reference that leads back to itself (`5 0 obj
/// 5 0 R`, or a ring of them): following it never ends.
fn check_references(doc: &Document) -> Result<()> {
    for (&start, obj) in &doc.objects {
        let Object::Reference(mut next) = obj else { continue };
        let mut steps = 0;
        while let Some(Object::Reference(r)) = doc.objects.get(&next) {
            steps += 1;
            if *r == start || steps > 64 {
                return Err(ReadError::damaged(format!("object {} {} refers to itself", start.0, start.1)));
            }
            next = *r;
        }
        if next == start {
            return Err(ReadError::damaged(format!("object {} {} refers to itself", start.0, start.1)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdf_dates_become_iso() {
        assert_eq!(pdf_date("D:20240301093000+01'00'").as_deref(), Some("2024-03-01T09:30:00"));
        assert_eq!(pdf_date("D:2024").as_deref(), Some("2024-01-01"));
        assert_eq!(pdf_date("D:20241399"), None);
        assert_eq!(pdf_date("yesterday"), None);
    }
}
