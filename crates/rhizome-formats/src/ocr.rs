//! Scanned pages read by OCR: images (PNG, JPEG, TIFF) and PDF pages without a text layer,
//! through the `tesseract` command (Debian: `tesseract-ocr` with `-vie` and `-chi-sim`),
//! PDF pages rendered first by `pdftoppm` (`poppler-utils`). Both run as child processes
//! under a time bound; an image's size is read from its header and refused above
//! [`Limits::max_pixels`] before anything decodes it.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::pdf_layout::is_cjk;
use crate::{nfc, Extracted, Limits, PageUnit, ReadError, Result};

/// The languages OCR reads, in Tesseract's names, when their data is installed. Vietnamese
/// comes first: its model reads English letters as well, while English first drops
/// Vietnamese diacritics ("Hải" read as "Hai").
const LANGUAGES: [&str; 3] = ["vie", "eng", "chi_sim"];

/// Reads an image file's text by OCR: one page (a multi-page TIFF's frames are pages too,
/// numbered by Tesseract's output, separated by form feeds).
pub fn read_image(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    let (w, h) = image_size(bytes).ok_or_else(|| ReadError::damaged("not a PNG, JPEG or TIFF image"))?;
    if w.saturating_mul(h) > limits.max_pixels {
        return Err(ReadError::TooLarge(format!(
            "an image of {w} x {h} pixels (at most {} are read by OCR)",
            limits.max_pixels
        )));
    }
    let langs = languages()?;
    let dir = TempDir::new()?;
    let img = dir.path().join("image");
    std::fs::write(&img, bytes).map_err(|e| ReadError::Other(format!("cannot write a temporary file: {e}")))?;
    let text = tesseract(&img, &langs, limits)?;
    let mut x = Extracted { unit: PageUnit::Page, ..Default::default() };
    for (i, page) in text.split('\u{c}').filter(|p| !p.trim().is_empty()).enumerate() {
        x.push_page(i as u32 + 1, None, &clean(page));
    }
    if x.text.trim().is_empty() {
        return Err(ReadError::Other("OCR found no text in the image".into()));
    }
    Ok(x)
}

/// Reads by OCR the pages of a PDF (`bytes`) numbered in `pages`, rendered at 300 dpi:
/// their text, in the order asked, telling `done(k, of)` after each. A page OCR cannot
/// read comes back empty.
pub fn read_pdf_pages(
    bytes: &[u8],
    pages: &[u32],
    limits: &Limits,
    done: &dyn Fn(u32, u32),
) -> Result<Vec<(u32, String)>> {
    if pages.is_empty() {
        return Ok(Vec::new());
    }
    let langs = languages()?;
    if which("pdftoppm").is_none() {
        return Err(ReadError::NeedsOcr(
            "scanned PDF pages; pdftoppm is missing too (Debian/Ubuntu: apt-get install poppler-utils)".into(),
        ));
    }
    let dir = TempDir::new()?;
    let pdf = dir.path().join("doc.pdf");
    std::fs::write(&pdf, bytes).map_err(|e| ReadError::Other(format!("cannot write a temporary file: {e}")))?;
    let mut out = Vec::with_capacity(pages.len());
    for &n in pages {
        let prefix = dir.path().join(format!("p{n}"));
        let mut cmd = Command::new("pdftoppm");
        cmd.args(["-r", "300", "-gray", "-png", "-singlefile", "-f", &n.to_string(), "-l", &n.to_string()])
            .arg(&pdf)
            .arg(&prefix);
        let png = prefix.with_extension("png");
        let text = match run(&mut cmd, limits.ocr_seconds) {
            Ok(_) if png.exists() => match std::fs::read(&png).ok().and_then(|b| image_size(&b)) {
                Some((w, h)) if w.saturating_mul(h) <= limits.max_pixels => {
                    tesseract(&png, &langs, limits).map(|t| clean(&t)).unwrap_or_default()
                }
                _ => String::new(),
            },
            _ => String::new(),
        };
        let _ = std::fs::remove_file(&png);
        out.push((n, text));
        done(out.len() as u32, pages.len() as u32);
    }
    Ok(out)
}

