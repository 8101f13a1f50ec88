//! The LLM-free recogniser: graph names, capitalised spans, Chinese proper nouns, and as a
//! last resort Chinese nouns or runs of CJK characters (rules 1 to 4 of the parent module).

use rhizome_core::text::{is_cjk, is_stop_word, zh};

use super::tokens::{fold, joined, tokens, Token};
use crate::graph::NameLookup;

/// Words that join two capitalised words of one name.
const CONNECTORS: &[&str] = &["of", "de", "du", "la", "le", "van", "von", "der", "den", "di", "da", "del", "y"];

/// The LLM-free recogniser (see the module doc).
pub(crate) fn rule_based(g: &dyn NameLookup, question: &str) -> Vec<String> {
    let toks = tokens(question);
    let caps = capitalised_spans(question, &toks);
    // A graph name cutting a capitalised span ("the World" and "Series" in "World Series")
    // gives way to the span; the first word of the question is capitalised anyway, so
    // "Describe Aage Bohr" still yields the graph name "Aage Bohr".
    let mut found: Vec<(usize, usize, String)> = graph_names(g, question, &toks);
    found.retain(|&(s, e, _)| {
        caps.iter().all(|&(cs, ce)| {
            let cs = if cs == 0 && ce > 1 { 1 } else { cs };
            e <= cs || s >= ce || (s <= cs && e >= ce)
        })
    });
    for spans in [caps, chinese_proper_nouns(question, &toks)] {
        let mut covered = vec![false; toks.len()];
        for &(s, e, _) in &found {
            covered[s..e].iter_mut().for_each(|c| *c = true);
        }
        for (s, e) in spans {
            if !covered[s..e].iter().any(|&c| c) {
                found.push((s, e, question[toks[s].start..toks[e - 1].end].to_string()));
            }
        }
    }
    if found.is_empty() {
        found = chinese_nouns(question, &toks);
    }
    if found.is_empty() {
        found = cjk_runs(question, &toks);
    }
    found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut out: Vec<String> = Vec::new();
    for (_, _, name) in found {
        if !out.iter().any(|o| fold(o) == fold(&name)) {
            out.push(name);
        }
    }
    out
}

/// Longest token runs whose folded text is an entity name of `g`, not overlapping:
/// (first token, end token, entity name); all entities sharing that folded name.
fn graph_names(g: &dyn NameLookup, q: &str, toks: &[Token]) -> Vec<(usize, usize, String)> {
    const MAX_TOKENS: usize = 12;
    // A question typed in lowercase may name things in lowercase; otherwise a name holds a
    // capitalised word, a number or CJK ("the waterfall" is not a name, "Bubye River" is).
    let cased = toks.iter().skip(1).any(|t| t.capital);
    let mut grams: std::collections::HashMap<String, Vec<(usize, usize)>> = Default::default();
    for s in 0..toks.len() {
        let mut text = String::new();
        for e in s..toks.len().min(s + MAX_TOKENS) {
            if e > s && !joined(q, &toks[e - 1], &toks[e]) && !(toks[e - 1].cjk && toks[e].cjk) {
                break;
            }
            if e > s && !toks[e].cjk && !toks[e - 1].cjk {
                text.push(' ');
            }
            text.push_str(&toks[e].folded);
            let span = &toks[s..=e];
            let content = span.iter().any(|t| !t.stop);
            let proper = span.iter().any(|t| t.cjk || t.capital || t.number);
            let common = if cased { !proper } else { span.len() == 1 && !proper };
            let number = span.iter().all(|t| t.number || t.stop);
            let cjk_char = span.len() == 1 && span[0].cjk;
            if content && !common && !number && !cjk_char && text.chars().count() >= 2 {
                grams.entry(text.clone()).or_default().push((s, e + 1));
            }
        }
    }
    let mut hits: Vec<(usize, usize, u32)> = Vec::new();
    for (gram, spans) in &grams {
        for &i in g.entities_folded(gram) {
            hits.extend(spans.iter().map(|&(s, e)| (s, e, i)));
        }
    }
    // Longest first, then leftmost; a span keeps every entity of that folded name.
    hits.sort_by(|a, b| (b.1 - b.0).cmp(&(a.1 - a.0)).then(a.0.cmp(&b.0)).then(a.2.cmp(&b.2)));
    let mut taken = vec![false; toks.len()];
    let mut out = Vec::new();
    let mut kept_span: Option<(usize, usize)> = None;
    for (s, e, ent) in hits {
        let same = kept_span == Some((s, e));
        if !same && taken[s..e].iter().any(|&t| t) {
            continue;
        }
        taken[s..e].iter_mut().for_each(|t| *t = true);
        kept_span = Some((s, e));
        out.push((s, e, g.entity_name(ent).to_string()));
    }
    out
}

