//! Loaders: files and corpus files -> [`Document`]s.
//!
//! One loader per format ([`TextLoader`], [`MarkdownLoader`], [`HtmlLoader`],
//! [`CorpusLoader`]), each a [`Loader`] chosen by file extension, and [`load_path`], which
//! walks a file or a directory and never aborts: every file it cannot use is reported in
//! [`LoadOutcome::skipped`] with the reason (binary, empty, not UTF-8, bad JSON, unsupported
//! type, unreadable, missing).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use rhizome_core::{ids, Document, Error, Loader, Result};

mod corpus;
mod html;
mod markdown;

pub use html::{decode_entities, html_to_text};
pub use markdown::markdown_to_text;

/// Bytes inspected for NUL bytes when deciding whether a file is binary.
const BINARY_SNIFF_BYTES: usize = 8192;

/// What [`load_path`] produced: the documents, and what it had to leave out and why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadOutcome {
    /// Loaded documents, in walk order, each id once.
    pub documents: Vec<Document>,
    /// Files (or corpus entries, as `FILE#N`) that were not loaded.
    pub skipped: Vec<Skipped>,
}

/// A file or corpus entry that was not loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file path as walked, or `FILE#N` for entry N of a corpus file.
    pub path: String,
    /// What is wrong with it, e.g. `binary file` or `unsupported file type .pdf`.
    pub reason: String,
}

/// Plain text files (`.txt`, `.text`): title = file stem, text = the file (trimmed).
#[derive(Debug, Clone, Copy, Default)]
pub struct TextLoader;

/// Markdown files (`.md`, `.markdown`, `.mdown`, `.mkd`): markup stripped by
/// [`markdown_to_text`]; title = front-matter `title:`, else the first heading, else the
/// file stem.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarkdownLoader;

/// HTML files (`.html`, `.htm`, `.xhtml`): text by [`html_to_text`]; title = `<title>`,
/// else the file stem.
#[derive(Debug, Clone, Copy, Default)]
pub struct HtmlLoader;

/// Corpus files, one document per entry (title and text in NFC), source `FILE#N`:
/// `.json` holding `[{"title": .., "text": ..}, ..]` (text may also be under `passage`,
/// `content`, `body` or `paragraph_text`) or `{"Title": ["sentence", ..], ..}` (sentences
/// joined as they are), and `.jsonl` / `.ndjson` with one `{title, text}` object per line.
/// Entries with empty text are left out (see [`load_path`], which reports them).
#[derive(Debug, Clone, Copy, Default)]
pub struct CorpusLoader;

/// The loaders for every supported format.
pub fn default_loaders() -> Vec<Box<dyn Loader>> {
    vec![
        Box::new(TextLoader),
        Box::new(MarkdownLoader),
        Box::new(HtmlLoader),
        Box::new(CorpusLoader),
    ]
}

/// Lowercased extension of `path`, if any.
fn extension(path: &Path) -> Option<String> {
    path.extension().map(|e| e.to_string_lossy().to_lowercase())
}

fn has_extension(path: &Path, exts: &[&str]) -> bool {
    extension(path).is_some_and(|e| exts.contains(&e.as_str()))
}

/// File stem of `path`, used as the title of single-file documents.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn bad(path: &Path, msg: impl Into<String>) -> Error {
    Error::bad_input(path.display().to_string(), msg)
}

/// Reads `path` as text: refuses binary files (a NUL byte in the first 8 KiB), invalid
/// UTF-8 (naming the byte and its offset) and empty or whitespace-only files. Strips a
/// UTF-8 BOM and turns CRLF / CR line ends into LF.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = fs::read(path).map_err(|e| Error::io(path, e))?;
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(bad(path, "binary file"));
    }
    let mut text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let off = e.utf8_error().valid_up_to();
            let byte = e.as_bytes()[off];
            return Err(bad(path, format!("not valid UTF-8 (byte 0x{byte:02x} at offset {off})")));
        }
    };
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    if text.contains('\r') {
        text = text.replace("\r\n", "\n").replace('\r', "\n");
    }
    if text.trim().is_empty() {
        return Err(bad(path, "empty"));
    }
    Ok(text)
}

/// `s` in Unicode NFC ([`rhizome_core::text::nfc`]), reusing it when it already is: the
/// same word typed with combining marks or precomposed becomes the same text, so the
/// same entity and the same BM25 term.
pub(crate) fn to_nfc(s: String) -> String {
    match rhizome_core::text::nfc(&s) {
        std::borrow::Cow::Borrowed(_) => s,
        std::borrow::Cow::Owned(n) => n,
    }
}

