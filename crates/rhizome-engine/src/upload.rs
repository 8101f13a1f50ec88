//! Documents that arrive over the network rather than from the caller's file system:
//! uploaded files, saved by the caller under names of its own choosing, and texts given
//! as (title, text). Either way the document is what `rhizome index` would make of the
//! same file or text — same title, same text, so the same id — and only its source says
//! where it came from (`upload:NAME`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rhizome_core::{ids, text::nfc, Document, Error, Result};
use rhizome_ingest::load::{
    default_loaders, extension_list, format_of_extension, load_path_observed, MediaKind, FORMATS,
};

use crate::{IndexInput, Skip};

/// True when an uploaded file is an edge list (a `.csv` whose header names an edge
/// list's columns, `source,relation,target`), imported rather than loaded.
pub fn is_edge_list(u: &Upload) -> bool {
    let csv =
        upload_extension(&u.name).is_ok_and(|e| format_of_extension(&e).is_some_and(|f| f.kind == MediaKind::Csv));
    // The header is in the first bytes; the file may be large.
    let head = || -> std::io::Result<Vec<u8>> {
        use rhizome_ingest::import::EDGE_HEADER_BYTES;
        let mut head = Vec::with_capacity(EDGE_HEADER_BYTES);
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::fs::File::open(&u.path)?, EDGE_HEADER_BYTES as u64),
            &mut head,
        )?;
        Ok(head)
    };
    csv && head().is_ok_and(|b| rhizome_ingest::import::is_edge_list_header(&b))
}

/// An uploaded edge list, imported as `rhizome import edges` would import the file under
/// its uploaded name: title the name's stem, source `upload:NAME`.
pub(crate) fn edges_upload(u: &Upload) -> Result<rhizome_ingest::import::Imported> {
    let base = upload_base_name(&u.name);
    let label = format!("upload:{base}");
    let bytes = std::fs::read(&u.path).map_err(|e| {
        Error::bad_input(&label, format!("the uploaded file could not be read back ({e}); upload it again"))
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|e| Error::bad_input(&label, format!("not valid UTF-8 ({e}); save the edge list as UTF-8")))?;
    rhizome_ingest::import::edges_csv_text(nfc(&text).into_owned(), &label, &nfc(&stem(Path::new(base))))
}

impl crate::Engine {
    /// The file types an upload may have and indexing reads: the loader registry
    /// ([`FORMATS`]), what `GET /formats` lists for the web UI.
    pub fn formats(&self) -> &'static [rhizome_ingest::load::Format] {
        FORMATS
    }
}

/// A file as uploaded: the name the client gave it (a label only, never a path) and
/// where the caller saved it.
#[derive(Debug, Clone)]
pub struct Upload {
    pub name: String,
    pub path: PathBuf,
}

/// The last component of an uploaded file name, whatever separators the client used
/// (`../../etc/x.txt` -> `x.txt`).
pub fn upload_base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name).trim()
}

/// The lower-case extension of an uploaded name when it is one of the registry's file
/// types ([`FORMATS`]: the loaders' types and `.csv` edge lists, imported as `import
/// edges` does); otherwise an error naming the file and the types accepted.
pub fn upload_extension(name: &str) -> Result<String> {
    let base = upload_base_name(name);
    let ext = Path::new(base).extension().map(|e| e.to_string_lossy().to_lowercase());
    match ext {
        Some(e) if format_of_extension(&e).is_some() => Ok(e),
        _ => Err(Error::bad_input(
            rhizome_core::text::clip(name, 200),
            format!(
                "unsupported file type{}; upload {}",
                ext.map(|e| format!(" .{}", rhizome_core::text::clip(&e, 16))).unwrap_or_default(),
                extension_list(FORMATS)
            ),
        )),
    }
}

