//! The documents people have: PDFs (English, Vietnamese, Chinese), a Word document, a
//! presentation, a spreadsheet, an e-book, an e-mail with a PDF attachment and a scanned
//! page, made by document-generation libraries from known text (tests/fixtures/documents.py),
//! then indexed, compared with their source text, asked about and cited down to the page,
//! and uploaded to the server.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::server::{files_of, ok_json, start};
use support::{json, ok, rz};

fn fixtures(dir: &Path) -> BTreeMap<String, Vec<String>> {
    support::document_fixtures(dir)
}

/// The share of `reference`'s words found in `text` and of `text`'s words found in
/// `reference` (as multisets, punctuation around words trimmed).
fn word_agreement(reference: &str, text: &str) -> (f64, f64) {
    let bag = |t: &str| {
        let mut m: BTreeMap<String, i64> = BTreeMap::new();
        for w in t.split_whitespace() {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            if !w.is_empty() {
                *m.entry(w.to_string()).or_default() += 1;
            }
        }
        m
    };
    let (a, b) = (bag(reference), bag(text));
    let common: i64 = a.iter().map(|(w, n)| (*n).min(b.get(w).copied().unwrap_or(0))).sum();
    let total = |m: &BTreeMap<String, i64>| m.values().sum::<i64>().max(1) as f64;
    (common as f64 / total(&a), common as f64 / total(&b))
}

fn words(s: &str) -> Vec<char> {
    s.split_whitespace().collect::<Vec<_>>().join(" ").chars().collect()
}

/// Character error rate of `got` against `want` (edit distance over `want`'s length), on
/// text with white space folded.
fn cer(want: &str, got: &str) -> f64 {
    let (a, b) = (words(want), words(got));
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut prev = row[0];
        row[0] = i;
        for j in 1..=b.len() {
            let cur = row[j];
            row[j] = (prev + usize::from(a[i - 1] != b[j - 1])).min(row[j] + 1).min(row[j - 1] + 1);
            prev = cur;
        }
    }
    row[b.len()] as f64 / a.len().max(1) as f64
}

/// As [`cer`], against the best-matching part of `got` (a page holding more than the
/// sentence that was put on it: a slide's title, a spreadsheet's other rows).
fn cer_within(want: &str, got: &str) -> f64 {
    let (a, b) = (words(want), words(got));
    let mut row = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        let mut prev = row[0];
        row[0] = i;
        for j in 1..=b.len() {
            let cur = row[j];
            row[j] = (prev + usize::from(a[i - 1] != b[j - 1])).min(row[j] + 1).min(row[j - 1] + 1);
            prev = cur;
        }
    }
    *row.iter().min().unwrap() as f64 / a.len().max(1) as f64
}

