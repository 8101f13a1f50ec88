//! The file-type registry: [`FORMATS`], one row per format with its extensions, media
//! type and loader, and the lookups every caller (folder walk, uploads, error messages,
//! the web UI through the server) makes in it.

use std::path::Path;

use rhizome_core::Loader;
use serde::Serialize;

use super::{extension, CorpusLoader, FileLoader, HtmlLoader, MarkdownLoader, TextLoader};
/// What a file of one format holds, and so what becomes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// Plain text, one document per file.
    Text,
    /// Markdown, one document per file.
    Markdown,
    /// HTML, one document per file.
    Html,
    /// A JSON corpus: a list of `{title, text}` or a map of title to sentences.
    JsonCorpus,
    /// A JSON Lines corpus: one `{title, text}` object per line.
    JsonLinesCorpus,
    /// CSV: a table, read row by row with the header row's column names applied to each
    /// row. A file whose header names an edge list's columns (`source,relation,target`,
    /// [`crate::import::is_edge_list_header`]) is an edge list instead: imported into the
    /// graph (`rhizome import edges`, or uploaded), never read as a document.
    Csv,
    /// PDF: the text layer page by page (pages without one read by OCR).
    Pdf,
    /// Word (DOCX): paragraphs, headings, lists and tables.
    Word,
    /// PowerPoint (PPTX): slide by slide, notes included.
    Slides,
    /// Spreadsheets (XLSX, ODS): sheet by sheet, each row with its column names.
    Spreadsheet,
    /// E-books (EPUB): chapter by chapter.
    Ebook,
    /// E-mail (.eml): headers and body; attachments become documents of their own.
    Email,
    /// Scanned pages and pictures of text, read by OCR.
    Image,
}

impl MediaKind {
    /// True for the corpus kinds, whose entries become documents with `FILE#N` sources.
    pub fn is_corpus(self) -> bool {
        matches!(self, MediaKind::JsonCorpus | MediaKind::JsonLinesCorpus)
    }

    /// True for the kinds read from their bytes by `rhizome_formats` ([`FileLoader`]).
    pub fn is_read_by_formats(self) -> bool {
        matches!(
            self,
            MediaKind::Pdf
                | MediaKind::Word
                | MediaKind::Slides
                | MediaKind::Spreadsheet
                | MediaKind::Csv
                | MediaKind::Ebook
                | MediaKind::Email
                | MediaKind::Image
        )
    }
}

/// One row of the file-type registry [`FORMATS`].
#[derive(Clone, Copy, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Format {
    /// What the file holds.
    pub kind: MediaKind,
    /// The file name extensions, lower case and without the dot; the first is the usual one.
    pub extensions: &'static [&'static str],
    /// Its media type (MIME).
    pub media_type: &'static str,
    /// What it is, for people: "plain text", "PDF".
    pub description: &'static str,
    /// The loader that reads it as documents, or None for a file that is only imported
    /// (none today: a CSV edge list is told apart by its header), which a folder walk
    /// leaves out.
    #[serde(skip)]
    pub loader: Option<&'static dyn Loader>,
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Format").field("kind", &self.kind).field("extensions", &self.extensions).finish()
    }
}

