//! Loaders: files and corpus files -> [`Document`]s.
//!
//! [`FORMATS`] is the registry of file types: each row names its extensions, what the file
//! holds ([`MediaKind`]) and its loader ([`TextLoader`], [`MarkdownLoader`], [`HtmlLoader`],
//! [`CorpusLoader`]). It is the one list of what can be indexed and uploaded: the loaders
//! accept by it, uploads are checked against it, error messages quote it and the server
//! hands it to the web UI. [`load_path`] walks a file or a directory and never aborts:
//! every file it cannot use is reported in [`LoadOutcome::skipped`] with the reason
//! (binary, empty, not UTF-8, bad JSON, unsupported type, unreadable, missing).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use rhizome_core::{ids, Document, Error, Loader, Result};

mod corpus;
mod files;
mod formats;
mod markdown;

pub use files::{unit_name, FileLoader, MAX_FILE_BYTES};
pub use formats::{
    document_formats, extension_list, format_of, format_of_extension, media_type_of_extension, unsupported_reason,
    Format, MediaKind, FORMATS,
};

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

/// True when `path`'s format is of `kind`.
fn is_kind(path: &Path, kind: impl Fn(MediaKind) -> bool) -> bool {
    format_of(path).is_some_and(|f| kind(f.kind))
}

/// Plain text files ([`MediaKind::Text`] in [`FORMATS`]): title = file stem, text = the file (trimmed).
#[derive(Debug, Clone, Copy, Default)]
pub struct TextLoader;

/// Markdown files ([`MediaKind::Markdown`]): markup stripped by
/// [`markdown_to_text`]; title = front-matter `title:`, else the first heading, else the
/// file stem.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarkdownLoader;

/// HTML files ([`MediaKind::Html`]): text by [`rhizome_formats::html_to_text`]; title = `<title>`,
/// else the file stem.
#[derive(Debug, Clone, Copy, Default)]
pub struct HtmlLoader;

/// Corpus files, one document per entry (title and text in NFC), source `FILE#N`:
/// a JSON corpus ([`MediaKind::JsonCorpus`]) holding `[{"title": .., "text": ..}, ..]` (text may also be under `passage`,
/// `content`, `body` or `paragraph_text`) or `{"Title": ["sentence", ..], ..}` (sentences
/// joined as they are), and a JSON Lines corpus ([`MediaKind::JsonLinesCorpus`]) with one
/// `{title, text}` object per line.
/// Entries with empty text are left out (see [`load_path`], which reports them).
#[derive(Debug, Clone, Copy, Default)]
pub struct CorpusLoader;

/// The loaders of every format in [`FORMATS`]: one loader that hands each file to its
/// format's loader.
pub fn default_loaders() -> Vec<Box<dyn Loader>> {
    vec![Box::new(Registered)]
}

/// Loads each file with the loader [`FORMATS`] gives its extension.
struct Registered;

impl Loader for Registered {
    fn accepts(&self, path: &Path) -> bool {
        format_of(path).is_some_and(|f| f.loader.is_some())
    }
    fn load(&self, path: &Path) -> Result<Vec<Document>> {
        let Some((format, loader)) = format_of(path).and_then(|f| Some((f, f.loader?))) else {
            return Err(bad(path, unsupported_reason(extension(path).as_deref())));
        };
        let mut docs = loader.load(path)?;
        if !format.kind.is_corpus() {
            // The file's own document (not its attachments) is described by the file.
            let own = path.display().to_string();
            let file = fs::metadata(path).ok();
            for d in docs.iter_mut().filter(|d| d.source == own) {
                let m = &mut d.meta;
                if m.media_type.is_none() {
                    m.media_type = extension(path).and_then(|e| media_type_of_extension(&e)).map(str::to_string);
                }
                m.size_bytes = m.size_bytes.or(file.as_ref().map(fs::Metadata::len));
                if m.modified.is_none() {
                    m.modified = file.as_ref().and_then(modified_time);
                }
            }
        }
        Ok(docs)
    }
}