/// A PDF's pages that had no text layer ([`crate::pages_without_text`]),
/// read by OCR and put in place. Without Tesseract, a PDF that has no text at all is
/// [`ReadError::NeedsOcr`]; one with some text keeps it, and the pages left out are noted.
/// `done(k, of)` is told after each page read.
pub fn fill_scanned_pages(
    bytes: &[u8],
    mut x: Extracted,
    limits: &Limits,
    done: &dyn Fn(u32, u32),
) -> Result<Extracted> {
    let scanned: Vec<u32> = crate::pdf::pages_without_text(&x);
    if scanned.is_empty() {
        return Ok(x);
    }
    let read = match read_pdf_pages(bytes, &scanned, limits, done) {
        Ok(read) => read,
        Err(e @ ReadError::NeedsOcr(_)) if x.text.trim().is_empty() => return Err(e),
        Err(e) => {
            x.notes.push(format!("pages {scanned:?} have no text layer and were not read: {e}"));
            return Ok(x);
        }
    };
    let ocr: std::collections::HashMap<u32, String> = read.into_iter().collect();
    let mut out = Extracted {
        title: x.title.take(),
        author: x.author.take(),
        created: x.created.take(),
        modified: x.modified.take(),
        unit: x.unit,
        attachments: std::mem::take(&mut x.attachments),
        ..Default::default()
    };
    for p in &x.pages {
        let text = match ocr.get(&p.number) {
            Some(t) if !t.trim().is_empty() => {
                out.notes.push(format!("page {}: read by OCR", p.number));
                t.as_str()
            }
            _ => x.text.get(p.start..p.end).unwrap_or(""),
        };
        out.push_page(p.number, p.label.clone(), text);
    }
    let no_text = format!(": {}", crate::pdf::NO_TEXT);
    out.notes.extend(x.notes.into_iter().filter(|n| !n.ends_with(&no_text)));
    if out.text.trim().is_empty() {
        return Err(ReadError::Other("no text layer, and OCR found no text".into()));
    }
    Ok(out)
}

/// The Tesseract languages installed among [`LANGUAGES`], joined with `+`; NeedsOcr when
/// Tesseract is not installed or has none of them.
fn languages() -> Result<String> {
    if std::env::var_os("RHIZOME_OCR").is_some_and(|v| v == "off") {
        return Err(ReadError::NeedsOcr("a scanned page or image, and OCR is off (RHIZOME_OCR=off)".into()));
    }
    if which("tesseract").is_none() {
        return Err(ReadError::NeedsOcr("a scanned page or image".into()));
    }
    let out = Command::new("tesseract")
        .arg("--list-langs")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ReadError::NeedsOcr(format!("tesseract did not run: {e}")))?;
    let listed = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let have: Vec<&str> = LANGUAGES.iter().copied().filter(|l| listed.lines().any(|x| x.trim() == *l)).collect();
    if have.is_empty() {
        return Err(ReadError::NeedsOcr("Tesseract has no English, Vietnamese or Chinese language data".into()));
    }
    Ok(have.join("+"))
}

/// Tesseract's text of the image at `path`.
fn tesseract(path: &Path, langs: &str, limits: &Limits) -> Result<String> {
    let mut cmd = Command::new("tesseract");
    cmd.arg(path).arg("stdout").args(["-l", langs, "--psm", "3"]).env("OMP_THREAD_LIMIT", "1");
    let out = run(&mut cmd, limits.ocr_seconds)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Runs `cmd` to its end within `seconds`, returning its standard output; killed and an
/// error past the bound.
fn run(cmd: &mut Command, seconds: u64) -> Result<Vec<u8>> {
    let name = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| ReadError::Other(format!("{name} did not start: {e}")))?;
    let mut stdout = child.stdout.take().ok_or_else(|| ReadError::Other(format!("{name}: no output")))?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + Duration::from_secs(seconds.max(1));
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let out = reader.join().unwrap_or_default();
                return if status.success() {
                    Ok(out)
                } else {
                    Err(ReadError::Other(format!("{name} failed ({status})")))
                };
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ReadError::TooLarge(format!("{name} took more than {seconds} s")));
            }
        }
    }
}