/// (source, text, pages JSON) of every document of the SQLite index at `index`.
fn documents(index: &Path) -> Vec<(String, String, Option<Value>)> {
    let db = rusqlite::Connection::open(index.join("rhizome.sqlite")).unwrap();
    let mut q = db.prepare("SELECT source, text, pages FROM documents ORDER BY source").unwrap();
    q.query_map([], |r| {
        let pages: Option<String> = r.get(2)?;
        Ok((r.get(0)?, r.get(1)?, pages.map(|p| serde_json::from_str(&p).unwrap())))
    })
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

/// The text of page `n` (from 1) of a document, by its stored character ranges.
fn page_text(text: &str, pages: &Value, n: usize) -> String {
    let p = pages["pages"].as_array().unwrap().iter().find(|p| p["number"] == n as u64).unwrap();
    let (a, b) = (p["start"].as_u64().unwrap() as usize, p["end"].as_u64().unwrap() as usize);
    text.chars().skip(a).take(b - a).collect()
}

fn index_fixtures(tmp: &Path) -> (PathBuf, PathBuf, BTreeMap<String, Vec<String>>) {
    let docs = tmp.join("docs");
    let expected = fixtures(&docs);
    let idx = tmp.join("idx");
    let mut c = rz(&idx);
    c.arg("index").arg(&docs);
    ok(c);
    (docs, idx, expected)
}

#[test]
fn documents_are_read_as_written_and_cited_down_to_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, idx, expected) = index_fixtures(tmp.path());
    let docs = documents(&idx);
    let mut rates = Vec::new();
    for (name, pages) in &expected {
        let Some((source, text, paging)) = docs.iter().find(|(s, _, _)| s.ends_with(&format!("/{name}"))) else {
            panic!("{name} was not indexed; documents: {:?}", docs.iter().map(|d| &d.0).collect::<Vec<_>>())
        };
        let ext = name.rsplit('.').next().unwrap();
        let scanned = name.starts_with("customs_scan");
        for (i, want) in pages.iter().enumerate() {
            // PDF pages hold just their sentence (running headers and page numbers dropped);
            // other formats' pages hold more (titles, headers, notes).
            let rate = match (ext, paging) {
                ("pdf", Some(p)) => cer(want, &page_text(text, p, i + 1)),
                (_, Some(p)) if p["pages"].as_array().unwrap().len() == pages.len() => {
                    cer_within(want, &page_text(text, p, i + 1))
                }
                _ => cer_within(want, text),
            };
            eprintln!("CER {name} page {}: {:.4}", i + 1, rate);
            rates.push((name.clone(), rate));
            let bound = if scanned { 0.05 } else { 0.01 };
            assert!(rate < bound, "{source} page {}: CER {rate:.4} >= {bound}\nwant: {want}\ngot: {text}", i + 1);
        }
        if ext == "pdf" && !name.contains('#') {
            let p = paging.as_ref().unwrap_or_else(|| panic!("{name}: no pages kept"));
            assert_eq!(p["unit"], "page");
            assert_eq!(p["pages"].as_array().unwrap().len(), pages.len(), "{name}: page count");
        }
    }

    // A question about page 2 cites page 2, in each language, in JSON and in text.
    for (question, file) in [
        ("When was the Halvorsen Bridge completed?", "report_en.pdf"),
        ("Cầu Long Biên được khánh thành năm nào?", "report_vi.pdf"),
        ("武汉长江大桥是哪一年建成通车的？", "report_zh.pdf"),
    ] {
        let mut c = rz(&idx);
        c.args(["query", "--method", "basic", question]);
        let r = json(c);
        let top = &r["contexts"][0];
        assert!(top["source"].as_str().unwrap().ends_with(file), "{question}: {top:#}");
        assert_eq!(top["pages"], serde_json::json!({"unit": "page", "first": 2, "last": 2}), "{question}: {top:#}");
        let mut c = rz(&idx);
        c.args(["query", "--method", "basic", question]);
        let out = String::from_utf8(ok(c).stdout).unwrap();
        assert!(out.contains(&format!("{file}, p. 2")), "{question}: {out}");
    }
    // The slide, the chapter and the attachment are cited by their own units and names.
    let mut c = rz(&idx);
    c.args(["query", "--method", "basic", "Where was the ferry Polarlys built?"]);
    let r = json(c);
    assert_eq!(r["contexts"][0]["pages"], serde_json::json!({"unit": "slide", "first": 2, "last": 2}), "{r:#}");
    let mut c = rz(&idx);
    c.args(["query", "--method", "basic", "Which bearings were replaced in 2019?"]);
    let r = json(c);
    assert!(r["contexts"][0]["source"].as_str().unwrap().ends_with("inspection.eml#inspection.pdf"), "{r:#}");
}

