//! The PDF reader against documents written by fpdf2 and reportlab
//! (`fixtures/make_pdf.py`): each page's text, reading order, tables, running headers and
//! footers, hyphenation, metadata; and hostile files (truncated, random, encrypted,
//! cyclic or deeply nested objects). The libraries come from a venv of pinned versions
//! (rhizome-testdb).

use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use rhizome_formats::{pages_without_text, read_pdf, Extracted, Limits, PageUnit, ReadError};

/// Writes the PDF fixtures into a new temporary directory (always `Some`: the libraries
/// come from the test venv).
fn fixtures() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/make_pdf.py");
    // The pinned document-generation libraries, in a venv the test support makes once.
    let python = rhizome_testdb::python::named("fixtures");
    let out = Command::new(python).arg(&script).arg(dir.path()).output().expect("run the fixture script");
    assert!(out.status.success(), "make_pdf.py failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(dir)
}

/// What a fixture should give.
struct Want {
    pages: Vec<String>,
    title: Option<String>,
    author: Option<String>,
}

fn read_fixture(dir: &Path, name: &str) -> (Extracted, Want) {
    let bytes = std::fs::read(dir.join(name)).expect("fixture");
    let got = read_pdf(&bytes, &Limits::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let json = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("reference");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let s = |k: &str| v[k].as_str().map(str::to_string);
    let pages = v["pages"].as_array().expect("pages").iter().map(|p| p.as_str().unwrap_or("").to_string()).collect();
    (got, Want { pages, title: s("title"), author: s("author") })
}

/// Character error rate: Levenshtein distance over chars / reference length, after
/// collapsing whitespace on both sides.
fn cer(got: &str, reference: &str) -> f64 {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").chars().collect::<Vec<_>>();
    let (a, b) = (norm(got), norm(reference));
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()] as f64 / b.len().max(1) as f64
}

fn page_text(e: &Extracted, i: usize) -> &str {
    &e.text[e.pages[i].start..e.pages[i].end]
}

/// Checks every page against the reference (CER < 1%) and the page numbers.
fn check_pages(name: &str, e: &Extracted, want: &Want) {
    assert_eq!(e.unit, PageUnit::Page);
    assert_eq!(e.pages.len(), want.pages.len(), "{name}: pages");
    for (i, reference) in want.pages.iter().enumerate() {
        assert_eq!(e.pages[i].number as usize, i + 1);
        let got = page_text(e, i);
        let rate = cer(got, reference);
        eprintln!("CER {name} p.{}: {:.4}% ({} reference chars)", i + 1, rate * 100.0, reference.chars().count());
        assert!(rate < 0.01, "{name} p.{}: CER {rate}\n--- got ---\n{got}\n--- want ---\n{reference}", i + 1);
    }
}

#[test]
fn pdf_fixtures() {
    let Some(dir) = fixtures() else { return };
    let dir = dir.path();

    let (e, want) = read_fixture(dir, "en.pdf");
    check_pages("en", &e, &want);
    assert_eq!(e.title, want.title);
    assert_eq!(e.author, want.author, "UTF-16 author");
    assert!(!e.text.contains("Annual Report 2024"), "running header dropped: {}", e.text);
    assert!(!e.text.contains("Page "), "page-number footers dropped: {}", e.text);
    assert!(e.text.contains("useful information from reports"), "hyphen joined: {}", e.text);
    assert!(e.text.contains("efficient reader"), "ligature expanded: {}", e.text);
    assert!(page_text(&e, 0).contains("formats.\n\nAn efficient"), "paragraphs: {}", page_text(&e, 0));
    assert!(page_text(&e, 1).starts_with("The second page"));
    assert!(pages_without_text(&e).is_empty());

    let (e, want) = read_fixture(dir, "twocol.pdf");
    check_pages("twocol", &e, &want);
    let (l, r) = (e.text.find("The left column opens"), e.text.find("The right column continues"));
    assert!(l.is_some() && r.is_some() && l < r, "left column first: {}", e.text);
    assert!(e.text.contains("description that a question can reach.\n\nThe right column"), "{}", e.text);

    let (e, want) = read_fixture(dir, "chapters.pdf");
    check_pages("chapters", &e, &want);
    for title in ["Chapter One: The Harbour", "Chapter Two: The Ferries", "Chapter Three: The Markets"] {
        assert!(!e.text.contains(title), "a running header that changes by chapter is dropped: {}", e.text);
    }

    let (e, want) = read_fixture(dir, "table.pdf");
    check_pages("table", &e, &want);
    for row in ["City | Country | Founded", "Hanoi | Vietnam | 1010", "Beijing | China | 1045", "Paris | France | 508"]
    {
        assert!(e.text.lines().any(|l| l == row), "table row {row:?} in:\n{}", e.text);
    }

    for name in ["vi.pdf", "zh.pdf", "owner_only.pdf"] {
        let (e, want) = read_fixture(dir, name);
        check_pages(name, &e, &want);
    }

    let locked = std::fs::read(dir.join("locked.pdf")).expect("fixture");
    assert_eq!(read_pdf(&locked, &Limits::default()), Err(ReadError::Encrypted("password-protected PDF".into())));

    // Truncated: damaged or partial text, never a panic.
    let en = std::fs::read(dir.join("en.pdf")).expect("fixture");
    match read_pdf(&en[..en.len() / 2], &Limits::default()) {
        Err(ReadError::Damaged(_)) => {}
        Ok(e) => eprintln!("truncated en.pdf gave {} chars", e.text.len()),
        Err(e) => panic!("truncated: {e}"),
    }

    // Bounds.
    let few = Limits { max_pages: 2, ..Limits::default() };
    assert!(matches!(read_pdf(&en, &few), Err(ReadError::TooLarge(_))));
    let short = Limits { max_text: 50, ..Limits::default() };
    assert!(matches!(read_pdf(&en, &short), Err(ReadError::TooLarge(_))));
    let small = Limits { max_decompressed: 1000, ..Limits::default() };
    assert!(matches!(read_pdf(&en, &small), Err(ReadError::TooLarge(_))));
}

