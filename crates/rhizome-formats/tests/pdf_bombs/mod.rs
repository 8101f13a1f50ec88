//! PDFs made to hurt the reader, written byte by byte: streams that inflate far past the
//! limit behind each decoder lopdf has (Flate, LZW, ASCII85 then Flate), inside an object
//! stream lopdf expands while loading, as the cross-reference stream it reads first, and
//! pages that would draw too much. Each is refused or bounded, and the rest of the file
//! is read where it can be.

use std::io::Write;

use rhizome_formats::{read_observed, read_pdf, Limits, ReadError};

/// Objects 1.. of a PDF with a classic cross-reference table; `xref_stream` replaces the
/// table with a stream object holding the given (encoded) bytes and dictionary entries.
fn pdf(objects: &[Vec<u8>], xref_stream: Option<(&str, &[u8])>) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        writeln!(out, "{} 0 obj", i + 1).unwrap();
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let n = objects.len() + 1;
    let start = out.len();
    match xref_stream {
        None => {
            write!(out, "xref\n0 {n}\n0000000000 65535 f \n").unwrap();
            for o in &offsets {
                writeln!(out, "{o:010} 00000 n ").unwrap();
            }
            write!(out, "trailer\n<< /Size {n} /Root 1 0 R >>\n").unwrap();
        }
        Some((dict, data)) => {
            writeln!(out, "{n} 0 obj").unwrap();
            out.extend_from_slice(&stream(&format!("/Type /XRef /Size {} /W [1 4 1] /Root 1 0 R {dict}", n + 1), data));
            out.extend_from_slice(b"\nendobj\n");
        }
    }
    write!(out, "startxref\n{start}\n%%EOF\n").unwrap();
    out
}

fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut s = format!("<< /Length {} {dict} >>\nstream\n", data.len()).into_bytes();
    s.extend_from_slice(data);
    s.extend_from_slice(b"\nendstream");
    s
}

/// Catalog, pages, one font, then a page per content stream (objects 4, 6, …).
fn pages(contents: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let kids: Vec<String> = (0..contents.len()).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    let mut objs = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{}] /Count {} >>", kids.join(" "), contents.len()).into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ];
    for (i, c) in contents.iter().enumerate() {
        objs.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
                5 + 2 * i
            )
            .into_bytes(),
        );
        objs.push(c.clone());
    }
    objs
}

fn text_page(text: &str) -> Vec<u8> {
    stream("", format!("BT /F1 12 Tf 72 700 Td ({text}) Tj ET").as_bytes())
}

/// `n` zero bytes (a multiple of 1 MiB) as a zlib stream of about a thousandth of that,
/// made at once: one mebibyte deflated and flushed to a byte boundary, repeated, then an
/// empty final block and the checksum.
fn zeros_flate(n: usize) -> Vec<u8> {
    let mut c = flate2::Compress::new(flate2::Compression::best(), false);
    let mut block = Vec::with_capacity(8 << 10);
    c.compress_vec(&vec![0u8; MIB], &mut block, flate2::FlushCompress::Sync).unwrap();
    let mut out = vec![0x78, 0x01];
    for _ in 0..n / MIB {
        out.extend_from_slice(&block);
    }
    out.extend_from_slice(&[0x03, 0x00]);
    out.extend_from_slice(&((((n % 65521) as u32) << 16) | 1).to_be_bytes());
    out
}

/// The most resident memory this test process has had, in MiB.
fn peak_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kb.unwrap_or(0) >> 10
}

fn ascii85(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in b.chunks(4) {
        let mut g = [0u8; 4];
        g[..c.len()].copy_from_slice(c);
        let mut v = u32::from_be_bytes(g);
        let mut d = [0u8; 5];
        for x in d.iter_mut().rev() {
            *x = (v % 85) as u8 + b'!';
            v /= 85;
        }
        out.extend_from_slice(&d[..c.len() + 1]);
    }
    out.extend_from_slice(b"~>");
    out
}

const MIB: usize = 1 << 20;

fn small() -> Limits {
    Limits { max_decompressed: 16 << 20, ..Limits::default() }
}

fn refused(got: Result<rhizome_formats::Extracted, ReadError>, says: &str) {
    match got {
        Err(ReadError::TooLarge(m)) => assert!(m.contains(says), "{m}"),
        other => panic!("expected TooLarge ({says}), got {other:?}"),
    }
}

#[test]
fn a_hand_written_pdf_reads() {
    let got = read_pdf(&pdf(&pages(&[text_page("Hello from page one")]), None), &Limits::default()).expect("reads");
    assert_eq!(got.text, "Hello from page one");
}

