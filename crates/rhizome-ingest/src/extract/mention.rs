//! A mention: an entity-like span of a sentence, and how a detector claims one. Every
//! span detector (`spans`, `chinese`, `zh_tags`) stands on this file.

use super::tokens::Sent;

/// An entity-like span of a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// Byte offset of the span in the sentence.
    pub start: usize,
    /// Byte offset just past the span.
    pub end: usize,
    /// Surface form, whitespace collapsed.
    pub name: String,
    /// PERSON, ORGANIZATION, LOCATION, DATE, NUMBER, MONEY, CONCEPT or ENTITY.
    pub entity_type: &'static str,
    /// A single capitalised word opening the sentence (possibly an ordinary word).
    pub initial_word: bool,
}

/// Claims tokens `a..b` (exclusive) as a mention of type `ty`.
pub(crate) fn push(s: &mut Sent, out: &mut Vec<Mention>, a: usize, b: usize, ty: &'static str) {
    let (start, end) = s.bytes(a, b);
    s.take(a, b);
    out.push(Mention { start, end, name: collapse(&s.text[start..end]), entity_type: ty, initial_word: false });
}

/// Whitespace runs collapsed to single spaces.
pub(crate) fn collapse(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}