/// A file's modification time, RFC 3339 in UTC.
pub fn modified_time(m: &fs::Metadata) -> Option<String> {
    let t = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(rhizome_core::utc_time(t.as_secs() as i64))
}

/// Lowercased extension of `path`, if any.
fn extension(path: &Path) -> Option<String> {
    path.extension().map(|e| e.to_string_lossy().to_lowercase())
}

/// File stem of `path`, used as the title of single-file documents.
fn stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
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
        pages: None,
        meta: Default::default(),
    }])
}

impl Loader for TextLoader {
    fn accepts(&self, path: &Path) -> bool {
        is_kind(path, |k| k == MediaKind::Text)
    }
    fn load(&self, path: &Path) -> Result<Vec<Document>> {
        let text = read_text(path)?;
        single_doc(path, stem(path), text)
    }
}

impl Loader for MarkdownLoader {
    fn accepts(&self, path: &Path) -> bool {
        is_kind(path, |k| k == MediaKind::Markdown)
    }
    fn load(&self, path: &Path) -> Result<Vec<Document>> {
        let (title, text) = markdown_to_text(&read_text(path)?);
        single_doc(path, title.unwrap_or_else(|| stem(path)), text)
    }
}

impl Loader for HtmlLoader {
    fn accepts(&self, path: &Path) -> bool {
        is_kind(path, |k| k == MediaKind::Html)
    }
    fn load(&self, path: &Path) -> Result<Vec<Document>> {
        let page = rhizome_formats::html_to_text(&read_text(path)?);
        single_doc(path, page.title.unwrap_or_else(|| stem(path)), page.text)
    }
}

impl CorpusLoader {
    /// Loads a corpus file, returning its documents and the indices of entries left out
    /// because their text was empty.
    pub fn load_counted(&self, path: &Path) -> Result<(Vec<Document>, Vec<usize>)> {
        let text = read_text(path)?;
        let jsonl = is_kind(path, |k| k == MediaKind::JsonLinesCorpus);
        let parsed = corpus::parse(path, &text, jsonl)?;
        if parsed.documents.is_empty() {
            return Err(bad(path, format!("no entries with text ({} empty)", parsed.empty.len())));
        }
        Ok((parsed.documents, parsed.empty))
    }
}

