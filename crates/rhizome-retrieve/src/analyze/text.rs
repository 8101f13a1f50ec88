//! Tokens, names and key terms of a question, for the rules.

use super::cues::cues;
use super::lang::{fold, is_han, VI_PLAIN};
use super::Lang;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Letters and digits (Latin script, diacritics kept), with inner `'`, `’` and `-`.
    Word,
    /// One Han character.
    Han,
    /// Any other visible character.
    Punct,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Tok<'a> {
    pub text: &'a str,
    pub start: usize,
    pub kind: Kind,
}

impl Tok<'_> {
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }
    pub fn lower(&self) -> String {
        self.text.to_lowercase()
    }
}

fn is_word_char(c: char) -> bool {
    (c.is_alphanumeric() && !is_han(c)) || ('\u{0300}'..='\u{036F}').contains(&c)
}

/// The tokens of `s`, in order; whitespace is dropped.
pub(crate) fn tokens(s: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if is_word_char(c) {
            let mut j = i + 1;
            while j < chars.len() {
                let d = chars[j].1;
                let inner = matches!(d, '\'' | '’' | '-') && chars.get(j + 1).is_some_and(|n| is_word_char(n.1));
                if is_word_char(d) || inner {
                    j += 1;
                } else {
                    break;
                }
            }
            let end = chars.get(j).map(|x| x.0).unwrap_or(s.len());
            out.push(Tok { text: &s[start..end], start, kind: Kind::Word });
            i = j;
            continue;
        }
        let end = start + c.len_utf8();
        let kind = if is_han(c) { Kind::Han } else { Kind::Punct };
        out.push(Tok { text: &s[start..end], start, kind });
        i += 1;
    }
    out
}

/// Lowercased words joined by single spaces, with a space at both ends, so that
/// `contains(" cue ")` matches whole words; possessive `'s` is split off as its own word.
pub(crate) fn spaced(toks: &[Tok]) -> String {
    let mut out = String::from(" ");
    for t in toks.iter().filter(|t| t.kind == Kind::Word) {
        let w = t.lower();
        match strip_possessive(&w) {
            Some(base) => out.push_str(&format!("{base} 's ")),
            None => {
                out.push_str(&w);
                out.push(' ');
            }
        }
    }
    out
}

/// `Altman's` -> `Altman`.
pub(crate) fn strip_possessive(w: &str) -> Option<&str> {
    w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).filter(|b| !b.is_empty())
}

/// True when `text` contains `cue`: as a substring for Han cues, else as whole words
/// (for Vietnamese also with diacritics stripped on both sides).
pub(crate) fn has_cue(sp: &str, folded: &str, raw: &str, cue: &str) -> bool {
    if cue.chars().any(is_han) {
        return raw.contains(cue);
    }
    let c = format!(" {} ", cue.to_lowercase());
    sp.contains(&c) || (!folded.is_empty() && folded.contains(&fold(&c)))
}

/// A name found in the text: a run of capitalised words (or a quoted term).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub words: usize,
}

const CONNECTORS: &[&str] = &["de", "van", "von", "der", "den", "da", "di", "du", "bin", "ibn", "al", "la", "le", "y"];

fn is_capitalised(w: &str) -> bool {
    let mut cs = w.chars();
    let first = cs.next().unwrap_or(' ');
    first.is_uppercase() || (first.is_alphabetic() && w.chars().skip(1).any(char::is_uppercase))
}

fn is_function(lang: Lang, lower: &str) -> bool {
    cues(Lang::En).function.contains(&lower) || cues(lang).function.contains(&lower)
}

