//! Mutations: a seed input is changed by a few byte- and token-level edits (flip,
//! overwrite, insert, delete, duplicate, splice with another seed, format tokens from the
//! target's dictionary, deep nesting, very long lines, invalid UTF-8, non-Latin text).

use crate::rng::Rng;

/// Tokens every text format meets: markup, JSON, CSV, Markdown, line ends, numbers at
/// the edges of their types, and characters of the three languages the engine reads.
pub const COMMON_TOKENS: &[&str] = &[
    "<",
    "</",
    ">",
    "/>",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    "\\",
    "\\u",
    "\\ud800",
    ",",
    ":",
    ";",
    "\n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "#",
    "|",
    "-",
    "*",
    "`",
    "```",
    "=",
    "&",
    "&amp;",
    "&#",
    "&#x",
    "&#xFFFFFFFF;",
    "&#0;",
    "0",
    "-1",
    "1e999",
    "-0",
    "NaN",
    "Infinity",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967295",
    "null",
    "true",
    "false",
    "\u{0}",
    "\u{feff}",
    "\u{200b}",
    "\u{301}",
    "\u{300}",
    "Đà Nẵng",
    "Hà Nội",
    "ở",
    "北京",
    "。",
    "，",
    "“",
    "”",
    "「",
    "」",
    "…",
    "🦀",
    "A",
    "The",
    "Mr.",
    "U.S.",
    "1990",
    "$5",
    "%",
    "...",
    "?",
    "!",
    ".",
];

/// Invalid or tricky UTF-8 sequences.
const BAD_UTF8: &[&[u8]] =
    &[b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80", b"\xfe\xff"];

/// Apply 1 to 6 random edits to `data` (in place), keeping it at most `max_len` bytes.
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>, corpus: &[Vec<u8>], dict: &[&'static str], max_len: usize) {
    let most = if rng.one_in(4) { 16 } else { 4 };
    let edits = 1 + rng.below(most);
    for _ in 0..edits {
        edit(rng, data, corpus, dict, max_len);
    }
    data.truncate(max_len);
}

fn token(rng: &mut Rng, dict: &[&'static str]) -> &'static str {
    if !dict.is_empty() && rng.below(3) != 0 {
        dict[rng.below(dict.len())]
    } else {
        COMMON_TOKENS[rng.below(COMMON_TOKENS.len())]
    }
}

fn pos(rng: &mut Rng, data: &[u8]) -> usize {
    rng.below(data.len() + 1)
}

/// A range `a..b` inside `data` of at most `max` bytes, lengths skewed small.
fn range(rng: &mut Rng, data: &[u8], max: usize) -> (usize, usize) {
    let a = rng.below(data.len() + 1);
    let room = (data.len() - a).min(max);
    let len = if rng.one_in(2) { rng.below(room.min(8) + 1) } else { rng.below(room + 1) };
    (a, a + len)
}

fn edit(rng: &mut Rng, data: &mut Vec<u8>, corpus: &[Vec<u8>], dict: &[&'static str], max_len: usize) {
    match rng.below(16) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] ^= 1 << rng.below(8);
        }
        1 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] = rng.byte();
        }
        2 => {
            let at = pos(rng, data);
            let n = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.byte()).collect();
            data.splice(at..at, bytes);
        }
        3 | 4 => {
            let (a, b) = range(rng, data, 256);
            data.drain(a..b);
        }
        5 => {
            // Duplicate a span, sometimes many times (repeated records, long lines).
            let (a, b) = range(rng, data, 64);
            let times = if rng.one_in(4) { 1 + rng.below(200) } else { 1 };
            let piece = data[a..b].repeat(times);
            let at = pos(rng, data);
            if data.len() + piece.len() <= max_len * 2 {
                data.splice(at..at, piece);
            }
        }
        6..=8 => {
            let t = token(rng, dict).as_bytes().to_vec();
            let at = pos(rng, data);
            data.splice(at..at, t);
        }
        9 => {
            // Replace a span with a token.
            let t = token(rng, dict).as_bytes().to_vec();
            let (a, b) = range(rng, data, 16);
            data.splice(a..b, t);
        }
        10 => {
            if let Some(other) = rng.pick(corpus) {
                // Splice: a piece of another seed.
                let (a, b) = range(rng, other, 512);
                let piece = other[a..b].to_vec();
                let at = pos(rng, data);
                data.splice(at..at, piece);
            }
        }
        11 => {
            // Deep nesting: an opener (or opener/closer pair) repeated.
            let (open, close): (&[u8], &[u8]) = *rng
                .pick(&[
                    (&b"["[..], &b"]"[..]),
                    (b"{\"a\":", b"}"),
                    (b"<div>", b"</div>"),
                    (b"> ", b""),
                    (b"(", b")"),
                    (b"- ", b""),
                    (b"<b><i>", b""),
                    (b"\"", b"\""),
                ])
                .unwrap();
            let deepest = if rng.one_in(4) { 20_000 } else { 300 };
            let depth = 1 + rng.below(deepest);
            let closed = rng.one_in(2);
            let at = pos(rng, data);
            let mut piece = open.repeat(depth);
            if closed {
                piece.extend(close.repeat(depth));
            }
            data.splice(at..at, piece);
        }
        12 => {
            // A very long line or word.
            let b = *rng.pick(b"a. ,\"{x<-|#\t0").unwrap();
            let n = 1000 + rng.below(60_000);
            let at = pos(rng, data);
            data.splice(at..at, std::iter::repeat_n(b, n));
        }
        13 => {
            let bad = BAD_UTF8[rng.below(BAD_UTF8.len())];
            let at = pos(rng, data);
            data.splice(at..at, bad.iter().copied());
        }
        14 => {
            // Truncate (a reply or file cut off).
            let at = pos(rng, data);
            data.truncate(at);
        }
        _ => {
            // Swap two spans' order by moving one.
            let (a, b) = range(rng, data, 128);
            let piece: Vec<u8> = data.drain(a..b).collect();
            let at = pos(rng, data);
            data.splice(at..at, piece);
        }
    }
    if data.len() > max_len * 2 {
        data.truncate(max_len * 2);
    }
}