/// One document for a single file (title and text in NFC).
fn single_doc(path: &Path, title: String, text: String) -> Result<Vec<Document>> {
    let text = to_nfc(text.trim().to_string());
    if text.is_empty() {
        return Err(bad(path, "empty (no text after removing markup)"));
    }
    let title = to_nfc(if title.trim().is_empty() { stem(path) } else { title.trim().to_string() });
    Ok(vec![Document {
        id: ids::document_id(&title, &text),
        source: path.display().to_string(),
        title,
        text,
    }])
}

impl Loader for TextLoader {
    fn accepts(&self, path: &Path) -> bool {
        has_extension(path, &["txt", "text"])
    }
    fn load(&self, path: &Path) -> Result<Vec<Document>> {
        let text = read_text(path)?;
        single_doc(path, stem(path), text)
    }
}

impl Loader for MarkdownLoader {
    fn accepts(&self, path: &Path) -> bool {
        has_extension(path, &["md", "markdown", "mdown", "mkd"])
    }
    fn load(&self, path: &Path) -> Result<Vec<Document>> {
        let (title, text) = markdown_to_text(&read_text(path)?);
        single_doc(path, title.unwrap_or_else(|| stem(path)), text)
    }
}

impl Loader for HtmlLoader {
    fn accepts(&self, path: &Path) -> bool {
        has_extension(path, &["html", "htm", "xhtml"])
    }
    fn load(&self, path: &Path) -> Result<Vec<Document>> {
        let (title, text) = html_to_text(&read_text(path)?);
        single_doc(path, title.unwrap_or_else(|| stem(path)), text)
    }
}

impl CorpusLoader {
    /// Loads a corpus file, returning its documents and the indices of entries left out
    /// because their text was empty.
    pub fn load_counted(&self, path: &Path) -> Result<(Vec<Document>, Vec<usize>)> {
        let text = read_text(path)?;
        let jsonl = has_extension(path, &["jsonl", "ndjson"]);
        let parsed = corpus::parse(path, &text, jsonl)?;
        if parsed.documents.is_empty() {
            return Err(bad(path, format!("no entries with text ({} empty)", parsed.empty.len())));
        }
        Ok((parsed.documents, parsed.empty))
    }
}

impl Loader for CorpusLoader {
    fn accepts(&self, path: &Path) -> bool {
        has_extension(path, &["json", "jsonl", "ndjson"])
    }
    fn load(&self, path: &Path) -> Result<Vec<Document>> {
        self.load_counted(path).map(|(docs, _)| docs)
    }
}

/// Loads `path` (a file, or a directory walked recursively in sorted order, hidden
/// entries skipped) with the first of `loaders` that accepts each file. Never fails:
/// what cannot be loaded is listed in [`LoadOutcome::skipped`] with the reason. A
/// document whose id was already loaded is kept once (the repeat is reported as skipped).
pub fn load_path(path: &Path, loaders: &[Box<dyn Loader>]) -> LoadOutcome {
    let mut walk = Walk { loaders, out: LoadOutcome::default(), seen: HashMap::new(), dirs: HashSet::new() };
    // Sources are canonical (absolute, `.`/`..` and links resolved), so that one file has
    // one source however its path was typed: `delete` and replacement find it by any
    // spelling.
    let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    walk.visit(&canonical);
    walk.out
}

struct Walk<'a> {
    loaders: &'a [Box<dyn Loader>],
    out: LoadOutcome,
    /// Document id -> source of its first occurrence.
    seen: HashMap<String, String>,
    /// Canonical directories already walked (guards against symlink loops).
    dirs: HashSet<PathBuf>,
}

