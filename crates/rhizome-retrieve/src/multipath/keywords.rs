//! LLM-free question keywords for `multipath`, in English, Vietnamese and Chinese.
//!
//! - Capitalised phrases are kept whole ("Journal of Psychotherapy Integration",
//!   "Sam Altman"), with short lowercase connectors ("of", "the", "de") inside them. The
//!   first word of the question counts as capitalised only when a capitalised word
//!   follows it ("David Jones is...", but not "Besides the...").
//! - Other words are content words when they are not stop words
//!   ([`rhizome_core::text::is_stop_word`]); a possessive `'s` is dropped.
//! - Vietnamese (detected by its letters): consecutive lowercase content syllables form one
//!   keyword ("giải thưởng"), as Vietnamese words are written as separate syllables.
//! - Chinese (and other CJK) runs are split at stop words; pieces of two or more
//!   characters are keywords ("领导的公司" -> "领导", "公司").
//!
//! Capitalised phrases come first (they name things), then the rest in question order;
//! duplicates (case-insensitive) are dropped.

use rhizome_core::text::{is_cjk, is_stop_word, token_spans};

/// Lowercase words allowed inside a capitalised phrase when a capitalised word follows.
const CONNECTORS: &[&str] = &["of", "the", "de", "la", "le", "du", "des", "von", "van", "der", "den", "del", "y", "&"];

/// The keywords of `question`, at most `limit`.
pub(crate) fn keywords(question: &str, limit: usize) -> Vec<String> {
    let toks: Vec<Tok> = token_spans(question).into_iter().map(|(s, e)| Tok::new(question, s, e)).collect();
    let vietnamese = question.chars().any(is_vietnamese_letter);
    let mut caps: Vec<String> = Vec::new();
    let mut rest: Vec<(usize, String)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.cjk {
            let start = i;
            while i < toks.len() && toks[i].cjk && (i == start || toks[i].start == toks[i - 1].end) {
                i += 1;
            }
            let run: Vec<&str> = toks[start..i].iter().map(|t| t.text).collect();
            for piece in split_cjk(&run) {
                rest.push((start, piece));
            }
            continue;
        }
        if starts_phrase(&toks, i) {
            let end = phrase_end(&toks, i);
            let text = strip_possessive(&question[toks[i].start..toks[end - 1].end]);
            caps.push(text.to_string());
            i = end;
            continue;
        }
        if t.word && !is_stop_word(&t.lower) {
            if vietnamese && !t.upper {
                // Join the following lowercase content syllables (same phrase, spaces only).
                let start = i;
                let mut j = i + 1;
                while j < toks.len()
                    && toks[j].word
                    && !toks[j].upper
                    && !toks[j].cjk
                    && !is_stop_word(&toks[j].lower)
                    && only_space(question, toks[j - 1].end, toks[j].start)
                {
                    j += 1;
                }
                rest.push((start, question[toks[start].start..toks[j - 1].end].to_lowercase()));
                i = j;
                continue;
            }
            let w = strip_possessive(&t.lower);
            if w.chars().count() >= 2 || w.chars().all(|c| c.is_ascii_digit()) {
                rest.push((i, w.to_string()));
            }
        }
        i += 1;
    }
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for k in caps.into_iter().chain(rest.into_iter().map(|x| x.1)) {
        let k = k.trim().to_string();
        if !k.is_empty() && seen.insert(k.to_lowercase()) {
            out.push(k);
        }
        if out.len() >= limit {
            break;
        }
    }
    out
}

struct Tok<'a> {
    text: &'a str,
    lower: String,
    start: usize,
    end: usize,
    /// Contains a letter or digit.
    word: bool,
    /// Starts with an uppercase letter (or is a number inside a phrase, checked separately).
    upper: bool,
    cjk: bool,
}

impl<'a> Tok<'a> {
    fn new(s: &'a str, start: usize, end: usize) -> Self {
        let text = &s[start..end];
        let first = text.chars().next().unwrap_or(' ');
        Tok {
            text,
            lower: text.to_lowercase(),
            start,
            end,
            word: text.chars().any(char::is_alphanumeric),
            upper: first.is_uppercase(),
            cjk: is_cjk(first),
        }
    }
}

