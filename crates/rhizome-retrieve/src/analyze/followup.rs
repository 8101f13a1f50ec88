//! Follow-up questions, by rule: a pronoun with nothing to refer to in the question
//! ("What about his brother?"), an elliptical opener or closer ("What about Niels Bohr?",
//! "Còn Niels Bohr thì sao?", "那Elon Musk呢？") or a very short question without a name,
//! resolved against the last turns of the history.
//!
//! - Pronouns take the name they most likely refer to: for a person pronoun (he, his, ông
//!   ấy, 他...) the first name of two words or more in the last user turn, then in the last
//!   assistant turn (then any name there); for other pronouns (it, they, nó, 它...) the
//!   first name of the last user turn, then of the last assistant turn. Earlier turns are
//!   searched after those, newest first. "his brother" -> "Aage Bohr's brother".
//! - An elliptical question naming something new takes the previous question with its
//!   first name replaced: "When was Aage Bohr born?" + "What about Niels Bohr?" ->
//!   "When was Niels Bohr born?".
//! - Anything else recognised as a follow-up gets the previous question in front of it.

use rhizome_core::llm::{ChatMessage, Role};

use super::cues::cues;
use super::lang::{detect_language, is_han};
use super::text::{names, spaced, tokens, Kind, Span};
use super::Lang;

/// A follow-up decision and the question to use.
#[derive(Debug, Clone)]
pub(crate) struct Rewrite {
    pub is_follow_up: bool,
    pub standalone: String,
    pub notes: Vec<String>,
    pub cues: Vec<String>,
}

impl Rewrite {
    pub fn unchanged(q: &str) -> Self {
        Rewrite { is_follow_up: false, standalone: q.to_string(), notes: Vec::new(), cues: Vec::new() }
    }
}

/// A pronoun occurrence with nothing in the question to refer to.
#[derive(Debug)]
struct Pronoun {
    start: usize,
    end: usize,
    text: String,
    person: bool,
    possessive: bool,
}

/// The user and assistant turns of the history, oldest first, without empty ones.
pub(crate) fn dialogue(history: &[ChatMessage]) -> Vec<&ChatMessage> {
    history.iter().filter(|m| m.role != Role::System && !m.content.trim().is_empty()).collect()
}

pub(crate) fn rewrite(q: &str, lang: Lang, history: &[ChatMessage]) -> Rewrite {
    let mut turns = dialogue(history);
    // The caller may have appended the question itself to the history.
    if turns.last().is_some_and(|m| m.role == Role::User && m.content.trim() == q) {
        turns.pop();
    }
    if turns.is_empty() {
        return Rewrite::unchanged(q);
    }
    let own = names(q, lang);
    let pronouns = unbound_pronouns(q, lang, &own);
    let ellipsis = elliptical(q, lang);
    let short = own.is_empty() && is_short(q);
    if pronouns.is_empty() && ellipsis.is_none() && !short {
        return Rewrite::unchanged(q);
    }
    let mut out = Rewrite { is_follow_up: true, ..Rewrite::unchanged(q) };
    let previous = turns.iter().rev().find(|m| m.role == Role::User).map(|m| m.content.trim().to_string());

    if !pronouns.is_empty() {
        let mut text = q.to_string();
        let mut resolved = 0;
        for p in pronouns.iter().rev() {
            match antecedent(&turns, p.person) {
                Some(name) => {
                    let with = if p.possessive && lang == Lang::En { format!("{name}'s") } else { name.clone() };
                    text.replace_range(p.start..p.end, &with);
                    out.cues.push(format!("follow-up: {} -> {name}", p.text));
                    resolved += 1;
                }
                None => out.notes.push(format!(
                    "follow-up: found nothing in the history that \"{}\" refers to; kept as asked",
                    p.text
                )),
            }
        }
        out.cues.reverse();
        if resolved > 0 {
            out.notes.push(format!("follow-up resolved against the history: {text:?}"));
        }
        out.standalone = text;
        return out;
    }

    let subject = ellipsis.as_deref().map(|x| (x, names(x, lang)));
    if let (Some((x, x_names)), Some(prev)) = (&subject, &previous) {
        let prev_names = names(prev, detect_language(prev));
        let target = prev_names.iter().find(|n| !x_names.iter().any(|m| m.text == n.text));
        if let (false, Some(target)) = (x_names.is_empty(), target) {
            let text = prev.replacen(&target.text, x, 1);
            out.cues.push(format!("follow-up: {} -> {x} in the previous question", target.text));
            out.notes.push(format!("follow-up: the previous question asked about {x}: {text:?}"));
            out.standalone = text;
            return out;
        }
    }
    match previous {
        Some(prev) => {
            out.standalone = format!("{prev} {q}");
            out.cues.push("follow-up: short or elliptical question".into());
            out.notes.push("follow-up with nothing to substitute: the previous question was put in front of it".into());
        }
        None => out.notes.push("follow-up, but the history has no earlier question; kept as asked".into()),
    }
    out
}

