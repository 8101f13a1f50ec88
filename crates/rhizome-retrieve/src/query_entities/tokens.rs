//! A question as tokens (words, numbers, CJK characters, with their byte spans), and the
//! folding that compares names as people type them.

use rhizome_core::text::{fold_diacritics, is_cjk, is_stop_word};

/// Case, diacritics and punctuation folded away, for comparing names as typed by people:
/// lowercase, diacritics removed ([`fold_diacritics`]: `đ` -> `d`), any other
/// non-alphanumeric character a single space, no space next to a CJK character.
pub(crate) fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in fold_diacritics(s).chars() {
        if c.is_alphanumeric() {
            let last_cjk = out.chars().next_back().is_some_and(is_cjk);
            if space && !out.is_empty() && !is_cjk(c) && !last_cjk {
                out.push(' ');
            }
            out.push(c);
            space = false;
        } else {
            space = true;
        }
    }
    out
}

/// A question token: a word, a number or one CJK character, with its byte span.
pub(super) struct Token {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) folded: String,
    pub(super) cjk: bool,
    pub(super) capital: bool,
    pub(super) number: bool,
    pub(super) stop: bool,
}

pub(super) fn tokens(q: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word: Option<usize> = None;
    let flush = |out: &mut Vec<Token>, s: usize, e: usize| {
        let w = &q[s..e];
        out.push(Token {
            start: s,
            end: e,
            folded: fold(w),
            cjk: false,
            capital: w.chars().next().is_some_and(char::is_uppercase),
            number: w.chars().all(|c| c.is_numeric()),
            stop: is_stop_word(&w.to_lowercase()),
        });
    };
    for (i, c) in q.char_indices() {
        if c.is_alphanumeric() && !is_cjk(c) {
            word.get_or_insert(i);
            continue;
        }
        if let Some(s) = word.take() {
            flush(&mut out, s, i);
        }
        if is_cjk(c) {
            let t = c.to_string();
            out.push(Token {
                start: i,
                end: i + c.len_utf8(),
                stop: is_stop_word(&t),
                folded: t,
                cjk: true,
                capital: false,
                number: false,
            });
        }
    }
    if let Some(s) = word {
        flush(&mut out, s, q.len());
    }
    out
}

/// Tokens `a` and `b` (a before b) belong to one name when only spaces, hyphens,
/// apostrophes, periods or `&` stand between them.
pub(super) fn joined(q: &str, a: &Token, b: &Token) -> bool {
    q[a.end..b.start].chars().all(|c| c.is_whitespace() || "-'’.&".contains(c))
}
