//! Files read through `rhizome_formats`: PDF, Word, PowerPoint, spreadsheets, e-books,
//! mail and scanned images. The bytes become one document (title from the file's metadata,
//! else its name) whose pages, slides or sheets are kept as a [`Pagination`]; a mail's
//! attachments of a readable type become documents of their own, with sources
//! `MAIL#NAME`.

use std::fs;
use std::path::Path;

use rhizome_core::{Document, Error, Loader, PageSpan, Pagination, Result};
use rhizome_formats::{Extracted, Limits, PageUnit};

use super::{bad, extension, format_of_extension, is_kind, stem, to_nfc, MediaKind, Skipped};

/// Largest file read (bytes): past it the file is refused before it is opened.
pub const MAX_FILE_BYTES: u64 = 512 << 20;

/// How deep attachments are followed (a mail attached to a mail ...).
const MAX_NESTING: usize = 2;

/// The loader of every [`MediaKind`] that `rhizome_formats` reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileLoader;

impl Loader for FileLoader {
    fn accepts(&self, path: &Path) -> bool {
        is_kind(path, MediaKind::is_read_by_formats)
    }

    fn load(&self, path: &Path) -> Result<Vec<Document>> {
        self.load_outcome(path).map(|(docs, _)| docs)
    }
}

impl FileLoader {
    /// The documents of `path` and the attachments that could not be read (as
    /// `FILE#NAME`, with the reason).
    pub fn load_outcome(&self, path: &Path) -> Result<(Vec<Document>, Vec<Skipped>)> {
        self.load_outcome_observed(path, &|_| {})
    }

    /// [`FileLoader::load_outcome`], telling `at` where a long read is (`scan.pdf: OCR,
    /// page 3 of 40`).
    pub fn load_outcome_observed(&self, path: &Path, at: &dyn Fn(&str)) -> Result<(Vec<Document>, Vec<Skipped>)> {
        let size = fs::metadata(path).map_err(|e| Error::io(path, e))?.len();
        if size > MAX_FILE_BYTES {
            return Err(bad(path, format!("too large: {size} bytes (at most {MAX_FILE_BYTES} are read)")));
        }
        if size == 0 {
            return Err(bad(path, "empty"));
        }
        let bytes = fs::read(path).map_err(|e| Error::io(path, e))?;
        let ext = extension(path).unwrap_or_default();
        if ext == "csv" && crate::import::is_edge_list_header(&bytes) {
            return Err(bad(
                path,
                "an edge list (its header names source, relation and target columns), not a table: import it \
                 with `rhizome import edges FILE`",
            ));
        }
        let mut out = (Vec::new(), Vec::new());
        read_into(&path.display().to_string(), &stem(path), &ext, &bytes, 0, &mut out, at)?;
        Ok(out)
    }
}