/// Names in `s`: runs of capitalised words (inner connectors such as `van`, `de` kept,
/// digits allowed after the first word), without leading question words or auxiliaries
/// (`Who`, `Is`, `Tại`...); in Vietnamese a sentence-initial single word with diacritics
/// or that is a common syllable is not a name. Quoted terms are names too.
pub(crate) fn names(s: &str, lang: Lang) -> Vec<Span> {
    let toks = tokens(s);
    let mut out = quoted(s);
    let quotes = out.clone();
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        if t.kind != Kind::Word || !is_capitalised(t.text) {
            i += 1;
            continue;
        }
        let sentence_start =
            i == 0 || matches!(toks[i - 1].text, "." | "?" | "!" | "。" | "？" | "！" | ":" | "：" | "\"" | "“");
        let mut j = i + 1;
        let mut last = i;
        let mut possessive_end = strip_possessive(t.text).is_some();
        while j < toks.len() && !possessive_end {
            let u = toks[j];
            if u.kind != Kind::Word {
                break;
            }
            let lower = u.lower();
            if is_capitalised(u.text) {
                last = j;
                possessive_end = strip_possessive(u.text).is_some();
            } else if u.text.chars().all(|c| c.is_ascii_digit()) {
                last = j;
            } else if CONNECTORS.contains(&lower.as_str())
                && toks.get(j + 1).is_some_and(|n| n.kind == Kind::Word && is_capitalised(n.text))
            {
                // kept only if a capitalised word follows (checked on the next turn)
            } else {
                break;
            }
            j += 1;
        }
        let mut words: Vec<Tok> = toks[i..=last].to_vec();
        while let Some(f) = words.first() {
            if is_function(lang, &f.lower()) || f.text.chars().all(|c| c.is_ascii_digit()) {
                words.remove(0);
            } else {
                break;
            }
        }
        // Vietnamese capitalises the first syllable of a sentence: alone, it is a name only
        // if it looks foreign (no diacritics, not a common syllable).
        let single_common = words.len() == 1
            && sentence_start
            && words[0].start == t.start
            && lang == Lang::Vi
            && (fold(words[0].text) != words[0].text.to_lowercase()
                || VI_PLAIN.contains(&fold(words[0].text).as_str()));
        if let (Some(f), Some(l)) = (words.first(), words.last()) {
            let in_quote = quotes.iter().any(|q| f.start >= q.start && f.start < q.end);
            if !single_common && !in_quote {
                let end = strip_possessive(l.text).map(|b| l.start + b.len()).unwrap_or(l.end());
                out.push(Span { text: s[f.start..end].to_string(), start: f.start, end, words: words.len() });
            }
        }
        i = last + 1;
    }
    out.sort_by_key(|n| n.start);
    out
}

/// Quoted terms (straight, curly, guillemets and CJK brackets), at most 60 characters.
fn quoted(s: &str) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    for (open, close) in [('"', '"'), ('“', '”'), ('《', '》'), ('「', '」'), ('«', '»')] {
        let mut from = 0;
        while let Some(a) = s[from..].find(open).map(|x| x + from) {
            let body = a + open.len_utf8();
            let Some(b) = s[body..].find(close).map(|x| x + body) else { break };
            let inner = s[body..b].trim();
            if !inner.is_empty() && inner.chars().count() <= 60 && !out.iter().any(|n: &Span| n.text == inner) {
                out.push(Span {
                    text: inner.to_string(),
                    start: body,
                    end: b,
                    words: inner.split_whitespace().count(),
                });
            }
            from = b + close.len_utf8();
        }
    }
    out
}

