//! Targets: the readers of the documents people have (PDF, DOCX, PPTX, XLSX, ODS, EPUB,
//! e-mail, image headers), each fed a file through the loader `rhizome index` and uploads
//! use. Seeds are small valid files built here (a hand-written PDF, stored zips with the
//! parts each container needs), the hostile cases the readers must bound (a zip bomb, a
//! PDF whose form draws itself, an image header of 100,000 x 100,000 pixels), and, when
//! `RHIZOME_FUZZ_DOCUMENTS` names a folder (the fixtures of tests/formats.rs), its files.

use rhizome_core::Loader;
use rhizome_ingest::load::FileLoader;

use crate::{files, Target};

const ZIP: &[&str] = &[
    "PK\u{3}\u{4}",
    "PK\u{1}\u{2}",
    "PK\u{5}\u{6}",
    "word/document.xml",
    "ppt/slides/slide1.xml",
    "xl/worksheets/sheet1.xml",
    "content.xml",
    "META-INF/container.xml",
    "<w:t>",
    "<a:t>",
    "<text:p>",
    "<c r=\"A1\" t=\"s\"><v>0</v></c>",
    "<!DOCTYPE x [<!ENTITY a \"aaaa\">]>",
    "&a;",
];

const PDF: &[&str] = &[
    "%PDF-1.7\n",
    " 0 obj\n",
    "endobj\n",
    "stream\n",
    "endstream\n",
    "<< /Type /Page /Parent 2 0 R >>",
    "/Kids [3 0 R]",
    "/Filter /FlateDecode",
    "/Filter [/ASCII85Decode /LZWDecode /FlateDecode]",
    "/Type /ObjStm /N 1 /First 4",
    "/Type /XRef /W [1 4 1]",
    "/Length 99999999",
    "BT /F1 12 Tf (text) Tj ET",
    "/X0 Do",
    "[[[[[[[[",
    "xref\n0 1\n",
    "trailer\n<< /Root 1 0 R >>\n",
    "startxref\n",
    "%%EOF",
];

const MAIL: &[&str] = &[
    "Subject: ",
    "From: ",
    "Content-Type: multipart/mixed; boundary=\"b\"\r\n",
    "--b\r\n",
    "--b--\r\n",
    "Content-Transfer-Encoding: base64\r\n",
    "Content-Disposition: attachment; filename=\"a.pdf\"\r\n",
    "=?utf-8?B?",
    "?=",
];

/// Loads `input` as a file of type `ext` with the loader indexing and uploads use.
fn load(ext: &str, input: &[u8]) -> Result<(), String> {
    let path = files::write("input", ext, input);
    if let Ok(docs) = FileLoader.load(&path) {
        if let Some(d) = docs.iter().find(|d| d.text.trim().is_empty()) {
            return Err(format!("{ext}: document {:?} has empty text", d.source));
        }
    }
    Ok(())
}