/// OCR text tidied: lines trimmed, a word broken by a hyphen at a line end joined, runs of
/// blank lines kept as one paragraph break, the spaces Tesseract puts between Chinese
/// characters dropped, NFC.
fn clean(text: &str) -> String {
    let mut out = String::new();
    let mut blank = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push_str("\n\n");
        } else if out.ends_with('-') && line.starts_with(char::is_lowercase) {
            out.pop();
        } else if !out.is_empty() {
            out.push(' ');
        }
        blank = false;
        out.push_str(line);
    }
    nfc(&join_cjk(&out))
}

/// `text` without the spaces (not line breaks) that stand between two CJK characters.
fn join_cjk(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' {
            let end = chars[i..].iter().position(|&d| d != ' ').map_or(chars.len(), |k| i + k);
            let before = out.chars().next_back().is_some_and(is_cjk);
            if !(before && chars.get(end).copied().is_some_and(is_cjk)) {
                out.extend(&chars[i..end]);
            }
            i = end;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Width and height from a PNG, JPEG or TIFF header, without decoding the image.
pub fn image_size(b: &[u8]) -> Option<(u64, u64)> {
    let be32 = |i: usize| b.get(i..i + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as u64);
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if b.starts_with(&[0xFF, 0xD8]) {
        // JPEG: walk the segments to a start-of-frame marker.
        let mut i = 2;
        while i + 9 < b.len() {
            if b[i] != 0xFF {
                i += 1;
                continue;
            }
            let marker = b[i + 1];
            let len = u16::from_be_bytes([b[i + 2], b[i + 3]]) as usize;
            if matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
                let h = u16::from_be_bytes([b[i + 5], b[i + 6]]) as u64;
                let w = u16::from_be_bytes([b[i + 7], b[i + 8]]) as u64;
                return Some((w, h));
            }
            i += 2 + len.max(2);
        }
        return None;
    }
    if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        return tiff_size(b);
    }
    None
}

/// The largest first-frame size a TIFF's first directory gives (tags 256 and 257).
fn tiff_size(b: &[u8]) -> Option<(u64, u64)> {
    let le = b[0] == b'I';
    let u16_at = |i: usize| {
        let s = b.get(i..i + 2)?;
        Some(if le { u16::from_le_bytes([s[0], s[1]]) } else { u16::from_be_bytes([s[0], s[1]]) } as u64)
    };
    let u32_at = |i: usize| {
        let s = b.get(i..i + 4)?;
        let a = [s[0], s[1], s[2], s[3]];
        Some(if le { u32::from_le_bytes(a) } else { u32::from_be_bytes(a) } as u64)
    };
    let ifd = u32_at(4)? as usize;
    let n = u16_at(ifd)? as usize;
    let (mut w, mut h) = (None, None);
    for k in 0..n.min(512) {
        let e = ifd + 2 + k * 12;
        let tag = u16_at(e)?;
        let kind = u16_at(e + 2)?;
        let value = if kind == 3 { u16_at(e + 8)? } else { u32_at(e + 8)? };
        match tag {
            256 => w = Some(value),
            257 => h = Some(value),
            _ => {}
        }
    }
    Some((w?, h?))
}

/// The path of `program` on PATH, if it is there.
fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(program)).find(|p| p.is_file())
}

/// A temporary directory removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> Result<TempDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "rhizome-ocr-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).map_err(|e| ReadError::Other(format!("cannot make a temporary folder: {e}")))?;
        Ok(TempDir(p))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_from_headers() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(100_000u32.to_be_bytes());
        png.extend(100_000u32.to_be_bytes());
        assert_eq!(image_size(&png), Some((100_000, 100_000)));
        let huge = read_image(&png, &Limits::default()).unwrap_err();
        assert!(matches!(huge, ReadError::TooLarge(_)), "{huge}");
        assert_eq!(image_size(b"not an image"), None);
        assert!(matches!(read_image(b"GIF89a", &Limits::default()), Err(ReadError::Damaged(_))));
    }

    #[test]
    fn ocr_text_is_tidied() {
        assert_eq!(clean("  The infor-\nmation was\nread.\n\n\nNext  \n"), "The information was read.\n\nNext");
        assert_eq!(
            clean("青岛 港 的 老 码头 ，\n后 来 in 1952 重新 修建 。"),
            "青岛港的老码头，后来 in 1952 重新修建。"
        );
    }
}