/// Key terms of `s` that are not names: runs of content words (English: up to three words
/// of three letters or more; Vietnamese: up to four syllables), Chinese character runs
/// split at function words and cues (two characters or more), and years.
pub(crate) fn terms(s: &str, lang: Lang, names: &[Span], skip: &dyn Fn(&str) -> bool) -> Vec<String> {
    let toks = tokens(s);
    let inside = |t: &Tok| names.iter().any(|n| t.start >= n.start && t.start < n.end.max(n.start + 1));
    let max_run = if lang == Lang::Vi { 4 } else { 3 };
    let mut out = Vec::new();
    let mut run: Vec<Tok> = Vec::new();
    let mut han = String::new();
    let flush = |run: &mut Vec<Tok>, out: &mut Vec<String>| {
        if let (Some(f), Some(l)) = (run.first(), run.last()) {
            out.push(s[f.start..l.end()].to_string());
        }
        run.clear();
    };
    for t in &toks {
        if t.kind == Kind::Han && !inside(t) {
            flush(&mut run, &mut out);
            han.push_str(t.text);
            continue;
        }
        split_han(&han, lang, skip, &mut out);
        han.clear();
        let lower = t.lower();
        let word = strip_possessive(&lower).unwrap_or(&lower).to_string();
        let year = word.len() == 4 && word.chars().all(|c| c.is_ascii_digit());
        let content = t.kind == Kind::Word
            && !inside(t)
            && !is_function(lang, &word)
            && !skip(&word)
            && !is_capitalised(t.text)
            && (lang == Lang::Vi || word.chars().count() >= 3)
            && !word.chars().all(|c| c.is_ascii_digit());
        if year && !inside(t) {
            flush(&mut run, &mut out);
            out.push(word);
        } else if content {
            run.push(*t);
            if strip_possessive(t.text).is_some() || run.len() >= max_run {
                flush(&mut run, &mut out);
            }
        } else {
            flush(&mut run, &mut out);
        }
    }
    flush(&mut run, &mut out);
    split_han(&han, lang, skip, &mut out);
    out.into_iter().map(|t| t.trim_end_matches(['\'', '’']).to_string()).collect()
}

/// Pieces of a Han run between function words and cues, two characters or more.
fn split_han(run: &str, lang: Lang, skip: &dyn Fn(&str) -> bool, out: &mut Vec<String>) {
    if run.is_empty() {
        return;
    }
    let mut stops: Vec<&str> = cues(Lang::Zh).function.to_vec();
    if lang != Lang::Zh {
        stops.extend(cues(lang).function);
    }
    stops.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    let mut piece = String::new();
    let mut rest = run;
    while let Some(c) = rest.chars().next() {
        if let Some(stop) = stops.iter().find(|w| rest.starts_with(**w)).filter(|w| w.chars().any(is_han)) {
            push_piece(&mut piece, skip, out);
            rest = &rest[stop.len()..];
            continue;
        }
        piece.push(c);
        rest = &rest[c.len_utf8()..];
    }
    push_piece(&mut piece, skip, out);
}

fn push_piece(piece: &mut String, skip: &dyn Fn(&str) -> bool, out: &mut Vec<String>) {
    if piece.chars().count() >= 2 && !skip(piece) {
        out.push(piece.clone());
    }
    piece.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(v: Vec<Span>) -> Vec<String> {
        v.into_iter().map(|n| n.text).collect()
    }

    #[test]
    fn names_in_three_languages() {
        let no = |_: &str| false;
        assert_eq!(texts(names("Who is Aage Bohr's brother?", Lang::En)), ["Aage Bohr"]);
        assert_eq!(
            texts(names("Is Ludwig van Beethoven older than GPT-4?", Lang::En)),
            ["Ludwig van Beethoven", "GPT-4"]
        );
        assert_eq!(texts(names("Aage Bohr có những giải thưởng gì?", Lang::Vi)), ["Aage Bohr"]);
        assert_eq!(texts(names("Công ty nào do Sam Altman lãnh đạo?", Lang::Vi)), ["Sam Altman"]);
        let zh = "Sam Altman领导的公司在AI领域有什么重要投资？";
        let n = names(zh, Lang::Zh);
        assert_eq!(texts(n.clone()), ["Sam Altman", "AI"]);
        assert_eq!(terms(zh, Lang::Zh, &n, &no), ["领导", "公司", "领域", "重要投资"]);
        let vi = "Aage Bohr có những giải thưởng gì?";
        assert_eq!(terms(vi, Lang::Vi, &names(vi, Lang::Vi), &no), ["giải thưởng"]);
        let en = "Which Nobel prizes did the physicist win in 1975?";
        assert_eq!(terms(en, Lang::En, &names(en, Lang::En), &no), ["prizes", "physicist win", "1975"]);
        assert_eq!(texts(names("What is “The Old Man and the Sea” about?", Lang::En)), ["The Old Man and the Sea"]);
    }
}
