//! Types for capitalised spans, from cue words inside and around them.

use super::lexicon::*;
use super::tokens::Sent;

/// Type of the capitalised span of tokens `a..=last`: ORGANIZATION (an organisation word
/// such as University, Journal, Inc, Viện, Đại học), LOCATION (a place word such as City or
/// River, a known country, or a place cue before it: "in", "at", "tại", "位于"), PERSON
/// (an honorific or title was stripped, a person cue around it, or simply 2-4 name-like
/// words), else ENTITY.
pub(crate) fn classify(s: &Sent, a: usize, last: usize, person_cue: bool) -> &'static str {
    let words: Vec<&str> = (a..=last)
        .filter(|&k| s.tok(k).chars().any(char::is_alphanumeric))
        .map(|k| s.lower(k).trim_end_matches('.'))
        .collect();
    let joined = words.join(" ");
    let head2 = words.iter().take(2).copied().collect::<Vec<_>>().join(" ");
    if words.iter().any(|w| ORG_WORDS.contains(w)) || VI_ORG_HEADS.contains(head2.as_str()) {
        return "ORGANIZATION";
    }
    if PLACES.contains(joined.as_str())
        || words.iter().any(|w| LOC_WORDS.contains(w))
        || VI_LOC_HEADS.contains(head2.as_str())
        || VI_LOC_HEADS.contains(words.first().copied().unwrap_or(""))
    {
        return "LOCATION";
    }
    if person_cue {
        return "PERSON";
    }
    let name_like = looks_like_name(s, a, last);
    if name_like && (person_before(s, a) || person_after(s, last)) {
        return "PERSON";
    }
    let before = s.text[..s.toks[a].0].trim_end();
    let place_word = a > 0 && s.spaced(a) && PLACE_BEFORE.contains(s.lower(a - 1));
    if (place_word && words.len() <= 3) || ["位于", "在", "于", "来自"].iter().any(|c| before.ends_with(c)) {
        return "LOCATION";
    }
    if name_like {
        return "PERSON";
    }
    "ENTITY"
}

/// 2-4 words, each capitalised and alphabetic, not an acronym (initials allowed), with
/// no organisation, place or title word; name particles ("van", "de") are allowed.
pub(crate) fn looks_like_name(s: &Sent, a: usize, last: usize) -> bool {
    let mut words = 0;
    for k in a..=last {
        let t = s.tok(k);
        let w = s.lower(k);
        if matches!(t, "." | "-" | "‑") || (PARTICLES.contains(w) && s.is_lower_word(k)) {
            continue;
        }
        if NON_PERSON.contains(w) || ORG_WORDS.contains(w) || LOC_WORDS.contains(w) || STARTERS.contains(w) {
            return false;
        }
        let mut cs = t.chars();
        let Some(first) = cs.next() else { return false };
        let rest: Vec<char> = cs.collect();
        let alphabetic = t.chars().all(|c| c.is_alphabetic() || c == '\'' || c == '’');
        let acronym = !rest.is_empty() && !rest.iter().any(|c| c.is_lowercase());
        if !first.is_uppercase() || !alphabetic || acronym {
            return false;
        }
        words += 1;
        if words > 4 {
            return false;
        }
    }
    words >= 2
}

/// A person cue right before token `a` (a copula or article may sit in between):
/// "psychologist Carl Rogers", "editor is Jan Philip Solovej".
fn person_before(s: &Sent, a: usize) -> bool {
    let mut k = a;
    for _ in 0..2 {
        if k == 0 || !(s.spaced(k) || s.adjacent(k)) {
            return false;
        }
        k -= 1;
        let w = s.lower(k).trim_end_matches('.');
        if PERSON_BEFORE.contains(w) {
            return true;
        }
        if !matches!(w, "is" | "was" | "the" | "a" | "an" | "named" | "called" | "by" | "là") {
            return false;
        }
    }
    false
}

/// A person cue right after token `last`: "X said", "X (born 1922)", "X was born".
fn person_after(s: &Sent, last: usize) -> bool {
    if PERSON_AFTER.contains(s.lower(last + 1)) {
        return true;
    }
    (last + 1..(last + 4).min(s.len())).any(|k| s.lower(k) == "born")
}