/// Reads one file's bytes into documents (pushed to `out.0`); its attachments follow,
/// those that fail are pushed to `out.1`. The file's own failure is the error.
fn read_into(
    source: &str,
    name_stem: &str,
    ext: &str,
    bytes: &[u8],
    depth: usize,
    out: &mut (Vec<Document>, Vec<Skipped>),
    at: &dyn Fn(&str),
) -> Result<()> {
    let bad = |msg: String| Error::bad_input(source, msg);
    let limits = Limits::default();
    let name = source.rsplit(['/', '\\']).next().unwrap_or(source);
    let ocr_page = |k: u32, of: u32| at(&format!("{name}: OCR, page {k} of {of}"));
    let read = rhizome_formats::read_observed(ext, bytes, &limits, &ocr_page)
        .ok_or_else(|| bad(format!("unsupported file type .{ext}")))?;
    let mut x = read.map_err(|e| bad(e.to_string()))?;
    let attachments = std::mem::take(&mut x.attachments);
    let mut doc = document(source, name_stem, x).ok_or_else(|| bad("no text in it".into()))?;
    doc.meta.media_type = super::media_type_of_extension(ext).map(str::to_string);
    doc.meta.size_bytes = Some(bytes.len() as u64);
    out.0.push(doc);
    for a in attachments {
        let at = format!("{source}#{}", a.name);
        let a_ext = Path::new(&a.name).extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
        let Some(format) = format_of_extension(&a_ext).filter(|f| f.loader.is_some()) else {
            out.1.push(Skipped {
                path: at,
                reason: super::unsupported_reason(Some(a_ext.as_str()).filter(|e| !e.is_empty())),
            });
            continue;
        };
        if depth >= MAX_NESTING {
            out.1.push(Skipped { path: at, reason: "attachment nested too deep".into() });
            continue;
        }
        let a_stem = Path::new(&a.name).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let result = if format.kind.is_read_by_formats() {
            read_into(&at, &a_stem, &a_ext, &a.bytes, depth + 1, out, &|_| {})
        } else {
            text_attachment(&at, &a_stem, &a.bytes).map(|mut d| {
                d.meta.media_type = super::media_type_of_extension(&a_ext).map(str::to_string);
                d.meta.size_bytes = Some(a.bytes.len() as u64);
                out.0.push(d)
            })
        };
        if let Err(e) = result {
            out.1.push(Skipped { path: at, reason: super::error_reason(&e) });
        }
    }
    Ok(())
}

/// A plain-text attachment (`.txt`, `.md`, `.html`...): its text, as a text file would be read.
fn text_attachment(source: &str, name_stem: &str, bytes: &[u8]) -> Result<Document> {
    let text = std::str::from_utf8(bytes).map_err(|_| Error::bad_input(source, "not valid UTF-8"))?;
    let text = to_nfc(text.replace("\r\n", "\n").trim().to_string());
    if text.is_empty() {
        return Err(Error::bad_input(source, "empty"));
    }
    Ok(Document::new(source, to_nfc(name_stem.to_string()), text))
}

/// The document of an [`Extracted`] file: NFC text, title from the metadata or the file's
/// stem, pages with character ranges. None when there is no text.
fn document(source: &str, name_stem: &str, x: Extracted) -> Option<Document> {
    // Page ranges are bytes of `x.text`; the document keeps characters of its NFC text.
    let text = x.text;
    let mut spans = Vec::with_capacity(x.pages.len());
    let mut nfc_text = String::with_capacity(text.len());
    let mut chars = 0u32;
    let mut push = |piece: &str, nfc_text: &mut String| {
        let piece = to_nfc(piece.to_string());
        chars += piece.chars().count() as u32;
        nfc_text.push_str(&piece);
        chars
    };
    let mut at = 0;
    for p in &x.pages {
        let (s, e) = (p.start.min(text.len()), p.end.min(text.len()));
        if s < at || e < s || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            continue;
        }
        let start = push(&text[at..s], &mut nfc_text);
        let end = push(&text[s..e], &mut nfc_text);
        spans.push(PageSpan { number: p.number, label: p.label.clone(), start, end });
        at = e;
    }
    push(&text[at..], &mut nfc_text);
    if nfc_text.trim().is_empty() {
        return None;
    }
    let title = x.title.filter(|t| !t.trim().is_empty()).unwrap_or_else(|| name_stem.to_string());
    let mut doc = Document::new(source, to_nfc(title.trim().to_string()), nfc_text);
    doc.meta.author = x.author.map(to_nfc);
    doc.meta.created = x.created;
    doc.meta.modified = x.modified;
    if x.unit != PageUnit::None && !spans.is_empty() {
        doc.pages = Some(Pagination { unit: unit_name(x.unit).to_string(), pages: spans });
    }
    Some(doc)
}

/// The name a [`Pagination`] gives a page unit.
pub fn unit_name(u: PageUnit) -> &'static str {
    match u {
        PageUnit::None => "",
        PageUnit::Page => "page",
        PageUnit::Slide => "slide",
        PageUnit::Sheet => "sheet",
        PageUnit::Chapter => "chapter",
    }
}