/// True when a capitalised phrase starts at token `i`.
fn starts_phrase(toks: &[Tok], i: usize) -> bool {
    let t = &toks[i];
    // An acronym is a name even when it spells a stop word ("AI" is Vietnamese "who").
    let acronym = t.text.chars().filter(|c| c.is_alphabetic()).count() >= 2 && !t.text.chars().any(char::is_lowercase);
    if !t.upper || t.cjk || (is_stop_word(&t.lower) && !acronym) {
        return false;
    }
    if i > 0 {
        return true;
    }
    // Sentence-initial capital: a name only if the phrase goes on.
    phrase_end(toks, i) > i + 1
}

/// One past the last token of the capitalised phrase starting at `i`.
fn phrase_end(toks: &[Tok], i: usize) -> usize {
    let mut end = i + 1;
    let mut j = i + 1;
    while j < toks.len() {
        let t = &toks[j];
        let joined = t.start == toks[j - 1].end;
        if t.cjk {
            break;
        }
        if t.upper || (t.word && t.lower.chars().all(|c| c.is_ascii_digit()) && !joined) {
            end = j + 1;
            j += 1;
            continue;
        }
        // Hyphens and apostrophes written without spaces ("KAGH-FM", "O'Brien") and
        // lowercase connectors continue the phrase if a capitalised word follows.
        let bridge = (!t.word && joined && matches!(t.text, "-" | "'" | "’" | "." | "&"))
            || (t.word && CONNECTORS.contains(&t.lower.as_str()));
        if bridge && toks.get(j + 1).is_some_and(|n| n.upper && !n.cjk) {
            j += 1;
            continue;
        }
        break;
    }
    end
}

fn only_space(s: &str, a: usize, b: usize) -> bool {
    s[a..b].chars().all(char::is_whitespace) && b > a
}

fn strip_possessive(s: &str) -> &str {
    s.strip_suffix("'s").or_else(|| s.strip_suffix("’s")).unwrap_or(s)
}

/// Letters found in Vietnamese but not in English (precomposed forms).
fn is_vietnamese_letter(c: char) -> bool {
    matches!(c, 'đ' | 'Đ' | 'ă' | 'Ă' | 'ơ' | 'Ơ' | 'ư' | 'Ư') || ('\u{1EA0}'..='\u{1EF9}').contains(&c)
}

/// Split a CJK run (one string per character) at stop words; keep pieces of 2+ chars.
fn split_cjk(chars: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut k = 0;
    while k < chars.len() {
        let two = chars.get(k + 1).map(|n| format!("{}{n}", chars[k]));
        let skip = if two.as_deref().is_some_and(is_stop_word) {
            2
        } else if is_stop_word(chars[k]) {
            1
        } else {
            0
        };
        if skip > 0 {
            if cur.chars().count() >= 2 {
                out.push(std::mem::take(&mut cur));
            }
            cur.clear();
            k += skip;
            continue;
        }
        cur.push_str(chars[k]);
        k += 1;
    }
    if cur.chars().count() >= 2 {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::keywords;

    #[test]
    fn english_phrases_whole() {
        let k = keywords(
            "Who was the first president of the association which published Journal of Psychotherapy Integration?",
            10,
        );
        assert_eq!(k[0], "Journal of Psychotherapy Integration");
        assert!(k.contains(&"president".to_string()) && k.contains(&"association".to_string()), "{k:?}");
        assert!(!k.iter().any(|w| w == "the" || w == "who"), "{k:?}");
        let k = keywords("How many Publix stores are in the state where Hello Love's performer lived?", 10);
        assert_eq!(&k[..2], ["Publix", "Hello Love"]);
        let k = keywords("David Jones is an international in rugby union", 10);
        assert_eq!(k[0], "David Jones");
        let k = keywords("Besides the continent of the river, where?", 10);
        assert_eq!(k, ["besides", "continent", "river"]);
        let k = keywords("In which country is KAGH-FM?", 10);
        assert_eq!(k, ["KAGH-FM", "country"]);
    }

    #[test]
    fn vietnamese_and_chinese() {
        assert_eq!(keywords("Aage Bohr có những giải thưởng gì?", 10), ["Aage Bohr", "giải thưởng"]);
        let k = keywords("Sam Altman领导的公司在AI领域有什么重要投资？", 10);
        assert_eq!(k, ["Sam Altman", "AI", "领导", "公司", "领域", "重要投资"]);
    }

    #[test]
    fn limit_and_dedup() {
        assert_eq!(keywords("delta alpha beta alpha gamma", 3), ["delta", "alpha", "beta"]);
        assert_eq!(keywords("the river Nile and nile", 10), ["Nile", "river"]);
        assert!(keywords("", 10).is_empty());
        assert!(keywords("?!", 10).is_empty());
    }
}
