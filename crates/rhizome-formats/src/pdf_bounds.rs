//! What a PDF's streams cost, measured before anything inflates them whole.
//!
//! lopdf inflates some streams while it loads a file: the cross-reference stream found at
//! `startxref` (or a `/Prev` or `/XRefStm` offset), and every object stream (`/Type
//! /ObjStm`) as it expands it. pdf-extract later inflates page contents, forms, fonts and
//! CMaps. Each of them is measured here first with a bounded decoder that follows the
//! stream's whole filter chain (Flate, LZW, ASCII85 and ASCIIHex, in any order), so a
//! bomb behind any of them is refused at [`Limits::max_decompressed`] instead of being
//! allocated:
//! - [`check_xref_streams`] reads the raw bytes before lopdf parses them;
//! - [`load`] hands lopdf a filter that measures every stream object as it is read, and
//!   drops one that goes past what is left of the budget (lopdf expands an object stream
//!   only after the filter has kept it);
//! - [`page_work`] measures what one page draws (its contents and the forms it uses,
//!   counting repeats), so [`crate::pdf`] can skip a page that would take too long.

use std::cell::Cell;
use std::io::Write;

use pdf_extract::{Dictionary, Document, Object, ObjectId};

use crate::{Limits, ReadError, Result};

/// Bytes a cross-reference stream may inflate to: about 5 bytes per object, so room for
/// millions of objects (and the entries lopdf keeps for them stay bounded).
const MAX_XREF: u64 = 32 << 20;
/// Decoded bytes of content one page may draw, counting a form each time it is drawn.
/// Parsed operators take about twenty times their text in memory.
pub(crate) const MAX_PAGE_WORK: u64 = 16 << 20;

/// How many bytes a stream decodes to, if no more than `budget`; `None` past it. A filter
/// lopdf cannot decode (DCT, CCITT, JBIG2, …) is left as stored, which is what the
/// readers then see. A stream that fails to decode counts what came out before the error.
pub(crate) fn decoded_len(dict: &Dictionary, content: &[u8], budget: u64) -> Option<u64> {
    let filters = filter_names(dict.get(b"Filter").ok());
    let early = dict
        .get(b"DecodeParms")
        .ok()
        .and_then(|p| p.as_dict().ok())
        .and_then(|p| p.get(b"EarlyChange").ok())
        .and_then(|v| v.as_i64().ok())
        .is_none_or(|v| v != 0);
    chain_len(&filters, early, content, budget)
}

fn filter_names(f: Option<&Object>) -> Vec<Vec<u8>> {
    match f {
        Some(Object::Name(n)) => vec![n.clone()],
        Some(Object::Array(a)) => a.iter().filter_map(|o| o.as_name().ok().map(<[u8]>::to_vec)).collect(),
        _ => Vec::new(),
    }
}

fn chain_len(filters: &[Vec<u8>], early: bool, content: &[u8], budget: u64) -> Option<u64> {
    let mut owned: Vec<u8>;
    let mut input = content;
    for (i, f) in filters.iter().enumerate() {
        let last = i + 1 == filters.len();
        let mut out = Bounded::new(budget, last);
        match f.as_slice() {
            b"FlateDecode" | b"Fl" => inflate(input, &mut out),
            b"LZWDecode" | b"LZW" => lzw(input, early, &mut out),
            b"ASCII85Decode" | b"A85" => ascii85(input, &mut out),
            b"ASCIIHexDecode" | b"AHx" => ascii_hex(input, &mut out),
            // Not decoded by the readers: what they see is what is stored.
            _ => return (input.len() as u64 <= budget).then_some(input.len() as u64),
        }
        if out.over {
            return None;
        }
        if last {
            return Some(out.count);
        }
        owned = out.kept;
        input = &owned;
    }
    (input.len() as u64 <= budget).then_some(input.len() as u64)
}

/// A sink that counts, keeps what a next filter needs, and refuses past its budget.
struct Bounded {
    budget: u64,
    count: u64,
    over: bool,
    keep: bool,
    kept: Vec<u8>,
}