impl Loader for CorpusLoader {
    fn accepts(&self, path: &Path) -> bool {
        is_kind(path, MediaKind::is_corpus)
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
    load_path_observed(path, loaders, &|_| {})
}

/// [`load_path`], telling `at` where a long read is (a scan read by OCR, page by page).
pub fn load_path_observed(path: &Path, loaders: &[Box<dyn Loader>], at: &dyn Fn(&str)) -> LoadOutcome {
    let mut walk = Walk { loaders, at, out: LoadOutcome::default(), seen: HashMap::new(), dirs: HashSet::new() };
    // Sources are canonical (absolute, `.`/`..` and links resolved), so that one file has
    // one source however its path was typed: `delete` and replacement find it by any
    // spelling.
    let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    walk.visit(&canonical);
    walk.out
}

struct Walk<'a> {
    loaders: &'a [Box<dyn Loader>],
    at: &'a dyn Fn(&str),
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
            return self.skip(display, unsupported_reason(extension(path).as_deref()));
        };
        let loaded = if is_kind(path, MediaKind::is_read_by_formats) {
            FileLoader.load_outcome_observed(path, self.at).map(|(docs, skipped)| {
                self.out.skipped.extend(skipped);
                docs
            })
        } else {
            loader.load(path)
        };
        let docs = match loaded {
            Ok(docs) => docs,
            Err(e) => return self.skip(display, error_reason(&e)),
        };
        if docs.is_empty() {
            return self.skip(display, "no documents");
        }
        // Corpus entries carry `FILE#N` sources: report the entries left out for empty text.
        let prefix = format!("{display}#");
        if docs.iter().any(|d| d.source.starts_with(&prefix)) && is_kind(path, MediaKind::is_corpus) {
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

    /// The registry is one list: each extension names one format, lower case without a
    /// dot, and every format with a loader is read by it (in any case of its extension)
    /// and by the folder walk, while a CSV edge list is left to `import edges` and a CSV
    /// table is read as a document.
    #[test]
    fn the_registry_names_each_extension_once_and_its_loader_reads_it() {
        let mut seen = HashSet::new();
        for f in FORMATS {
            assert!(!f.extensions.is_empty(), "{f:?}");
            for e in f.extensions {
                assert!(seen.insert(*e), ".{e} is listed twice");
                assert_eq!(*e, e.to_lowercase().trim_start_matches('.'), "{f:?}");
                for name in [format!("a.{e}"), format!("dir/B.{}", e.to_uppercase())] {
                    let p = Path::new(&name);
                    assert_eq!(format_of(p).map(|g| g.kind), Some(f.kind), "{name}");
                    assert_eq!(default_loaders()[0].accepts(p), f.loader.is_some(), "{name}");
                    if let Some(l) = f.loader {
                        assert!(l.accepts(p), "{name}");
                    }
                }
            }
        }
        assert_eq!(
            extension_list(document_formats()),
            ".txt .text .md .markdown .mdown .mkd .html .htm .xhtml .json .jsonl .ndjson .csv .pdf .docx .pptx .xlsx \
             .ods .epub .eml .png .jpg .jpeg .tif .tiff"
        );
        assert_eq!(unsupported_reason(Some("exe")), "unsupported file type .exe");

        // Every loadable text extension indexes from a folder walk (the binary formats are
        // read from generated files by rhizome-formats' tests and tests/formats.rs).
        let dir = tempfile::tempdir().unwrap();
        let body = |kind: MediaKind, e: &str| match kind {
            MediaKind::JsonCorpus | MediaKind::JsonLinesCorpus => {
                format!("{}\n", serde_json::json!({"title": e, "text": "Aage Bohr won."}))
            }
            _ => "Aage Bohr won the Nobel Prize.".to_string(),
        };
        // A CSV table is a document; a CSV with an edge list's header is skipped, saying
        // how to import it.
        fs::write(dir.path().join("people.csv"), "name,prize,year\nAage Bohr,Nobel Prize,1975\n").unwrap();
        fs::write(dir.path().join("doc-csv.csv"), "source,relation,target\nAage Bohr,won,Nobel Prize\n").unwrap();
        for f in FORMATS.iter().filter(|f| !f.kind.is_read_by_formats()) {
            for e in f.extensions {
                let text = body(f.kind, e);
                let text = if f.kind == MediaKind::JsonCorpus { format!("[{text}]") } else { text };
                fs::write(dir.path().join(format!("doc-{e}.{e}")), text).unwrap();
            }
        }
        let out = load_path(dir.path(), &default_loaders());
        let read: HashSet<String> =
            out.documents.iter().map(|d| extension(Path::new(d.source.split('#').next().unwrap())).unwrap()).collect();
        let loadable: HashSet<String> = document_formats()
            .filter(|f| !f.kind.is_read_by_formats() || f.kind == MediaKind::Csv)
            .flat_map(|f| f.extensions)
            .map(|e| e.to_string())
            .collect();
        assert_eq!(read, loadable, "skipped: {:?}", out.skipped);
        assert_eq!(out.skipped.len(), 1, "{:?}", out.skipped);
        assert!(out.skipped[0].path.ends_with("doc-csv.csv"), "{:?}", out.skipped);
        assert!(out.skipped[0].reason.contains("rhizome import edges"), "{:?}", out.skipped);
        let people = out.documents.iter().find(|d| d.source.ends_with("people.csv")).unwrap();
        assert!(people.text.contains("name: Aage Bohr") && people.text.contains("year: 1975"), "{}", people.text);
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
