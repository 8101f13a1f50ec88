//! Files made to hurt: truncated, random, encrypted, and decompression bombs. Each must be
//! a [`ReadError`] that says so, quickly, never a panic or a runaway allocation.

use std::io::{Cursor, Write};
use std::time::{Duration, Instant};

use rhizome_formats::{read, read_docx, read_epub, read_pptx, read_xlsx, Limits, ReadError};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

mod pdf_bombs;

const DOCUMENT: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:r><w:t>Hello from a small document, long enough to be split in half.</w:t></w:r></w:p>
</w:body></w:document>"#;

/// A minimal DOCX, with an extra entry of `bomb` zero bytes when asked.
fn docx(bomb: Option<u64>) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    zip.start_file("[Content_Types].xml", opts).expect("zip");
    zip.write_all(b"<Types/>").expect("zip");
    if let Some(size) = bomb {
        zip.start_file("word/document.xml", opts.compression_level(Some(1)).large_file(size >= 1 << 32)).expect("zip");
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..size / zeros.len() as u64 {
            zip.write_all(&zeros).expect("zip");
        }
    } else {
        zip.start_file("word/document.xml", opts).expect("zip");
        zip.write_all(DOCUMENT.as_bytes()).expect("zip");
    }
    zip.finish().expect("zip").into_inner()
}

#[test]
fn a_small_docx_reads() {
    let e = read_docx(&docx(None), &Limits::default()).expect("readable");
    assert_eq!(e.text, "Hello from a small document, long enough to be split in half.");
}

#[test]
fn truncated_docx_is_damaged() {
    let bytes = docx(None);
    for cut in [bytes.len() / 2, bytes.len() - 1, 10, 0] {
        match read_docx(&bytes[..cut], &Limits::default()) {
            Err(ReadError::Damaged(_)) => {}
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
}

#[test]
fn random_bytes_are_damaged() {
    // A fixed xorshift stream: the same "random" file on every run.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let bytes: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    for ext in ["docx", "pptx", "xlsx", "ods", "epub"] {
        match read(ext, &bytes, &Limits::default()) {
            Some(Err(ReadError::Damaged(_))) => {}
            other => panic!("{ext}: {other:?}"),
        }
    }
    // Nor may a ZIP signature in front of garbage get further.
    let mut pk = b"PK\x03\x04".to_vec();
    pk.extend_from_slice(&bytes);
    assert!(matches!(read_docx(&pk, &Limits::default()), Err(ReadError::Damaged(_))));
    // Text formats read anything, but must not panic on it.
    assert!(read("csv", &bytes, &Limits::default()).is_some());
    let _ = read("eml", &bytes, &Limits::default());
}

#[test]
fn encrypted_office_file_says_so() {
    // An OLE compound file holding an EncryptedPackage stream, as Office saves with a password.
    let mut ole = vec![0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
    ole.resize(512, 0);
    for name in ["EncryptionInfo", "EncryptedPackage"] {
        ole.extend(name.encode_utf16().flat_map(u16::to_le_bytes));
        ole.resize(ole.len() + 64, 0);
    }
    for reader in [read_docx, read_pptx, read_xlsx] {
        match reader(&ole, &Limits::default()) {
            Err(ReadError::Encrypted(why)) => assert_eq!(why, "password-protected Office file"),
            other => panic!("{other:?}"),
        }
    }
    // A bare OLE header (a legacy .doc renamed .docx) is not called encrypted.
    let e = read_docx(&ole[..512], &Limits::default()).expect_err("not OOXML");
    assert!(matches!(&e, ReadError::Damaged(m) if m.contains("legacy")), "{e}");
    // An EPUB is never an OLE file: damaged.
    assert!(matches!(read_epub(&ole, &Limits::default()), Err(ReadError::Damaged(_))));
}

#[test]
fn zip_bomb_is_refused_quickly() {
    let bomb = docx(Some(1 << 30));
    eprintln!("bomb: 1 GiB of zeros in {} KiB", bomb.len() >> 10);
    let start = Instant::now();
    let got = read_docx(&bomb, &Limits::default());
    let took = start.elapsed();
    eprintln!("bomb refused in {took:?}: {got:?}");
    assert!(matches!(&got, Err(ReadError::TooLarge(m)) if m.contains("word/document.xml")), "{got:?}");
    assert!(took < Duration::from_secs(2));

    // The same bomb with headers that lie about its size (1 KiB): stopped by counting
    // what comes out of the inflater, at the limit, not by trusting the header.
    let lying = lie_about_sizes(bomb, 1024);
    let limits = Limits { max_decompressed: 32 << 20, ..Limits::default() };
    let start = Instant::now();
    let got = read_docx(&lying, &limits);
    let took = start.elapsed();
    eprintln!("lying bomb refused in {took:?}: {got:?}");
    assert!(matches!(&got, Err(ReadError::TooLarge(m)) if m.contains("word/document.xml")), "{got:?}");
    assert!(took < Duration::from_secs(2));
}

/// Sets every entry's uncompressed size, in its local header and the central directory,
/// to `size` when it is larger.
fn lie_about_sizes(mut zip: Vec<u8>, size: u32) -> Vec<u8> {
    let mut i = 0;
    while i + 46 <= zip.len() {
        let at = match &zip[i..i + 4] {
            b"PK\x03\x04" => Some(i + 22),
            b"PK\x01\x02" => Some(i + 24),
            _ => None,
        };
        if let Some(at) = at {
            let old = u32::from_le_bytes([zip[at], zip[at + 1], zip[at + 2], zip[at + 3]]);
            if old > size {
                zip[at..at + 4].copy_from_slice(&size.to_le_bytes());
            }
        }
        i += 1;
    }
    zip
}

/// A PPTX of `slides` slides with nothing on them.
fn pptx(slides: usize) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    let (mut ids, mut rels) = (String::new(), String::new());
    for n in 1..=slides {
        ids.push_str(&format!(r#"<p:sldId id="{}" r:id="rId{n}"/>"#, 255 + n));
        rels.push_str(&format!(r#"<Relationship Id="rId{n}" Type="x/slide" Target="slides/slide{n}.xml"/>"#));
        zip.start_file(format!("ppt/slides/slide{n}.xml"), opts).expect("zip");
        write!(zip, "<p:sld><a:p><a:r><a:t>Slide {n}</a:t></a:r></a:p></p:sld>").expect("zip");
    }
    zip.start_file("ppt/presentation.xml", opts).expect("zip");
    write!(zip, "<p:presentation><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>").expect("zip");
    zip.start_file("ppt/_rels/presentation.xml.rels", opts).expect("zip");
    write!(zip, "<Relationships>{rels}</Relationships>").expect("zip");
    zip.finish().expect("zip").into_inner()
}

#[test]
fn too_many_pages_or_too_much_text_are_refused() {
    let deck = pptx(3);
    let e = read_pptx(&deck, &Limits::default()).expect("readable");
    assert_eq!(e.text, "Slide 1\n\nSlide 2\n\nSlide 3");
    let two = Limits { max_pages: 2, ..Limits::default() };
    assert!(matches!(read_pptx(&deck, &two), Err(ReadError::TooLarge(_))));

    let text = Limits { max_text: 10, ..Limits::default() };
    let long = "h\n".to_string() + &"x".repeat(100);
    assert!(matches!(read("csv", long.as_bytes(), &text), Some(Err(ReadError::TooLarge(_)))));
    assert!(matches!(read_pptx(&deck, &text), Err(ReadError::TooLarge(_))));
}