#[test]
fn an_object_stream_bomb_is_refused_before_lopdf_expands_it() {
    // 2 GiB behind 2 MiB: lopdf would hold all of it (and more, as its buffer doubles).
    let mut objs = pages(&[text_page("Hello")]);
    objs.push(stream("/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode", &zeros_flate(2048 * MIB)));
    refused(read_pdf(&pdf(&objs, None), &small()), "inflate past the 16 MiB");
    let peak = peak_mib();
    assert!(peak < 1024, "the test process reached {peak} MiB");
}

#[test]
fn an_encrypted_files_object_stream_is_bounded_by_its_stored_size() {
    // lopdf decrypts and expands an encrypted file's object streams before anything can
    // measure them: 4 MiB behind two Flate filters is refused by what it could become.
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&zeros_flate(4 * MIB)).unwrap();
    let mut objs = pages(&[text_page("Hello")]);
    objs.push(stream("/Type /ObjStm /N 1 /First 4 /Filter [/FlateDecode /FlateDecode]", &z.finish().unwrap()));
    objs.push(b"<< /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >>".to_vec());
    let mut file = pdf(&objs, None);
    let at = file.windows(14).rposition(|w| w == b"/Root 1 0 R >>").expect("trailer");
    file.splice(at + 12..at + 12, format!("/Encrypt {} 0 R ", objs.len()).into_bytes());
    let got = read_pdf(&file, &small());
    assert!(matches!(&got, Err(ReadError::TooLarge(m)) if m.contains("encrypted")), "{got:?}");
}

#[test]
fn lzw_and_chained_filters_are_measured_decoded() {
    let lzw = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
        .encode(&vec![b' '; 64 * MIB])
        .expect("lzw");
    assert!(lzw.len() < MIB, "{} bytes of LZW", lzw.len());
    let objs = pages(&[stream("/Filter /LZWDecode", &lzw)]);
    refused(read_pdf(&pdf(&objs, None), &small()), "inflate past");

    let chained = ascii85(&zeros_flate(64 * MIB));
    let objs = pages(&[stream("/Filter [/ASCII85Decode /FlateDecode]", &chained)]);
    refused(read_pdf(&pdf(&objs, None), &small()), "inflate past");
}

#[test]
fn a_cross_reference_stream_bomb_is_refused_before_lopdf_reads_it() {
    let objs = pages(&[text_page("Hello")]);
    let bomb = zeros_flate(64 * MIB);
    refused(read_pdf(&pdf(&objs, Some(("/Filter /FlateDecode", &bomb))), &Limits::default()), "cross-reference");
}

#[test]
fn a_page_that_draws_too_much_is_skipped_and_the_rest_is_read() {
    // 20 MiB of path operators, stored compressed: under the file's budget, over a page's.
    let mut ops = Vec::with_capacity(20 * MIB);
    while ops.len() < 20 * MIB {
        ops.extend_from_slice(b"0 0 m 1 1 l S\n");
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&ops).unwrap();
    let heavy = stream("/Filter /FlateDecode", &z.finish().unwrap());
    let got = read_pdf(&pdf(&pages(&[heavy, text_page("Hello from page two")]), None), &Limits::default())
        .expect("the other page reads");
    assert_eq!(got.text, "Hello from page two");
    assert!(got.notes.iter().any(|n| n.starts_with("page 1: skipped (its content is larger")), "{:?}", got.notes);
}

#[test]
fn a_page_with_too_many_glyphs_stops_at_the_bound() {
    let long = "x".repeat(600_000);
    let got = read_pdf(&pdf(&pages(&[text_page(&long)]), None), &Limits::default()).expect("reads");
    assert!(got.text.len() < 600_000, "{} chars", got.text.len());
    assert!(got.notes.iter().any(|n| n.contains("more glyphs than one page may have")), "{:?}", got.notes);
}

#[test]
fn ocr_tells_each_scanned_page_as_it_reads_it() {
    // Three pages without a text layer: OCR reads them one by one (finding nothing here).
    let blank = || stream("", b"0 0 m 10 10 l S");
    let file = pdf(&pages(&[blank(), blank(), blank()]), None);
    let told = std::sync::Mutex::new(Vec::new());
    let got = read_observed("pdf", &file, &Limits::default(), &|k, of| told.lock().unwrap().push((k, of))).unwrap();
    if matches!(got, Err(ReadError::NeedsOcr(_))) {
        eprintln!("tesseract is not installed: nothing to tell");
        return;
    }
    assert_eq!(told.into_inner().unwrap(), [(1, 3), (2, 3), (3, 3)], "{got:?}");
}