/// A zip archive of `parts`, stored (no compression), as small as the format allows.
fn stored_zip(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let crc = |b: &[u8]| {
        let mut c = 0xFFFF_FFFFu32;
        for &x in b {
            c ^= x as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
            }
        }
        !c
    };
    let (mut out, mut central) = (Vec::new(), Vec::new());
    for (name, data) in parts {
        let offset = out.len() as u32;
        let (n, len, sum) = (name.len() as u16, data.len() as u32, crc(data));
        out.extend(b"PK\x03\x04\x14\0\0\0\0\0\0\0\0\0");
        out.extend(sum.to_le_bytes());
        out.extend(len.to_le_bytes());
        out.extend(len.to_le_bytes());
        out.extend(n.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out.extend(name.as_bytes());
        out.extend(*data);
        central.extend(b"PK\x01\x02\x14\0\x14\0\0\0\0\0\0\0\0\0");
        central.extend(sum.to_le_bytes());
        central.extend(len.to_le_bytes());
        central.extend(len.to_le_bytes());
        central.extend(n.to_le_bytes());
        central.extend([0u8; 12]);
        central.extend(offset.to_le_bytes());
        central.extend(name.as_bytes());
    }
    let (at, size, count) = (out.len() as u32, central.len() as u32, parts.len() as u16);
    out.extend(central);
    out.extend(b"PK\x05\x06\0\0\0\0");
    out.extend(count.to_le_bytes());
    out.extend(count.to_le_bytes());
    out.extend(size.to_le_bytes());
    out.extend(at.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

/// A PDF of one page saying `text`, with a correct cross-reference table.
fn tiny_pdf(text: &str, extra: &str) -> Vec<u8> {
    let content = format!("BT /F1 24 Tf 72 700 Td ({text}) Tj ET{extra}");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> /XObject << /X0 6 0 R >> >> >>"
            .to_string(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
        "<< /Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X0 6 0 R >> >> \
         /Length 6 >>\nstream\n/X0 Do\nendstream"
            .to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        out.extend(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

fn docx_seeds() -> Vec<Vec<u8>> {
    let doc = br#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>The ferry sails at dawn.</w:t></w:r></w:p><w:tbl><w:tr><w:tc><w:p><w:r><w:t>A</w:t></w:r></w:p></w:tc></w:tr></w:tbl></w:body></w:document>"#;
    let mut seeds = vec![stored_zip(&[("word/document.xml", doc)])];
    // A bomb: an entry claiming little and holding much is refused by the reader's cap.
    seeds.push(stored_zip(&[("word/document.xml", &vec![b' '; 1 << 20])]));
    seeds.extend(folder_seeds("docx"));
    seeds
}

fn pptx_seeds() -> Vec<Vec<u8>> {
    let pres = br#"<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst></p:presentation>"#;
    let rels = br#"<Relationships><Relationship Id="rId2" Target="slides/slide1.xml"/></Relationships>"#;
    let slide = br#"<p:sld xmlns:p="p" xmlns:a="a"><a:p><a:r><a:t>New cranes arrive in May.</a:t></a:r></a:p></p:sld>"#;
    let mut seeds = vec![stored_zip(&[
        ("ppt/presentation.xml", pres),
        ("ppt/_rels/presentation.xml.rels", rels),
        ("ppt/slides/slide1.xml", slide),
    ])];
    seeds.extend(folder_seeds("pptx"));
    seeds
}

fn xlsx_seeds() -> Vec<Vec<u8>> {
    let mut seeds = folder_seeds("xlsx");
    seeds.push(stored_zip(&[("xl/workbook.xml", b"<workbook/>")]));
    seeds
}

fn ods_seeds() -> Vec<Vec<u8>> {
    let content = br#"<office:document-content xmlns:office="o" xmlns:table="t" xmlns:text="x"><office:body><office:spreadsheet><table:table table:name="S"><table:table-row><table:table-cell><text:p>Ferry</text:p></table:table-cell></table:table-row><table:table-row table:number-rows-repeated="1000000"><table:table-cell table:number-columns-repeated="16384"><text:p>x</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>"#;
    let mut seeds =
        vec![stored_zip(&[("mimetype", b"application/vnd.oasis.opendocument.spreadsheet"), ("content.xml", content)])];
    seeds.extend(folder_seeds("ods"));
    seeds
}

fn epub_seeds() -> Vec<Vec<u8>> {
    let container = br#"<container><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>"#;
    let opf = br#"<package><metadata><dc:title xmlns:dc="dc">Voyages</dc:title></metadata><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>"#;
    let ch = br#"<html><body><h1>One</h1><p>The voyage begins in Bergen.</p></body></html>"#;
    let mut seeds = vec![stored_zip(&[
        ("mimetype", b"application/epub+zip"),
        ("META-INF/container.xml", container),
        ("OEBPS/content.opf", opf),
        ("OEBPS/c1.xhtml", ch),
    ])];
    seeds.extend(folder_seeds("epub"));
    seeds
}

fn eml_seeds() -> Vec<Vec<u8>> {
    let mut seeds = vec![
        b"Subject: Bridge\r\nFrom: a@b.c\r\n\r\nThe inspection found no cracks.\r\n".to_vec(),
        format!(
            "Subject: Record\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n\
             See the record.\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"r.pdf\"\r\n\r\n{}\r\n--b--\r\n",
            String::from_utf8_lossy(&tiny_pdf("Bearings replaced in 2019", ""))
        )
        .into_bytes(),
    ];
    seeds.extend(folder_seeds("eml"));
    seeds
}

fn pdf_seeds() -> Vec<Vec<u8>> {
    let mut seeds = vec![tiny_pdf("The Halvorsen Bridge was completed in 1931.", ""), tiny_pdf("Drawn", " /X0 Do")];
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    seeds.push(tiny_pdf("Deep", &format!(" {deep}")));
    seeds.extend(folder_seeds("pdf"));
    seeds
}

fn image_seeds() -> Vec<Vec<u8>> {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend(100_000u32.to_be_bytes());
    png.extend(100_000u32.to_be_bytes());
    let mut tiff = b"II*\0\x08\0\0\0\x02\0".to_vec();
    for tag in [256u16, 257] {
        tiff.extend(tag.to_le_bytes());
        tiff.extend(4u16.to_le_bytes());
        tiff.extend(1u32.to_le_bytes());
        tiff.extend(100_000u32.to_le_bytes());
    }
    vec![png, tiff, vec![0xFF, 0xD8, 0xFF, 0xC0, 0, 17, 8, 0xFF, 0xFF, 0xFF, 0xFF, 3]]
}

/// The files ending in `.ext` of the folder `RHIZOME_FUZZ_DOCUMENTS` names, if any.
fn folder_seeds(ext: &str) -> Vec<Vec<u8>> {
    let Some(dir) = std::env::var_os("RHIZOME_FUZZ_DOCUMENTS") else { return Vec::new() };
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .filter_map(|p| std::fs::read(p).ok())
        .collect()
}

/// Image headers only: the size is read and bounded before OCR would run, so no input
/// reaches Tesseract (every seed and mutation is over the pixel limit or not an image).
fn image(input: &[u8]) -> Result<(), String> {
    let limits = rhizome_formats::Limits { max_pixels: 0, ..Default::default() };
    match rhizome_formats::read_image(input, &limits) {
        Ok(_) => Err("an image read with a pixel limit of 0".into()),
        Err(_) => Ok(()),
    }
}

pub fn targets() -> Vec<Target> {
    let t =
        |name, what, dict, seeds, run| Target { name, what, max_len: 256 << 10, dict, seeds, run, min_time_limit_s: 0 };
    vec![
        t("load_pdf", "PDF reader (text layer, layout, OCR of pages without text)", PDF, pdf_seeds, |i| load("pdf", i)),
        t("load_docx", "DOCX reader (zip, XML, size caps)", ZIP, docx_seeds, |i| load("docx", i)),
        t("load_pptx", "PPTX reader (slides, notes)", ZIP, pptx_seeds, |i| load("pptx", i)),
        t("load_xlsx", "XLSX reader (sheets, header rows)", ZIP, xlsx_seeds, |i| load("xlsx", i)),
        t("load_ods", "ODS reader (repeated rows and columns)", ZIP, ods_seeds, |i| load("ods", i)),
        t("load_epub", "EPUB reader (container, OPF spine, chapters)", ZIP, epub_seeds, |i| load("epub", i)),
        t("load_eml", "e-mail reader (MIME, attachments read as documents)", MAIL, eml_seeds, |i| load("eml", i)),
        t("image_header", "image size from PNG/JPEG/TIFF headers, bounded before OCR", &[], image_seeds, image),
    ]
}