/// Capitalised spans as token ranges [start, end).
fn capitalised_spans(q: &str, toks: &[Token]) -> Vec<(usize, usize)> {
    let strong = |t: &Token| !t.cjk && (t.capital || t.number);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.cjk || !t.capital || t.stop {
            i += 1;
            continue;
        }
        let mut end = i;
        // Capitalised words since the last bridge: only a single one is bridged ("Tập
        // đoàn Vingroup", "University of X"), not a full name ("Nguyễn Du viết Truyện Kiều").
        let mut run = 1;
        loop {
            let next = end + 1;
            if next < toks.len() && strong(&toks[next]) && joined(q, &toks[end], &toks[next]) {
                end = next;
                run += 1;
                continue;
            }
            let m = end + 2;
            let bridged = run == 1
                && m < toks.len()
                && !toks[end + 1].cjk
                && !toks[end + 1].capital
                && !toks[end + 1].number
                && (!toks[end + 1].stop || CONNECTORS.contains(&toks[end + 1].folded.as_str()))
                && joined(q, &toks[end], &toks[end + 1])
                && joined(q, &toks[end + 1], &toks[m])
                && toks[m].capital
                && !toks[m].stop;
            if !bridged {
                break;
            }
            end = m;
            run = 1;
        }
        out.push((i, end + 1));
        i = end + 1;
    }
    out
}

/// Chinese words of the question that jieba tags so that `keep(word, tag)` holds, as
/// token ranges [start, end). Nothing to do without Han characters.
fn chinese_words(q: &str, toks: &[Token], keep: impl Fn(&str, &str) -> bool) -> Vec<(usize, usize)> {
    if !toks.iter().any(|t| t.cjk) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for w in zh::tag(q) {
        if !w.word.chars().any(is_cjk) || !keep(w.word, w.tag) {
            continue;
        }
        let s = toks.iter().position(|t| t.start >= w.start);
        let e = toks.iter().rposition(|t| t.end <= w.end).map(|e| e + 1);
        if let (Some(s), Some(e)) = (s, e) {
            if s < e {
                out.push((s, e));
            }
        }
    }
    out
}

/// Names: person, place, organisation, other proper noun.
fn chinese_proper_nouns(q: &str, toks: &[Token]) -> Vec<(usize, usize)> {
    chinese_words(q, toks, |_, tag| matches!(tag, "nr" | "nrt" | "nrfg" | "ns" | "nt" | "nz"))
}

/// Nouns of two characters or more (the fallback when the question names nothing).
fn chinese_nouns(q: &str, toks: &[Token]) -> Vec<(usize, usize, String)> {
    chinese_words(q, toks, |w, tag| {
        tag.starts_with('n') && w.chars().filter(|&c| is_cjk(c)).count() >= 2 && !is_stop_word(w)
    })
    .into_iter()
    .map(|(s, e)| (s, e, q[toks[s].start..toks[e - 1].end].to_string()))
    .collect()
}

/// Runs of CJK characters split at stop words, two characters or more.
fn cjk_runs(q: &str, toks: &[Token]) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut s = 0;
    while s < toks.len() {
        if !toks[s].cjk || toks[s].stop {
            s += 1;
            continue;
        }
        let mut e = s;
        while e + 1 < toks.len()
            && toks[e + 1].cjk
            && !toks[e + 1].stop
            && toks[e].end == toks[e + 1].start
            && !is_stop_word(&q[toks[e].start..toks[e + 1].end])
        {
            e += 1;
        }
        if e > s {
            out.push((s, e + 1, q[toks[s].start..toks[e].end].to_string()));
        }
        s = e + 1;
    }
    out
}
