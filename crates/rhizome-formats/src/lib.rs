//! Reading the documents people have as text with its structure: PDF, Word (DOCX),
//! PowerPoint (PPTX), spreadsheets (XLSX, ODS, CSV tables), e-books (EPUB), mail (.eml)
//! and scanned pages (images, and PDF pages without a text layer, by OCR).
//!
//! Each reader takes the file's bytes and [`Limits`] and gives an [`Extracted`]: the text
//! in reading order (NFC, paragraphs separated by blank lines), its title and author when
//! the file says, and for paged formats the [`Page`]s: which part of the text each page,
//! slide or sheet holds. Nothing here knows of indexes or chunks; `rhizome-ingest` turns an
//! [`Extracted`] into documents.
//!
//! Hostile files are bounded: a reader refuses (never panics, never runs away) a file
//! that decompresses past [`Limits::max_decompressed`], has more than [`Limits::max_pages`]
//! pages or an image above [`Limits::max_pixels`]; encrypted and damaged files are
//! [`ReadError`]s that say so.

use std::fmt;

mod docx;
mod eml;
mod epub;
mod html;
mod ocr;
mod ods;
mod pdf;
mod pdf_bounds;
mod pdf_layout;
mod pptx;
mod sheet;
mod text;
mod xml;
mod zipread;

pub use docx::read_docx;
pub use eml::read_eml;
pub use epub::read_epub;
pub use html::{decode_entities, html_to_text, HtmlText};
pub use ocr::{fill_scanned_pages, image_size, read_image, read_pdf_pages};
pub use pdf::{pages_without_text, read_pdf};
pub use pptx::read_pptx;
pub use sheet::{read_csv_table, read_ods, read_xlsx};

/// Reads `bytes` as a file with extension `ext` (`docx`, `PPTX`, `.xlsx`, ...; case and a
/// leading dot do not matter), or `None` when no reader here takes that extension.
pub fn read(ext: &str, bytes: &[u8], limits: &Limits) -> Option<Result<Extracted>> {
    read_observed(ext, bytes, limits, &|_, _| {})
}

/// [`read`], telling `ocr_page(n, of)` as OCR reads each scanned page (the `n`th of `of`
/// to read): the slow part of a long scan.
pub fn read_observed(
    ext: &str,
    bytes: &[u8],
    limits: &Limits,
    ocr_page: &dyn Fn(u32, u32),
) -> Option<Result<Extracted>> {
    let ext = ext.trim_start_matches('.').to_ascii_lowercase();
    match ext.as_str() {
        // Pages without a text layer are read by OCR.
        "pdf" => Some(read_pdf(bytes, limits).and_then(|x| fill_scanned_pages(bytes, x, limits, ocr_page))),
        "docx" => Some(read_docx(bytes, limits)),
        "pptx" => Some(read_pptx(bytes, limits)),
        "xlsx" => Some(read_xlsx(bytes, limits)),
        "ods" => Some(read_ods(bytes, limits)),
        "csv" => Some(read_csv_table(bytes, limits)),
        "epub" => Some(read_epub(bytes, limits)),
        "eml" => Some(read_eml(bytes, limits)),
        "png" | "jpg" | "jpeg" | "tif" | "tiff" => Some(read_image(bytes, limits)),
        _ => None,
    }
}

/// What a paged format calls its pages, for citations (`p. 3`, `slide 3`, `sheet Sales`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PageUnit {
    /// Not paged (a DOCX, an e-mail body): no page numbers.
    #[default]
    None,
    /// PDF pages and scanned images (a TIFF's frames).
    Page,
    /// PowerPoint slides.
    Slide,
    /// Spreadsheet sheets.
    Sheet,
    /// E-book chapters.
    Chapter,
}

impl PageUnit {
    /// The word a citation uses before the number: `p.`, `slide`, `sheet`, `ch.`; empty
    /// for [`PageUnit::None`].
    pub fn abbreviation(self) -> &'static str {
        match self {
            PageUnit::None => "",
            PageUnit::Page => "p.",
            PageUnit::Slide => "slide",
            PageUnit::Sheet => "sheet",
            PageUnit::Chapter => "ch.",
        }
    }
}