fn unbound_pronouns(q: &str, lang: Lang, own: &[Span]) -> Vec<Pronoun> {
    let c = cues(lang);
    let name_before = |at: usize| own.iter().any(|n| n.start < at);
    let bound = |person: bool, at: usize| if person { name_before(at) } else { !own.is_empty() };
    let mut out: Vec<Pronoun> = Vec::new();
    if lang == Lang::Zh {
        let mut taken: Vec<(usize, usize)> = Vec::new();
        for (list, person) in [(c.pronoun_person, true), (c.pronoun_other, false)] {
            let mut sorted = list.to_vec();
            sorted.sort_by_key(|p| std::cmp::Reverse(p.chars().count()));
            for p in sorted {
                for (at, _) in q.match_indices(p) {
                    let end = at + p.len();
                    if taken.iter().any(|&(a, b)| at < b && end > a) || bound(person, at) {
                        continue;
                    }
                    taken.push((at, end));
                    out.push(Pronoun { start: at, end, text: p.to_string(), person, possessive: false });
                }
            }
        }
        out.sort_by_key(|p| p.start);
        return out;
    }
    let toks: Vec<_> = tokens(q).into_iter().filter(|t| t.kind == Kind::Word).collect();
    let mut i = 0;
    'tok: while i < toks.len() {
        for (list, person) in [(c.pronoun_person, true), (c.pronoun_other, false)] {
            for p in list {
                let parts: Vec<&str> = p.split(' ').collect();
                let Some(window) = toks.get(i..i + parts.len()) else { continue };
                if !window.iter().zip(&parts).all(|(t, w)| t.lower() == *w) {
                    continue;
                }
                let (start, end) = (window[0].start, window[parts.len() - 1].end());
                if !bound(person, start) {
                    let next = toks.get(i + parts.len());
                    let possessive = c.pronoun_possessive.contains(p)
                        && (*p != "her"
                            || next.is_some_and(|n| !cues(Lang::En).function.contains(&n.lower().as_str())));
                    out.push(Pronoun { start, end, text: q[start..end].to_string(), person, possessive });
                }
                i += parts.len();
                continue 'tok;
            }
        }
        i += 1;
    }
    out
}