impl Walk<'_> {
    fn skip(&mut self, path: impl Into<String>, reason: impl Into<String>) {
        self.out.skipped.push(Skipped { path: path.into(), reason: reason.into() });
    }

    fn visit(&mut self, path: &Path) {
        let meta = match fs::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                let reason = match fs::read_link(path) {
                    Ok(target) => format!("broken symbolic link to {} ({})", target.display(), io_reason(&e)),
                    Err(_) => io_reason(&e),
                };
                return self.skip(path.display().to_string(), reason);
            }
        };
        if meta.is_dir() {
            self.visit_dir(path);
        } else if meta.is_file() {
            self.visit_file(path);
        } else {
            // A FIFO, socket or device is never opened (a FIFO without a writer would hang).
            self.skip(path.display().to_string(), "not a regular file (a pipe, socket or device)");
        }
    }

    fn visit_dir(&mut self, dir: &Path) {
        let canonical = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if !self.dirs.insert(canonical) {
            return self.skip(dir.display().to_string(), "directory already visited (symlink loop)");
        }
        let entries = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) => return self.skip(dir.display().to_string(), io_reason(&e)),
        };
        let mut names: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
        names.sort();
        for name in names {
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            self.visit(&dir.join(&name));
        }
    }

    fn visit_file(&mut self, path: &Path) {
        let display = path.display().to_string();
        let Some(loader) = self.loaders.iter().find(|l| l.accepts(path)) else {
            let reason = match extension(path) {
                Some(ext) => format!("unsupported file type .{ext}"),
                None => "unsupported file type (no extension)".to_string(),
            };
            return self.skip(display, reason);
        };
        let docs = match loader.load(path) {
            Ok(docs) => docs,
            Err(e) => return self.skip(display, error_reason(&e)),
        };
        if docs.is_empty() {
            return self.skip(display, "no documents");
        }
        // Corpus entries carry `FILE#N` sources: report the entries left out for empty text.
        let prefix = format!("{display}#");
        if docs.iter().any(|d| d.source.starts_with(&prefix)) && has_extension(path, &["json", "jsonl", "ndjson"]) {
            if let Ok((_, empty)) = CorpusLoader.load_counted(path) {
                for n in empty {
                    self.skip(format!("{prefix}{n}"), "empty text");
                }
            }
        }
        for doc in docs {
            if let Some(first) = self.seen.get(&doc.id) {
                let reason = format!("duplicate of {first}");
                self.skip(doc.source.clone(), reason);
                continue;
            }
            self.seen.insert(doc.id.clone(), doc.source.clone());
            self.out.documents.push(doc);
        }
    }
}

/// A short reason for an I/O error.
fn io_reason(e: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    match e.kind() {
        NotFound => "no such file or directory".into(),
        PermissionDenied => "permission denied".into(),
        _ => format!("cannot be read: {e}"),
    }
}

/// The reason recorded for a loader error (without the path, which `Skipped` carries).
fn error_reason(e: &Error) -> String {
    match e {
        Error::BadInput { msg, .. } => msg.clone(),
        Error::Io { source, .. } => io_reason(source),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_matching_is_case_insensitive() {
        assert!(TextLoader.accepts(Path::new("a/B.TXT")));
        assert!(MarkdownLoader.accepts(Path::new("x.Markdown")));
        assert!(!TextLoader.accepts(Path::new("x.pdf")));
        assert!(CorpusLoader.accepts(Path::new("c.jsonl")));
        assert_eq!(stem(Path::new("dir/notes.v2.txt")), "notes.v2");
    }

    #[test]
    fn documents_are_loaded_in_nfc() {
        let dir = std::env::temp_dir().join(format!("rhizome-load-nfc-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        // "Đà Nẵng" and "Huế" typed with combining marks (NFD), and the same precomposed.
        let decomposed = "Đa\u{300} Na\u{306}\u{303}ng ở gần Hue\u{302}\u{301}.";
        let composed = "Đà Nẵng ở gần Huế.";
        assert_ne!(decomposed, composed);
        fs::write(dir.join("nfd.txt"), decomposed.as_bytes()).unwrap();
        fs::write(dir.join("nfc.txt"), composed.as_bytes()).unwrap();
        let corpus = serde_json::json!([{"title": "Hue\u{302}\u{301}", "text": decomposed}]);
        fs::write(dir.join("c.json"), corpus.to_string()).unwrap();
        let a = &TextLoader.load(&dir.join("nfd.txt")).unwrap()[0];
        let b = &TextLoader.load(&dir.join("nfc.txt")).unwrap()[0];
        assert_eq!(a.text, composed);
        assert_eq!(a.id, ids::document_id("nfd", composed));
        assert_eq!(a.text, b.text);
        let c = &CorpusLoader.load(&dir.join("c.json")).unwrap()[0];
        assert_eq!((c.title.as_str(), c.text.as_str()), ("Huế", composed));
        fs::remove_dir_all(&dir).unwrap();
    }
}
