//! Each reader against documents written by the Python libraries people make them with
//! (`fixtures/make.py`): the text, its pages, and the metadata. The libraries come from a
//! venv of pinned versions (rhizome-testdb).

use std::path::{Path, PathBuf};
use std::process::Command;

use rhizome_formats::{read, Extracted, Limits, PageUnit};

/// Writes the fixtures of `format` into a new temporary directory (always `Some`: the
/// libraries come from the test venv).
fn fixtures(format: &str) -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/make.py");
    // The pinned document-generation libraries, in a venv the test support makes once.
    let python = rhizome_testdb::python::named("fixtures");
    let out = Command::new(python).arg(&script).arg(dir.path()).arg(format).output().expect("run the fixture script");
    assert!(out.status.success(), "make.py {format} failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(dir)
}

/// Reads fixture `name` by its extension, with the text it should give.
fn read_fixture(dir: &Path, name: &str) -> (Extracted, String) {
    let path: PathBuf = dir.join(name);
    let bytes = std::fs::read(&path).expect("fixture");
    let ext = name.rsplit('.').next().unwrap_or("");
    let got = read(ext, &bytes, &Limits::default()).expect("a reader for the extension");
    let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
    let reference = std::fs::read_to_string(dir.join(format!("{name}.ref.txt"))).expect("reference");
    (got, reference)
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

fn check_cer(format: &str, got: &str, reference: &str) {
    let rate = cer(got, reference);
    eprintln!("CER {format}: {:.4}% ({} reference chars)", rate * 100.0, reference.chars().count());
    assert!(rate < 0.01, "{format}: CER {rate}\n--- got ---\n{got}\n--- want ---\n{reference}");
}

fn page_text(e: &Extracted, i: usize) -> &str {
    &e.text[e.pages[i].start..e.pages[i].end]
}

const VI: &str = "Đại học Quốc gia Hà Nội được thành lập năm 1993.";
const ZH: &str = "微软宣布向OpenAI投资100亿美元。";

#[test]
fn docx() {
    let Some(dir) = fixtures("docx") else { return };
    let (e, reference) = read_fixture(dir.path(), "sample.docx");
    check_cer("docx", &e.text, &reference);
    assert_eq!(e.title.as_deref(), Some("Rhizome Test Document"));
    assert_eq!(e.author.as_deref(), Some("Nguyễn Văn An"));
    assert_eq!(e.unit, PageUnit::None);
    assert!(e.pages.is_empty());
    assert!(e.text.contains(VI), "NFC Vietnamese: {}", e.text);
    for line in ["Introduction", "Data", "Conclusion", "- First item", "- Mục thứ hai", "- 第三项"] {
        assert!(e.text.lines().any(|l| l == line), "{line:?} on a line of its own in:\n{}", e.text);
    }
    assert!(e.text.contains("\n\nIntroduction\n\n") || e.text.starts_with("Introduction\n\n"));
    assert!(e.text.contains("City | Country | Founded\nHà Nội | Việt Nam | 1010\n北京 | 中国 | 1045"));
    assert!(e.text.contains("- First item\n- Mục thứ hai\n- 第三项"));
    assert!(e.text.contains("Tab here\nand a break"));
    assert!(e.text.contains("The end & more <ok>."));
}

#[test]
fn pptx() {
    let Some(dir) = fixtures("pptx") else { return };
    let (e, reference) = read_fixture(dir.path(), "sample.pptx");
    check_cer("pptx", &e.text, &reference);
    assert_eq!(e.title.as_deref(), Some("Rhizome Slides"));
    assert_eq!(e.unit, PageUnit::Slide);
    let numbers: Vec<u32> = e.pages.iter().map(|p| p.number).collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert_eq!(e.pages[0].label.as_deref(), Some("Rhizome Overview"));
    assert!(page_text(&e, 0).contains("Rhizome reads documents"));
    let s2 = page_text(&e, 1);
    assert!(s2.contains(VI) && s2.contains("Hai dòng"), "{s2}");
    assert!(s2.contains("\nNotes:\nGhi chú: nói chậm."), "notes of slide 2: {s2}");
    let s3 = page_text(&e, 2);
    assert!(s3.contains(ZH) && s3.contains("年份 | 2023"), "{s3}");
    assert!(s3.ends_with("Notes:\nSpeaker notes for the Chinese slide."), "{s3}");
    assert!(!page_text(&e, 0).contains("Notes:"), "slide 1 has no notes");
}

fn check_sheets(format: &str, e: &Extracted, reference: &str) {
    check_cer(format, &e.text, reference);
    assert_eq!(e.unit, PageUnit::Sheet);
    let labels: Vec<(u32, Option<&str>)> = e.pages.iter().map(|p| (p.number, p.label.as_deref())).collect();
    assert_eq!(labels, [(1, Some("Sales")), (2, Some("Cities"))]);
    let sales = page_text(e, 0);
    assert!(sales.starts_with("Product | Region | Units | Price | Date\n"), "{sales}");
    assert!(sales.contains("Product: Sách; Region: Hà Nội; Units: 12; Price: 3.5; Date: 2024-01-05"), "{sales}");
    assert!(sales.contains("Product: 笔记本; Region: 北京; Units: 7; Price: 2.25; Date: 2023-12-31"), "{sales}");
    assert!(sales.contains("Product: Pen; Units: 100; Price: 0.3"), "empty cells left out: {sales}");
    let cities = page_text(e, 1);
    assert!(cities.starts_with("City | Note\n"), "first non-empty row is the header: {cities}");
    assert!(cities.contains(&format!("City: Hà Nội; Note: {VI}")));
    assert!(cities.contains(&format!("City: 北京; Note: {ZH}")));
    assert_eq!(e.title.as_deref(), Some("Sales Book"));
}

#[test]
fn xlsx() {
    let Some(dir) = fixtures("xlsx") else { return };
    let (e, reference) = read_fixture(dir.path(), "sample.xlsx");
    check_sheets("xlsx", &e, &reference);
    assert_eq!(e.author.as_deref(), Some("Lê Văn C"));
}

#[test]
fn ods() {
    let Some(dir) = fixtures("ods") else { return };
    let (e, reference) = read_fixture(dir.path(), "sample.ods");
    check_sheets("ods", &e, &reference);
}

#[test]
fn csv() {
    let Some(dir) = fixtures("csv") else { return };
    let (e, reference) = read_fixture(dir.path(), "sample.csv");
    check_cer("csv", &e.text, &reference);
    assert_eq!(e.pages.len(), 1);
    assert!(e.text.contains(&format!("Name: Lê, Văn; City: Hà Nội; Note: {VI}")), "{}", e.text);
    assert!(e.text.contains("Name: Ann; Note: said \"hi\""), "{}", e.text);
}

#[test]
fn epub() {
    let Some(dir) = fixtures("epub") else { return };
    let (e, reference) = read_fixture(dir.path(), "sample.epub");
    check_cer("epub", &e.text, &reference);
    assert_eq!(e.title.as_deref(), Some("Sách thử nghiệm"));
    assert_eq!(e.author.as_deref(), Some("Trần Thị B"));
    assert_eq!(e.unit, PageUnit::Chapter);
    let chapters: Vec<(u32, Option<&str>)> = e.pages.iter().map(|p| (p.number, p.label.as_deref())).collect();
    assert_eq!(chapters, [(1, Some("Chapter 1: Beginnings")), (2, Some("Chương 2: Hà Nội")), (3, Some("第三章"))]);
    assert!(page_text(&e, 0).ends_with("Second & last paragraph."));
    assert!(page_text(&e, 1).contains(VI));
    assert!(page_text(&e, 2).contains(ZH));
}

#[test]
fn eml() {
    let Some(dir) = fixtures("eml") else { return };
    let (e, reference) = read_fixture(dir.path(), "sample.eml");
    assert!(e.text.contains("\nDate: "), "{}", e.text);
    let without_date: String = e.text.lines().filter(|l| !l.starts_with("Date: ")).collect::<Vec<_>>().join("\n");
    check_cer("eml", &without_date, &reference);
    assert_eq!(e.title.as_deref(), Some("Báo cáo quý 3 / 第三季度报告"));
    assert_eq!(e.author.as_deref(), Some("Nguyễn Văn An <an@example.com>"));
    assert!(e.text.starts_with("Subject: Báo cáo quý 3 / 第三季度报告\nFrom: Nguyễn Văn An <an@example.com>\nDate: "));
    assert_eq!(e.attachments.len(), 1);
    assert_eq!(e.attachments[0].name, "report.pdf");
    assert_eq!(e.attachments[0].bytes, b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\n%%EOF\n");

    let (h, reference) = read_fixture(dir.path(), "html.eml");
    check_cer("eml (HTML body)", &h.text, &reference);
    assert!(h.attachments.is_empty());
}

#[test]
fn other_extensions_are_not_taken() {
    assert!(read("txt", b"hello", &Limits::default()).is_none());
    assert!(read(".DOCX", b"hello", &Limits::default()).is_some());
}