/// The subject of an elliptical follow-up ("What about X?", "Còn X thì sao?", "那X呢？"),
/// if the question is one.
fn elliptical(q: &str, lang: Lang) -> Option<String> {
    let c = cues(lang);
    let body = q.trim().trim_end_matches(['?', '？', '.', '。', '!', '！', ' ']);
    if lang == Lang::Zh {
        let inner = body.strip_suffix(c.follow_close.first()?)?;
        let inner = c.follow_open.iter().find_map(|o| inner.strip_prefix(o)).unwrap_or(inner);
        let asks = c.factual.iter().any(|w| inner.contains(w));
        return Some(inner.trim().to_string()).filter(|x| !x.is_empty() && !asks);
    }
    let lower = body.to_lowercase();
    let mut start = 0;
    let mut opened = None;
    for o in c.follow_open {
        if lower.starts_with(&format!("{o} ")) {
            start = o.len() + 1;
            opened = Some(*o);
            break;
        }
    }
    let mut end = body.len();
    let mut closed = false;
    for cl in c.follow_close {
        if lower.ends_with(&format!(" {cl}")) && lower.len() >= cl.len() + 1 + start {
            end = body.len() - cl.len() - 1;
            closed = true;
            break;
        }
    }
    let x = body.get(start..end)?.trim().trim_end_matches(',').trim().to_string();
    if x.is_empty() {
        return None;
    }
    // "And who founded OpenAI?" is a question of its own, not an ellipsis.
    let x_toks = tokens(&x);
    let folded = if lang == Lang::Vi { super::lang::fold(&spaced(&x_toks)) } else { String::new() };
    if c.factual.iter().any(|w| super::text::has_cue(&spaced(&x_toks), &folded, &x, w)) {
        return None;
    }
    // Vietnamese "còn" also means "still": only with a closer or before a bare name.
    let weak_open = lang == Lang::Vi && opened == Some("còn") && !closed;
    let bare_name = names(&x, lang).first().is_some_and(|n| n.text == x);
    let ok = match lang {
        Lang::Vi => closed || (opened.is_some() && !weak_open) || (weak_open && bare_name),
        _ => opened.is_some() && (opened != Some("and") || x.split_whitespace().count() <= 4),
    };
    ok.then_some(x)
}

/// Three words or fewer (Chinese: four characters or fewer).
fn is_short(q: &str) -> bool {
    let toks = tokens(q);
    let han = q.chars().filter(|&c| is_han(c)).count();
    let words = spaced(&toks).split_whitespace().count();
    if han > 0 {
        han <= 4 && words <= 1
    } else {
        words <= 3
    }
}

/// The name a pronoun most likely refers to (see the module docs).
/// Last words that make a capitalised name a thing rather than a person.
const THING_HEADS: &[&str] = &[
    "prize",
    "award",
    "medal",
    "institute",
    "university",
    "college",
    "school",
    "company",
    "corporation",
    "inc",
    "ltd",
    "group",
    "foundation",
    "society",
    "academy",
    "museum",
    "river",
    "mountain",
    "city",
    "state",
    "kingdom",
    "republic",
    "war",
    "party",
    "church",
    "bank",
    "hospital",
    "centre",
    "center",
    "laboratory",
    "council",
    "committee",
    "agency",
    "ministry",
    "league",
    "cup",
    "championship",
    "festival",
];

fn names_a_thing(name: &str) -> bool {
    name.split_whitespace().last().is_some_and(|w| THING_HEADS.contains(&w.to_lowercase().as_str()))
}

fn antecedent(turns: &[&ChatMessage], person: bool) -> Option<String> {
    let last_user = turns.iter().rposition(|m| m.role == Role::User);
    let last_assistant = turns.iter().rposition(|m| m.role == Role::Assistant);
    let mut order: Vec<usize> = [last_user, last_assistant].into_iter().flatten().collect();
    let rest: Vec<usize> = (0..turns.len()).rev().filter(|i| !order.contains(i)).collect();
    order.extend(rest);
    let found: Vec<Vec<Span>> =
        order.iter().map(|&i| names(&turns[i].content, detect_language(&turns[i].content))).collect();
    if person {
        // A person's name before an award's or an institution's ("Who shared the Nobel
        // Prize with Aage Bohr?" + "his father" -> Aage Bohr).
        let recent = || found.iter().take(2).flatten().filter(|n| n.words >= 2);
        let head = recent().find(|n| !names_a_thing(&n.text)).or_else(|| recent().next());
        if let Some(n) = head {
            return Some(n.text.clone());
        }
    }
    found.iter().flatten().next().map(|n| n.text.clone())
}