#[test]
fn the_server_takes_pdf_and_office_uploads() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fixtures(&docs);
    let s = start(&tmp.path().join("index"), &[], &[]);
    let files: Vec<(String, Vec<u8>)> = files_of(&docs)
        .into_iter()
        .filter(|(n, _)| n.ends_with(".pdf") || n.ends_with(".docx") || n.ends_with(".pptx"))
        .collect();
    assert_eq!(files.len(), 6, "three PDFs, a scanned PDF, a DOCX and a PPTX");
    let done = s.wait_job(s.upload(&files));
    assert_eq!(done["errors"], serde_json::json!([]), "{done:#}");
    let r = ok_json(s.post_json(
        "/query",
        &serde_json::json!({"question": "When was the Halvorsen Bridge completed?", "method": "basic"}),
    ));
    assert_eq!(r["contexts"][0]["source"], "upload:report_en.pdf", "{r:#}");
    assert_eq!(r["contexts"][0]["pages"]["first"], 2, "{r:#}");

    // The same file uploaded again under other names is indexed once, with every name kept.
    let pdf = files.iter().find(|(n, _)| n == "report_en.pdf").unwrap().1.clone();
    let again: Vec<(String, Vec<u8>)> = ["report_en (1).pdf", "Report EN copy.pdf", "report_en.pdf"]
        .iter()
        .map(|n| (n.to_string(), pdf.clone()))
        .collect();
    let done = s.wait_job(s.upload(&again));
    assert_eq!(done["errors"], serde_json::json!([]), "{done:#}");
    let listed = ok_json(s.get("/documents?search=report_en"));
    let docs = listed["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 1, "one document for one content: {listed:#}");
    assert_eq!(
        docs[0]["aliases"],
        serde_json::json!(["upload:report_en (1).pdf", "upload:Report EN copy.pdf"]),
        "{listed:#}"
    );
    assert_eq!(ok_json(s.get("/documents"))["total"], 6, "no document was added");
}

/// The name a shipped manual is saved under: its file name without `.gz`.
fn saved_name(shipped: &str) -> String {
    Path::new(shipped).file_name().unwrap().to_string_lossy().trim_end_matches(".gz").to_string()
}

/// Three real PDFs from Debian's documentation packages (installed by
/// scripts/install-test-deps): each is indexed with all its pages, and a question about
/// one page cites that page.
#[test]
fn three_debian_manuals_are_indexed_asked_and_cited_by_page() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("debian");
    std::fs::create_dir_all(&docs).unwrap();
    // (package, file as shipped, pages, a question, the page that answers it)
    let manuals = [
        ("libtasn1-doc", "/usr/share/doc/libtasn1-doc/libtasn1.pdf", 36, "What does asn1Parser read and generate?", 8),
        (
            "shared-mime-info",
            "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf",
            17,
            "What is the default glob weight value?",
            4,
        ),
        (
            "debian-faq",
            "/usr/share/doc/debian/FAQ/debian-faq.en.pdf.gz",
            73,
            "Who created the Debian Project, and when?",
            10,
        ),
    ];
    for (package, shipped, _, _, _) in manuals {
        let path = Path::new(shipped);
        assert!(
            path.is_file(),
            "{shipped} is missing: install the Debian package {package} (scripts/install-test-deps)"
        );
        let name = saved_name(shipped);
        let bytes = if shipped.ends_with(".gz") {
            let out = Command::new("gzip").arg("-dc").arg(path).output().unwrap();
            assert!(out.status.success(), "gzip -dc {shipped}");
            out.stdout
        } else {
            std::fs::read(path).unwrap()
        };
        std::fs::write(docs.join(name), bytes).unwrap();
    }
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.arg("index").arg(&docs);
    let r = json(c);
    assert_eq!(r["report"]["documents_indexed"], 3, "{r:#}");
    let stored = documents(&idx);
    for (_, shipped, pages, question, page) in manuals {
        let name = saved_name(shipped);
        let (source, text, paging) = stored.iter().find(|(s, _, _)| s.ends_with(&name)).unwrap();
        // Words as poppler's pdftotext reads them (a word run into its neighbour is lost).
        let out = Command::new("pdftotext").args(["-q", source, "-"]).output().unwrap();
        let (recall, precision) = word_agreement(&String::from_utf8_lossy(&out.stdout), text);
        eprintln!("{name}: words against pdftotext: recall {recall:.3}, precision {precision:.3}");
        assert!(recall > 0.97 && precision > 0.97, "{name}: recall {recall:.3}, precision {precision:.3}");
        let paging = paging.as_ref().unwrap_or_else(|| panic!("{name}: no pages kept"));
        let last = paging["pages"].as_array().unwrap().iter().map(|p| p["number"].as_u64().unwrap()).max();
        assert_eq!(last, Some(pages), "{name}: the last page");
        let mut c = rz(&idx);
        c.args(["query", "--method", "basic", question]);
        let r = json(c);
        let top = &r["contexts"][0];
        assert!(top["source"].as_str().unwrap().ends_with(&name), "{question}: {r:#}");
        let (first, last) = (top["pages"]["first"].as_u64().unwrap(), top["pages"]["last"].as_u64().unwrap());
        assert!(first <= page && page <= last, "{question}: cites pp. {first}-{last}, the answer is on p. {page}");
        let mut c = rz(&idx);
        c.args(["query", "--method", "basic", question]);
        let out = String::from_utf8(ok(c).stdout).unwrap();
        assert!(out.contains(&format!("{name}, p")), "{question}: {out}");
        eprintln!("{name}: {question} -> pp. {first}-{last}");
    }
}