impl Bounded {
    fn new(budget: u64, last: bool) -> Self {
        Bounded { budget, count: 0, over: false, keep: !last, kept: Vec::new() }
    }
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.count += buf.len() as u64;
        if self.count > self.budget {
            self.over = true;
            return Err(std::io::Error::other("over budget"));
        }
        if self.keep {
            self.kept.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Zlib, and raw deflate after the two header bytes when zlib yields nothing (as lopdf
/// retries).
fn inflate(input: &[u8], out: &mut Bounded) {
    let z = std::io::copy(&mut flate2::read::ZlibDecoder::new(input), out);
    if z.is_err() && out.count == 0 && !out.over && input.len() > 2 {
        let _ = std::io::copy(&mut flate2::read::DeflateDecoder::new(&input[2..]), out);
    }
}

fn lzw(input: &[u8], early: bool, out: &mut Bounded) {
    use weezl::{decode::Decoder, BitOrder};
    let mut d = if early { Decoder::with_tiff_size_switch(BitOrder::Msb, 8) } else { Decoder::new(BitOrder::Msb, 8) };
    let _ = d.into_stream(out).decode_all(input);
}

/// At most four bytes per input byte (`z`), five characters to four bytes otherwise.
fn ascii85(input: &[u8], out: &mut Bounded) {
    let (mut group, mut n) = (0u32, 0);
    for &c in input {
        let ok = match c {
            b'~' => break,
            b'z' if n == 0 => out.write_all(&[0; 4]),
            b'!'..=b'u' => {
                group = group.wrapping_mul(85).wrapping_add(u32::from(c - b'!'));
                n += 1;
                if n == 5 {
                    n = 0;
                    out.write_all(&std::mem::take(&mut group).to_be_bytes())
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        };
        if ok.is_err() {
            return;
        }
    }
    if n > 1 {
        let _ = out.write_all(&vec![0; n - 1]);
    }
}

fn ascii_hex(input: &[u8], out: &mut Bounded) {
    let digits: Vec<u8> =
        input.iter().take_while(|&&c| c != b'>').filter_map(|&c| (c as char).to_digit(16).map(|d| d as u8)).collect();
    let bytes: Vec<u8> = digits.chunks(2).map(|p| (p[0] << 4) | p.get(1).copied().unwrap_or(0)).collect();
    let _ = out.write_all(&bytes);
}

/// Refuses a file whose cross-reference stream (an object at a `startxref`, `/Prev` or
/// `/XRefStm` offset) inflates past [`MAX_XREF`] or the budget, before lopdf inflates it.
pub(crate) fn check_xref_streams(bytes: &[u8], limits: &Limits) -> Result<()> {
    let base = bytes.windows(5).position(|w| w == b"%PDF-").unwrap_or(0);
    let cap = MAX_XREF.min(limits.max_decompressed);
    // Each offset once, and only where an object starts: a file repeating `/Prev N` costs
    // no more than one look at each of its objects.
    let mut offsets = std::collections::BTreeSet::new();
    for key in [&b"startxref"[..], b"/Prev", b"/XRefStm"] {
        for at in find_all(bytes, key) {
            let Some(offset) = number_after(&bytes[at + key.len()..]) else { continue };
            offsets.extend(base.checked_add(offset).filter(|&s| s < bytes.len()));
        }
    }
    let ends = Ends::of(bytes);
    for start in offsets {
        let Some((dict, content)) = raw_stream_at(bytes, start, &ends) else { continue };
        if parse_dict(dict).is_some_and(|d| decoded_len(&d, content, cap).is_none()) {
            return Err(ReadError::TooLarge(format!(
                "its cross-reference stream inflates past the {} MiB allowed",
                cap >> 20
            )));
        }
    }
    Ok(())
}

/// Where every `endstream` of a file is, found once: the end of a stream is looked up,
/// never searched for again from each stream.
struct Ends(Vec<usize>);

impl Ends {
    fn of(bytes: &[u8]) -> Ends {
        Ends(find_all(bytes, b"endstream").collect())
    }

    /// Where the stream whose data starts at `start` ends: the next `endstream`, else the
    /// end of the file.
    fn after(&self, start: usize, len: usize) -> usize {
        self.0.get(self.0.partition_point(|&e| e < start)).copied().unwrap_or(len)
    }
}

/// Where a stream's data starts, after the `stream` keyword at `kw` and its end of line.
fn data_start(bytes: &[u8], kw: usize) -> usize {
    let mut s = kw + b"stream".len();
    s += usize::from(bytes.get(s) == Some(&b'\r'));
    s += usize::from(bytes.get(s) == Some(&b'\n'));
    s
}

fn find_all<'a>(hay: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    hay.windows(needle.len()).enumerate().filter(move |(_, w)| *w == needle).map(|(i, _)| i)
}

fn number_after(b: &[u8]) -> Option<usize> {
    let s = b.iter().position(|c| !c.is_ascii_whitespace())?;
    let digits: Vec<u8> = b[s..].iter().take(20).take_while(|c| c.is_ascii_digit()).copied().collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// The dictionary text and stream bytes of an `N G obj << … >> stream … endstream`
/// starting at `at` (the stream running to `endstream`, whatever `/Length` says); `None`
/// where no object starts there, or the object (up to `endobj`, within 64 KiB) has no
/// stream.
fn raw_stream_at<'a>(bytes: &'a [u8], at: usize, ends: &Ends) -> Option<(&'a [u8], &'a [u8])> {
    let b = &bytes[at..];
    let lead = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    let mut words = b[lead..b.len().min(lead + 48)].split(|c| c.is_ascii_whitespace()).filter(|w| !w.is_empty());
    let numbers = |w: Option<&[u8]>| w.is_some_and(|w| w.iter().all(u8::is_ascii_digit));
    if !numbers(words.next()) || !numbers(words.next()) || !words.next()?.starts_with(b"obj") {
        return None;
    }
    let head = &b[..b.len().min(64 << 10)];
    let obj = find_all(head, b"obj").next()?;
    let own = find_all(&head[obj..], b"endobj").next().map_or(head.len(), |e| obj + e);
    let kw = obj + find_all(&head[obj..own], b"stream").next()?;
    let start = data_start(bytes, at + kw);
    Some((&head[obj + 3..kw], &bytes[start..ends.after(start, bytes.len())]))
}

fn parse_dict(text: &[u8]) -> Option<Dictionary> {
    // lopdf's own parser, through a one-operator content stream (`/P <<…>> BDC` takes a
    // dictionary operand): names and nesting are read as lopdf reads them.
    let ops = pdf_extract::content::Content::decode(&[b"/P ", text, b" BDC"].concat()).ok()?;
    let op = ops.operations.into_iter().next()?;
    op.operands.into_iter().find_map(|o| o.as_dict().ok().cloned())
}

thread_local! {
    /// What is left of the budget while [`load`] runs on this thread, and whether a stream
    /// went past it.
    static LEFT: Cell<(u64, bool)> = const { Cell::new((0, false)) };
}

/// `Document::load_mem`, measuring each stream object as lopdf reads it (see the module
/// doc). An encrypted file's objects are not filtered by lopdf: its object streams are
/// bounded by their stored size first ([`check_encrypted_object_streams`]), and
/// [`check_loaded`] measures the rest after decryption.
pub(crate) fn load(bytes: &[u8], limits: &Limits) -> Result<std::result::Result<Document, pdf_extract::Error>> {
    if find_all(bytes, b"/Encrypt").next().is_some() {
        check_encrypted_object_streams(bytes, limits)?;
    }
    fn measure(id: (u32, u16), obj: &mut Object) -> Option<((u32, u16), Object)> {
        if let Object::Stream(s) = obj {
            if !is_image(&s.dict) {
                let (left, over) = LEFT.get();
                match decoded_len(&s.dict, &s.content, left) {
                    Some(n) if !over => LEFT.set((left - n, false)),
                    _ => {
                        LEFT.set((0, true));
                        return None;
                    }
                }
            }
        }
        // lopdf keeps its own `obj` for an object read from the file and takes the returned
        // one for an object inside an object stream (never a stream).
        match obj {
            Object::Stream(_) => Some((id, Object::Null)),
            other => Some((id, other.clone())),
        }
    }
    LEFT.set((limits.max_decompressed, false));
    let options = pdf_extract::LoadOptions { filter: Some(measure), ..Default::default() };
    let doc = Document::load_mem_with_options(bytes, options);
    if LEFT.get().1 {
        return Err(too_large(limits));
    }
    Ok(doc)
}

/// Most a stream can grow through its filters: deflate's 1032 to 1, LZW's 4096 bytes a
/// 9-bit code at best, ASCII85's `z`.
fn most_growth(dict: &Dictionary) -> u64 {
    filter_names(dict.get(b"Filter").ok()).iter().fold(1u64, |g, f| match f.as_slice() {
        b"FlateDecode" | b"Fl" => g.saturating_mul(1032),
        b"LZWDecode" | b"LZW" => g.saturating_mul(4096),
        b"ASCII85Decode" | b"A85" => g.saturating_mul(4),
        _ => g,
    })
}

/// An encrypted file's object streams are decrypted and expanded by lopdf before anything
/// can measure them: one whose stored size times its filters' [`most_growth`] passes the
/// budget is refused. (A usual object stream holds tens of kilobytes.)
fn check_encrypted_object_streams(bytes: &[u8], limits: &Limits) -> Result<()> {
    let ends = Ends::of(bytes);
    // A stream's dictionary lies after the `endstream` before it: looking back no further,
    // each byte is looked at once.
    let mut previous = 0;
    for at in find_all(bytes, b"stream") {
        let after = bytes.get(at + 6).copied();
        let before = bytes[..at].iter().rev().find(|c| !c.is_ascii_whitespace()).copied();
        let from = at.saturating_sub(64 << 10).max(previous);
        if at >= 3 && &bytes[at - 3..at] == b"end" {
            previous = at;
            continue;
        }
        if !matches!(after, Some(b'\r' | b'\n')) || before != Some(b'>') {
            continue;
        }
        let Some(obj) = bytes[from..at].windows(3).rposition(|w| w == b"obj").map(|i| from + i) else { continue };
        let Some(dict) = parse_dict(&bytes[obj + 3..at]) else { continue };
        if !dict.has_type(b"ObjStm") {
            continue;
        }
        let start = data_start(bytes, at);
        let stored = ends.after(start, bytes.len()) - start;
        if (stored as u64).saturating_mul(most_growth(&dict)) > limits.max_decompressed {
            return Err(ReadError::TooLarge(format!(
                "an object stream of this encrypted PDF could inflate past the {} MiB allowed; save an \
                 unencrypted copy and index that",
                limits.max_decompressed >> 20
            )));
        }
    }
    Ok(())
}

fn too_large(limits: &Limits) -> ReadError {
    ReadError::TooLarge(format!("its streams inflate past the {} MiB allowed", limits.max_decompressed >> 20))
}

fn is_image(dict: &Dictionary) -> bool {
    dict.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Image".as_slice())
}

/// Measures the streams of a loaded encrypted file (lopdf skipped the filter for it).
pub(crate) fn check_loaded(doc: &Document, limits: &Limits) -> Result<()> {
    let mut left = limits.max_decompressed;
    for obj in doc.objects.values() {
        let Object::Stream(s) = obj else { continue };
        if is_image(&s.dict) {
            continue;
        }
        left -= decoded_len(&s.dict, &s.content, left).ok_or_else(|| too_large(limits))?;
    }
    Ok(())
}

/// Decoded bytes of `stream`, bounded by `budget` (`None` past it, or when it is no stream).
pub(crate) fn stream_len(doc: &Document, id: ObjectId, budget: u64) -> Option<u64> {
    let s = doc.get_object(id).and_then(Object::as_stream).ok()?;
    decoded_len(&s.dict, &s.content, budget)
}

/// Decoded bytes of a page's content streams, if within `budget`.
pub(crate) fn page_work(doc: &Document, page: ObjectId, budget: u64) -> Option<u64> {
    let mut total = 0u64;
    for id in doc.get_page_contents(page) {
        total += stream_len(doc, id, budget - total)?;
    }
    Some(total)
}