/// Every file type Rhizome reads: the single list that indexing, uploads, error messages
/// and the web UI (through the server) take their extensions from.
pub static FORMATS: &[Format] = &[
    Format {
        kind: MediaKind::Text,
        extensions: &["txt", "text"],
        media_type: "text/plain",
        description: "plain text",
        loader: Some(&TextLoader),
    },
    Format {
        kind: MediaKind::Markdown,
        extensions: &["md", "markdown", "mdown", "mkd"],
        media_type: "text/markdown",
        description: "Markdown",
        loader: Some(&MarkdownLoader),
    },
    Format {
        kind: MediaKind::Html,
        extensions: &["html", "htm", "xhtml"],
        media_type: "text/html",
        description: "HTML",
        loader: Some(&HtmlLoader),
    },
    Format {
        kind: MediaKind::JsonCorpus,
        extensions: &["json"],
        media_type: "application/json",
        description: "JSON corpus ([{title, text}, ...])",
        loader: Some(&CorpusLoader),
    },
    Format {
        kind: MediaKind::JsonLinesCorpus,
        extensions: &["jsonl", "ndjson"],
        media_type: "application/jsonl",
        description: "JSON Lines corpus (one {title, text} per line)",
        loader: Some(&CorpusLoader),
    },
    Format {
        kind: MediaKind::Csv,
        extensions: &["csv"],
        media_type: "text/csv",
        description: "CSV table (or an edge list: a source,relation,target header)",
        loader: Some(&FileLoader),
    },
    Format {
        kind: MediaKind::Pdf,
        extensions: &["pdf"],
        media_type: "application/pdf",
        description: "PDF",
        loader: Some(&FileLoader),
    },
    Format {
        kind: MediaKind::Word,
        extensions: &["docx"],
        media_type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        description: "Word document (DOCX)",
        loader: Some(&FileLoader),
    },
    Format {
        kind: MediaKind::Slides,
        extensions: &["pptx"],
        media_type: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        description: "PowerPoint presentation (PPTX)",
        loader: Some(&FileLoader),
    },
    Format {
        kind: MediaKind::Spreadsheet,
        extensions: &["xlsx", "ods"],
        media_type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        description: "spreadsheet (XLSX, ODS)",
        loader: Some(&FileLoader),
    },
    Format {
        kind: MediaKind::Ebook,
        extensions: &["epub"],
        media_type: "application/epub+zip",
        description: "e-book (EPUB)",
        loader: Some(&FileLoader),
    },
    Format {
        kind: MediaKind::Email,
        extensions: &["eml"],
        media_type: "message/rfc822",
        description: "e-mail (.eml)",
        loader: Some(&FileLoader),
    },
    Format {
        kind: MediaKind::Image,
        extensions: &["png", "jpg", "jpeg", "tif", "tiff"],
        media_type: "image/png",
        description: "scanned page or image (read by OCR)",
        loader: Some(&FileLoader),
    },
];

/// The format of `path` by its extension (in any case), if it is one of [`FORMATS`].
pub fn format_of(path: &Path) -> Option<&'static Format> {
    format_of_extension(&extension(path)?)
}

/// The format a lower-case extension (without the dot) names, if any.
pub fn format_of_extension(ext: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.extensions.contains(&ext))
}

/// The media type of a file with extension `ext` (lower case, no dot): its format's, or
/// the right one for a format's other extensions (`.ods`, `.jpg`, `.tiff`).
pub fn media_type_of_extension(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "ods" => "application/vnd.oasis.opendocument.spreadsheet",
        "jpg" | "jpeg" => "image/jpeg",
        "tif" | "tiff" => "image/tiff",
        "xhtml" => "application/xhtml+xml",
        _ => format_of_extension(ext)?.media_type,
    })
}

/// The formats a folder walk reads as documents (those with a loader).
pub fn document_formats() -> impl Iterator<Item = &'static Format> {
    FORMATS.iter().filter(|f| f.loader.is_some())
}

/// The extensions of `formats`, each with its dot, separated by spaces: `.txt .text .md`.
pub fn extension_list<'a>(formats: impl IntoIterator<Item = &'a Format>) -> String {
    let dotted: Vec<String> = formats.into_iter().flat_map(|f| f.extensions).map(|e| format!(".{e}")).collect();
    dotted.join(" ")
}

/// Why a folder walk leaves out a file of type `ext` (lower case, no dot; None without an
/// extension): `unsupported file type .pdf` (the error that ends a walk with no document
/// lists the supported ones, once).
pub fn unsupported_reason(ext: Option<&str>) -> String {
    match ext {
        Some(e) => format!("unsupported file type .{e}"),
        None => "unsupported file type (no extension)".to_string(),
    }
}
