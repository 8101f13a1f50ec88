//! One sentence as tokens, with the bookkeeping the detectors share.

use rhizome_core::text::{is_cjk, token_spans};

/// A sentence split into chunking tokens ([`token_spans`]); tokens claimed by a detector
/// are `taken` so later detectors skip them. Gaps between tokens are whitespace only.
pub(crate) struct Sent<'a> {
    pub text: &'a str,
    pub toks: Vec<(usize, usize)>,
    /// Lowercased token texts.
    pub low: Vec<String>,
    pub taken: Vec<bool>,
    /// Index of the first alphanumeric token (where the sentence "starts").
    pub first_word: usize,
}

impl<'a> Sent<'a> {
    pub fn new(text: &'a str) -> Self {
        let toks = token_spans(text);
        let low: Vec<String> = toks.iter().map(|&(a, b)| text[a..b].to_lowercase()).collect();
        let first_word = toks.iter().position(|&(a, b)| text[a..b].chars().any(char::is_alphanumeric)).unwrap_or(0);
        let taken = vec![false; toks.len()];
        Sent { text, toks, low, taken, first_word }
    }

    pub fn len(&self) -> usize {
        self.toks.len()
    }

    /// Text of token `i` ("" past the end).
    pub fn tok(&self, i: usize) -> &'a str {
        self.toks.get(i).map_or("", |&(a, b)| &self.text[a..b])
    }

    /// Lowercased text of token `i` ("" past the end).
    pub fn lower(&self, i: usize) -> &str {
        self.low.get(i).map_or("", String::as_str)
    }

    /// Token `i` exists and is not claimed yet.
    pub fn free(&self, i: usize) -> bool {
        i < self.toks.len() && !self.taken[i]
    }

    /// Tokens `a..b` (exclusive) all free.
    pub fn all_free(&self, a: usize, b: usize) -> bool {
        b <= self.toks.len() && (a..b).all(|i| !self.taken[i])
    }

    /// Claims tokens `a..b` (exclusive).
    pub fn take(&mut self, a: usize, b: usize) {
        for t in &mut self.taken[a..b.min(self.toks.len())] {
            *t = true;
        }
    }

    /// Token `i` directly follows token `i-1` (no whitespace between).
    pub fn adjacent(&self, i: usize) -> bool {
        i > 0 && i < self.toks.len() && self.toks[i - 1].1 == self.toks[i].0
    }

    /// Token `i` is separated from token `i-1` by whitespace without a line break.
    pub fn spaced(&self, i: usize) -> bool {
        i > 0
            && i < self.toks.len()
            && self.toks[i - 1].1 < self.toks[i].0
            && !self.text[self.toks[i - 1].1..self.toks[i].0].contains('\n')
    }

    /// A capitalised word: starts with an uppercase letter ("Ørsted", "Đà", "GPT"), or is
    /// a camel-case word like "iPhone".
    pub fn is_cap(&self, i: usize) -> bool {
        let t = self.tok(i);
        let mut cs = t.chars();
        match cs.next() {
            Some(c) if c.is_uppercase() => true,
            Some(c) if c.is_lowercase() => t.chars().count() >= 3 && cs.any(char::is_uppercase),
            _ => false,
        }
    }

    /// A word starting with a lowercase letter.
    pub fn is_lower_word(&self, i: usize) -> bool {
        self.tok(i).chars().next().is_some_and(char::is_lowercase)
    }

    /// Only ASCII digits.
    pub fn is_digits(&self, i: usize) -> bool {
        let t = self.tok(i);
        !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
    }

    /// A number: starts with a digit, then digits and `,` `.` separators ("1,000", "1.355").
    pub fn is_number(&self, i: usize) -> bool {
        let t = self.tok(i);
        t.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && t.bytes().all(|b| b.is_ascii_digit() || b == b',' || b == b'.')
    }

    /// A 4-digit year 1000..=2100, optionally a decade ("1940s").
    pub fn is_year(&self, i: usize) -> bool {
        let t = self.tok(i);
        let digits = t.strip_suffix('s').unwrap_or(t);
        digits.len() == 4
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (1000..=2100).contains(&digits.parse::<u32>().unwrap_or(0))
    }

    /// A CJK character token.
    pub fn is_cjk(&self, i: usize) -> bool {
        self.tok(i).chars().next().is_some_and(is_cjk)
    }

    /// Byte range of tokens `a..b` (exclusive).
    pub fn bytes(&self, a: usize, b: usize) -> (usize, usize) {
        (self.toks[a].0, self.toks[b - 1].1)
    }

    /// Token index range `(a, b)` (exclusive) of the tokens inside bytes `start..end`.
    pub fn tokens_in(&self, start: usize, end: usize) -> (usize, usize) {
        let a = self.toks.partition_point(|t| t.0 < start);
        let b = self.toks.partition_point(|t| t.1 <= end);
        (a, b.max(a))
    }

    /// Concatenated text of consecutive adjacent CJK tokens from `i`, up to `max` chars.
    pub fn cjk_run(&self, i: usize, max: usize) -> String {
        let mut s = String::new();
        let mut k = i;
        while k < self.len() && s.chars().count() < max && self.is_cjk(k) && (k == i || self.adjacent(k)) {
            s.push_str(self.tok(k));
            k += 1;
        }
        s
    }
}