fn stem(p: &Path) -> String {
    p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Load uploaded files with the loaders `rhizome index` uses, then give each document the
/// title the file would have had under its uploaded name and the source `upload:NAME`
/// (`upload:NAME#N` for the entries of a corpus file). Files that cannot be read are
/// skipped, named by their uploaded name; a document uploaded twice under one name is kept
/// once (under two names, indexing keeps the second name as an alias). `at` is told where
/// a long read is (OCR of a scan, by page), under the uploaded name.
pub fn load_uploads(uploads: &[Upload], at: &dyn Fn(&str)) -> (Vec<Document>, Vec<Skip>) {
    let loaders = default_loaders();
    let mut docs = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = HashSet::new();
    for u in uploads {
        let base = upload_base_name(&u.name);
        let saved = u.path.display().to_string();
        let label = format!("upload:{base}");
        let relabel = |s: &str| match s.strip_prefix(&saved) {
            Some(rest) => format!("{label}{rest}"),
            None => label.clone(),
        };
        let saved_name = u.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let out = load_path_observed(&u.path, &loaders, &|place| at(&place.replacen(&saved_name, base, 1)));
        for s in out.skipped {
            skipped.push(Skip { path: relabel(&s.path), reason: s.reason.replace(&saved, &label) });
        }
        let saved_stem = stem(&u.path);
        // The saved file's time is when it was uploaded, not when the document was written.
        let saved_time = std::fs::metadata(&u.path).ok().and_then(|m| rhizome_ingest::load::modified_time(&m));
        for mut d in out.documents {
            if d.meta.modified.is_some() && d.meta.modified == saved_time {
                d.meta.modified = None;
            }
            if d.title == saved_stem {
                d.title = nfc(&stem(Path::new(base))).into_owned();
                d.id = ids::document_id(&d.title, &d.text);
            }
            d.source = relabel(&d.source);
            if seen.insert((d.id.clone(), d.source.clone())) {
                docs.push(d);
            }
        }
    }
    (docs, skipped)
}

/// Uploaded files as the index runs that take them: their documents first (one run), then
/// each edge list (an import of its own); and the files that could not be read, named by
/// their uploaded names. No run at all: nothing could be read. `at` is told where a long
/// read is.
pub fn upload_runs(uploads: Vec<Upload>, at: &dyn Fn(&str)) -> (Vec<IndexInput>, Vec<Skip>) {
    let (edges, files): (Vec<Upload>, Vec<Upload>) = uploads.into_iter().partition(is_edge_list);
    let (docs, skipped) = load_uploads(&files, at);
    let mut runs = Vec::new();
    if !docs.is_empty() {
        runs.push(IndexInput::Documents(docs));
    }
    runs.extend(edges.into_iter().map(IndexInput::EdgesUpload));
    (runs, skipped)
}

/// A document from a title and a text given directly (NFC, trimmed), with `source`
/// saying where it came from; an empty text is refused, naming `field`.
pub fn text_document(title: &str, text: &str, source: &str, field: &str) -> Result<Document> {
    let text = nfc(text.trim()).into_owned();
    if text.is_empty() {
        return Err(Error::bad_input(field, "the text is empty"));
    }
    let title = nfc(title.trim()).into_owned();
    Ok(Document {
        id: ids::document_id(&title, &text),
        source: source.to_string(),
        title,
        text,
        pages: None,
        meta: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploaded_files_keep_their_names_as_labels_only() {
        let dir = tempfile::tempdir().unwrap();
        let saved = dir.path().join("upload-0.txt");
        std::fs::write(&saved, "Aage Bohr shared the Nobel Prize.\n").unwrap();
        let bad = dir.path().join("upload-1.txt");
        std::fs::write(&bad, "").unwrap();
        let (docs, skipped) = load_uploads(
            &[
                Upload { name: "../../etc/bohr.txt".into(), path: saved },
                Upload { name: "empty.txt".into(), path: bad },
            ],
            &|_| {},
        );
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].title, "bohr");
        assert_eq!(docs[0].source, "upload:bohr.txt");
        assert_eq!(docs[0].id, ids::document_id("bohr", "Aage Bohr shared the Nobel Prize."));
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].path, "upload:empty.txt");
        assert!(!skipped[0].reason.contains(&dir.path().display().to_string()), "{}", skipped[0].reason);
    }

    #[test]
    fn extensions() {
        assert_eq!(upload_extension("a/B.MD").unwrap(), "md");
        let e = upload_extension("x.exe").unwrap_err().to_string();
        assert!(e.contains("x.exe") && e.contains("unsupported file type .exe; upload .txt "), "{e}");
        // Every registry extension can be uploaded, and only a `.csv` with an edge list's
        // header is an edge list; another CSV is a table.
        let dir = tempfile::tempdir().unwrap();
        let (edges, table) = (dir.path().join("e"), dir.path().join("t"));
        std::fs::write(&edges, "\u{feff}Source,Relation,Target\nAda,met,Babbage\n").unwrap();
        std::fs::write(&table, "name,born,field\nAda,1815,mathematics\n").unwrap();
        for f in FORMATS {
            for ext in f.extensions {
                let name = format!("dir/a.{}", ext.to_uppercase());
                assert_eq!(upload_extension(&name).unwrap(), *ext);
                let u = Upload { name: name.clone(), path: edges.clone() };
                assert_eq!(is_edge_list(&u), f.kind == MediaKind::Csv, "{ext}");
                assert!(!is_edge_list(&Upload { name, path: table.clone() }), "{ext}");
            }
        }
        assert!(upload_extension("noext").is_err());
        assert_eq!(upload_base_name("..\\..\\x.txt"), "x.txt");
    }
}