#[test]
fn random_bytes_are_damaged() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    assert!(matches!(read_pdf(&bytes, &Limits::default()), Err(ReadError::Damaged(_))));
    let mut fake = b"%PDF-1.7\n".to_vec();
    fake.extend_from_slice(&bytes);
    assert!(matches!(read_pdf(&fake, &Limits::default()), Err(ReadError::Damaged(_))));
}

/// A PDF of `objects` (object i+1 is `objects[i]`, catalog first) with a correct xref.
fn build_pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    let trailer = format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1);
    out.extend_from_slice(trailer.as_bytes());
    out
}

fn stream(dict: &str, content: &[u8]) -> Vec<u8> {
    let mut s = format!("<< {dict} /Length {} >>\nstream\n", content.len()).into_bytes();
    s.extend_from_slice(content);
    s.extend_from_slice(b"\nendstream");
    s
}

const FONT: &str = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
const TEXT: &[u8] = b"BT /F1 12 Tf 72 720 Td (Hello) Tj ET";

/// Reads `bytes` on a thread, failing the test if that takes more than 5 s.
fn read_within_5s(what: &str, bytes: Vec<u8>) -> Result<Extracted, ReadError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read_pdf(&bytes, &Limits::default()));
    });
    let got = rx.recv_timeout(Duration::from_secs(5)).unwrap_or_else(|_| panic!("{what}: not done within 5 s"));
    eprintln!("{what}: {:?}", got.as_ref().map(|e| (&e.text, &e.notes)));
    got
}

#[test]
fn cyclic_and_deeply_nested_pdfs_end_quickly() {
    let s = |x: &str| x.as_bytes().to_vec();
    // Sanity: the builder makes a readable PDF.
    let ok = build_pdf(&[
        s("<< /Type /Catalog /Pages 2 0 R >>"),
        s("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        s("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"),
        stream("", TEXT),
        s(FONT),
    ]);
    assert_eq!(read_within_5s("plain", ok).expect("plain").text, "Hello");

    // /Kids pointing back at the page tree node itself.
    let kids_loop =
        build_pdf(&[s("<< /Type /Catalog /Pages 2 0 R >>"), s("<< /Type /Pages /Kids [2 0 R] /Count 1 >>")]);
    let _ = read_within_5s("kids loop", kids_loop);

    // A page without a MediaBox whose /Parent chain loops: inherited keys are looked up forever.
    let parent_loop = build_pdf(&[
        s("<< /Type /Catalog /Pages 2 0 R >>"),
        s("<< /Type /Pages /Kids [3 0 R] /Count 1 /Parent 2 0 R >>"),
        s("<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>"),
        stream("", TEXT),
    ]);
    let _ = read_within_5s("parent loop", parent_loop);

    // A form XObject that draws itself.
    let form_loop = build_pdf(&[
        s("<< /Type /Catalog /Pages 2 0 R >>"),
        s("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        s("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /XObject << /X0 5 0 R >> >> >>"),
        stream("", b"/X0 Do"),
        stream("/Type /XObject /Subtype /Form /BBox [0 0 612 792]", b"/X0 Do"),
    ]);
    let _ = read_within_5s("form loop", form_loop);

    // Arrays nested 100,000 deep, in an object and in a content stream.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_object = build_pdf(&[
        s("<< /Type /Catalog /Pages 2 0 R >>"),
        s("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        s("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Deep 5 0 R >>"),
        stream("", TEXT),
        s(&deep),
    ]);
    let _ = read_within_5s("deep object", deep_object);
    let deep_content = build_pdf(&[
        s("<< /Type /Catalog /Pages 2 0 R >>"),
        s("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        s("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>"),
        stream("", deep.as_bytes()),
    ]);
    let _ = read_within_5s("deep content", deep_content);
}

/// PDFs shipped with the system's documentation, when there are any: read without panics.
#[test]
fn system_pdfs() {
    let out = Command::new("find").args(["/usr/share/doc", "-name", "*.pdf", "-size", "-20M"]).output();
    let files: Vec<String> = match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout).lines().take(10).map(str::to_string).collect(),
        Err(_) => Vec::new(),
    };
    if files.is_empty() {
        eprintln!("SKIPPED system PDFs: none under /usr/share/doc");
        return;
    }
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else { continue };
        match read_pdf(&bytes, &Limits::default()) {
            Ok(e) => eprintln!("{f}: {} pages, {} chars, {} notes", e.pages.len(), e.text.len(), e.notes.len()),
            Err(e) => eprintln!("{f}: {e}"),
        }
    }
}