/// One page (slide, sheet, chapter) of an [`Extracted`] text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Its number, from 1, as a reader of the file would count it.
    pub number: u32,
    /// Its name where it has one (a sheet's name, a chapter's title).
    pub label: Option<String>,
    /// Byte range of its text in [`Extracted::text`] (`start..end`, on char boundaries).
    /// Pages are in order and do not overlap; the separators between them belong to none.
    pub start: usize,
    pub end: usize,
}

/// A file carried inside another (an e-mail's attachment), read on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Its file name as the container gives it.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// A file read as text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extracted {
    /// From the file's metadata (PDF Info, DOCX core properties, EPUB OPF, mail subject).
    pub title: Option<String>,
    pub author: Option<String>,
    /// When the file says it was created and last modified, ISO 8601 (`2024-03-01` or
    /// `2024-03-01T09:30:00Z`).
    pub created: Option<String>,
    pub modified: Option<String>,
    /// The text in reading order, NFC.
    pub text: String,
    /// What a page is; [`PageUnit::None`] with no pages.
    pub unit: PageUnit,
    /// The pages, in order (empty when not paged).
    pub pages: Vec<Page>,
    /// Files inside this one to be read as documents of their own (mail attachments).
    pub attachments: Vec<Attachment>,
    /// What was left out or repaired, for the user (e.g. `page 4: no text layer, read by OCR`).
    pub notes: Vec<String>,
}

impl Extracted {
    /// Appends a page's text: a blank line before it unless it is the first, and a
    /// [`Page`] for it (empty pages keep their number, with an empty range).
    pub fn push_page(&mut self, number: u32, label: Option<String>, text: &str) {
        if !self.text.is_empty() && !text.trim().is_empty() {
            self.text.push_str("\n\n");
        }
        let start = self.text.len();
        self.text.push_str(text.trim());
        self.pages.push(Page { number, label, start, end: self.text.len() });
    }

    /// The page holding byte `offset` of the text, if any.
    pub fn page_at(&self, offset: usize) -> Option<&Page> {
        let i = self.pages.partition_point(|p| p.end <= offset);
        self.pages.get(i).filter(|p| p.start <= offset)
    }
}

/// Bounds on what one file may cost. The defaults suit a server taking uploads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes all the parts of a container (DOCX, XLSX, EPUB, PDF streams) may decompress to.
    pub max_decompressed: u64,
    /// Pages, slides, sheets or chapters.
    pub max_pages: u32,
    /// Pixels of one image read by OCR (width x height).
    pub max_pixels: u64,
    /// Characters of text one file may yield.
    pub max_text: usize,
    /// Seconds OCR may take per page.
    pub ocr_seconds: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_decompressed: 512 << 20,
            max_pages: 5_000,
            max_pixels: 64_000_000,
            max_text: 16 << 20,
            ocr_seconds: 120,
        }
    }
}

/// Why a file could not be read. Each says what is wrong in words a user can act on; the
/// caller names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("encrypted ({0}); save an unencrypted copy and index that")]
    Encrypted(String),
    #[error("damaged or truncated: {0}")]
    Damaged(String),
    #[error("too large: {0}")]
    TooLarge(String),
    /// A scanned page or image, and no OCR engine on this machine.
    #[error("needs OCR ({0}) and tesseract is not installed: install it (Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-vie tesseract-ocr-chi-sim)")]
    NeedsOcr(String),
    #[error("{0}")]
    Other(String),
}

/// Result of a reader.
pub type Result<T> = std::result::Result<T, ReadError>;

impl ReadError {
    pub(crate) fn damaged(what: impl fmt::Display) -> Self {
        ReadError::Damaged(what.to_string())
    }
}

/// `s` in Unicode NFC.
pub fn nfc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfc().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_their_text() {
        let mut e = Extracted { unit: PageUnit::Page, ..Default::default() };
        e.push_page(1, None, "First page.");
        e.push_page(2, None, "  ");
        e.push_page(3, None, "Third page.\n");
        assert_eq!(e.text, "First page.\n\nThird page.");
        assert_eq!(&e.text[e.pages[2].start..e.pages[2].end], "Third page.");
        assert_eq!(e.page_at(0).map(|p| p.number), Some(1));
        assert_eq!(e.page_at(e.text.find("Third").unwrap()).map(|p| p.number), Some(3));
        assert_eq!(e.page_at(11), None, "the separator belongs to no page");
    }
}
