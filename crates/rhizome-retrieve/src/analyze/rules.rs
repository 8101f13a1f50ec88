//! The rule-based analysis: cue words per language for the question type, structure
//! (relative clauses, possessive chains, names with a relation between them) for hops,
//! and a complexity score that adds them up.

use super::cues::cues;
use super::lang::{fold, is_han};
use super::text::{has_cue, names, spaced, strip_possessive, terms, tokens, Kind, Span, Tok};
use super::{round2, AnalysisSource, Complexity, Lang, QueryAnalysis, QueryType};

/// What the rules found in a question.
#[derive(Debug, Default)]
pub(crate) struct Signals {
    pub names: Vec<Span>,
    pub comparative: Vec<String>,
    pub analytical: Vec<String>,
    pub thematic: Vec<String>,
    pub factual: Vec<String>,
    /// Relative clauses (including reduced ones: "the company led by X", "X领导的公司").
    pub relative: usize,
    /// Possessive links ("of", "'s", "của", "的").
    pub possessive: usize,
    /// Names with a relation between them to find (not a comparison): two names and the
    /// question asks how they connect, or three names chained by relation words.
    pub linked_names: bool,
    /// One possessive link under a main verb other than "be" (English).
    pub verb_over_possessive: bool,
    pub conjunctions: usize,
    /// Length in words (Chinese: two characters count as one word).
    pub words: usize,
}

impl Signals {
    /// Extra hops beyond the first: each relative clause, each possessive link after the
    /// first, linked names, a verb over a possessive.
    pub fn bridges(&self) -> usize {
        self.relative
            + self.possessive.saturating_sub(1)
            + usize::from(self.linked_names)
            + usize::from(self.verb_over_possessive)
    }
}

/// Words after which `who/which/that/where/when` does not open a relative clause.
const NOT_RELATIVE_AFTER: &[&str] = &[
    "is", "was", "are", "were", "be", "been", "say", "says", "said", "think", "know", "knew", "believe", "claim",
    "claimed", "so", "such", "than", "now", "and", "or", "not", "did", "does", "do", "'s", "me", "us", "them", "tell",
    "explain", "describe", "show", "ask", "wonder", "true", "fact",
];
/// Prepositions: before `which`/`whom` they open a relative clause ("the county in
/// which"), except at the start of the question ("In which year...").
const PREPOSITIONS: &[&str] =
    &["of", "in", "on", "at", "to", "from", "by", "for", "with", "about", "into", "under", "during"];
/// Words after which `of` is partitive or idiomatic, not a possessive link.
const NOT_POSSESSIVE_OF: &[&str] = &[
    "because",
    "one",
    "some",
    "many",
    "most",
    "all",
    "any",
    "each",
    "which",
    "none",
    "both",
    "out",
    "instead",
    "kind",
    "type",
    "sort",
    "number",
    "lot",
    "couple",
    "made",
    "think",
    "consist",
    "consists",
    "terms",
    "ahead",
    "regardless",
    "more",
    "less",
    "rest",
    "name",
    "names",
    "title",
];
const PASSIVE_AUX: &[&str] = &["is", "was", "are", "were", "be", "been", "being", "get", "got"];
const IRREGULAR_PARTICIPLES: &[&str] = &[
    "led", "made", "built", "written", "born", "run", "held", "won", "taken", "given", "known", "shown", "drawn",
    "sung", "owned", "founded", "created", "directed", "produced",
];

pub(crate) fn signals(text: &str, lang: Lang) -> Signals {
    let c = cues(lang);
    let toks = tokens(text);
    let sp = spaced(&toks);
    let folded = if lang == Lang::Vi { fold(&sp) } else { String::new() };
    let found = |list: &[&str]| -> Vec<String> {
        list.iter().filter(|cue| has_cue(&sp, &folded, text, cue)).map(|s| s.to_string()).collect()
    };
    let mut s = Signals {
        names: names(text, lang),
        comparative: found(c.comparative),
        analytical: found(c.analytical),
        thematic: found(c.thematic),
        factual: found(c.factual),
        ..Signals::default()
    };
    let words: Vec<String> = sp.split_whitespace().map(str::to_string).collect();
    s.conjunctions = c.conjunction.iter().map(|w| count_cue(&sp, text, w)).sum();
    // "Are A and B both ...?", "Is A the same ... as B?": two names set side by side.
    if s.names.len() >= 2 {
        s.comparative.extend(found(c.pair));
    }
    match lang {
        Lang::En => {
            // Per word of `words` (where "'s" is a word): does a name start there, and does
            // punctuation come right before it.
            let mut marks = Vec::with_capacity(words.len());
            let mut punct = false;
            for t in &toks {
                if t.kind != Kind::Word {
                    punct = true;
                    continue;
                }
                marks.push((s.names.iter().any(|n| n.start == t.start), punct));
                if strip_possessive(&t.lower()).is_some() {
                    marks.push((false, false));
                }
                punct = false;
            }
            english(&mut s, &words, &marks)
        }
        Lang::Vi => vietnamese(&mut s, &toks, &sp, &folded),
        Lang::Zh => chinese(&mut s, text),
    }
    let han = text.chars().filter(|&ch| is_han(ch)).count();
    s.words = toks.iter().filter(|t| t.kind == Kind::Word).count() + han.div_ceil(2);
    // Two names and the question asks how they connect, or a chain of three names with
    // relation words between them: a path to find.
    let asks_relation = !found(c.relation).is_empty();
    if s.comparative.is_empty() && s.names.len() >= 2 {
        s.linked_names = asks_relation || (s.names.len() >= 3 && linked(&s.names, &toks, lang, s.names.len() - 1));
    }
    s
}

fn count_cue(sp: &str, raw: &str, cue: &str) -> usize {
    if cue.chars().any(is_han) {
        raw.matches(cue).count()
    } else {
        sp.matches(&format!(" {cue} ")).count()
    }
}

/// `marks[i]`: (a name starts at word i, punctuation comes right before it).
fn english(s: &mut Signals, words: &[String], marks: &[(bool, bool)]) {
    let c = cues(Lang::En);
    let is_function = |w: &str| c.function.contains(&w);
    for (i, w) in words.iter().enumerate() {
        let prev = if i > 0 { words[i - 1].as_str() } else { "" };
        let next = words.get(i + 1).map(String::as_str).unwrap_or("");
        // Relative clauses without a marker: "the country Signmark is from" (a name right
        // after "the NOUN"), "the country containing Nugegoda".
        let joined = |j: usize| marks.get(j).is_some_and(|m| !m.1);
        let contact = marks.get(i + 2).is_some_and(|m| m.0) && joined(i + 1) && joined(i + 2);
        if w == "the" && !is_function(next) && contact && words.get(i + 3).is_some() {
            s.relative += 1;
        }
        if i >= 2
            && words[i - 2] == "the"
            && !is_function(prev)
            && w.len() > 5
            && w.ends_with("ing")
            && !next.is_empty()
        {
            s.relative += 1;
        }
        match w.as_str() {
            r if c.relative.contains(&r)
                && i > 0
                && !NOT_RELATIVE_AFTER.contains(&prev)
                && !(i == 1 && PREPOSITIONS.contains(&prev)) =>
            {
                s.relative += 1;
            }
            "by" if !next.is_empty()
                && (prev.ends_with("ed") || IRREGULAR_PARTICIPLES.contains(&prev))
                && !(i >= 2 && PASSIVE_AUX.contains(&words[i - 2].as_str())) =>
            {
                s.relative += 1;
            }
            p if c.possessive.contains(&p) && (p != "of" || (i > 0 && !NOT_POSSESSIVE_OF.contains(&prev))) => {
                s.possessive += 1
            }
            "than" => {
                let before = &words[i.saturating_sub(3)..i];
                let numeric = next.chars().next().is_some_and(|c| c.is_ascii_digit());
                let graded = before
                    .iter()
                    .any(|b| matches!(b.as_str(), "more" | "less" | "fewer") || (b.len() > 3 && b.ends_with("er")));
                if graded && !numeric {
                    s.comparative.push(format!("{} than", before.last().map(String::as_str).unwrap_or("")));
                }
            }
            _ => {}
        }
    }
    // One possessive link under a main verb other than "be" ("What university did the
    // author of X attend?", "When did Aage Bohr's father die?"): find the possessed thing,
    // then what the verb says about it.
    let main_verb = words.iter().enumerate().any(|(i, w)| {
        matches!(w.as_str(), "did" | "does" | "do")
            || (i > 0 && w.len() > 4 && w.ends_with("ed") && !PASSIVE_AUX.contains(&words[i - 1].as_str()))
    });
    s.verb_over_possessive = s.possessive == 1 && main_verb;
    // "Which is older, A or B?" / "Who was born first, A or B?"
    let opens = matches!(words.first().map(String::as_str), Some("which" | "who"));
    if opens && words.iter().any(|w| w == "or") && s.names.len() >= 2 {
        s.comparative.push("which ... A or B".into());
    }
    // "Between A and B, which ...?"
    if words.first().is_some_and(|w| w == "between") && s.names.len() >= 2 {
        s.comparative.push("between A and B".into());
    }
}

fn vietnamese(s: &mut Signals, toks: &[Tok], sp: &str, folded: &str) {
    let c = cues(Lang::Vi);
    s.possessive = c.possessive.iter().map(|p| sp.matches(&format!(" {p} ")).count()).sum();
    if s.possessive == 0 && !folded.is_empty() {
        s.possessive = c.possessive.iter().map(|p| folded.matches(&fold(&format!(" {p} "))).count()).sum();
    }
    s.relative = c.relative.iter().map(|r| sp.matches(&format!(" {r} ")).count()).sum();
    // Reduced relative with an agent: "công ty do Sam Altman lãnh đạo".
    for (i, t) in toks.iter().enumerate() {
        let agent = matches!(t.lower().as_str(), "do" | "bởi");
        if agent && i > 0 && toks.get(i + 1).is_some_and(|n| s.names.iter().any(|m| m.start == n.start)) {
            s.relative += 1;
        }
    }
}

/// `的` after a name with a verb between ("Sam Altman领导的公司") opens a relative clause,
/// as does `所`; any other `的` is a possessive link.
fn chinese(s: &mut Signals, text: &str) {
    let boundary = |c: char| "的，,。？?！!；;：:、".contains(c);
    let mut seg_start = 0;
    for (p, ch) in text.char_indices() {
        if ch == '的' {
            let seg = &text[seg_start..p];
            let verb_after_name = s
                .names
                .iter()
                .any(|n| n.end > seg_start && n.end <= p && text[n.end..p].chars().any(|c| is_han(c) && c != '所'));
            if verb_after_name || seg.contains('所') {
                s.relative += 1;
            } else {
                s.possessive += 1;
            }
        }
        if boundary(ch) {
            seg_start = p + ch.len_utf8();
        }
    }
}

/// At least `pairs` pairs of consecutive names with a content word (or Han character)
/// between them.
fn linked(names: &[Span], toks: &[Tok], lang: Lang, pairs: usize) -> bool {
    let c = cues(lang);
    let en = cues(Lang::En);
    let relating = names.windows(2).filter(|w| {
        toks.iter().filter(|t| t.start >= w[0].end && t.start < w[1].start).any(|t| match t.kind {
            Kind::Word => {
                let l = t.lower();
                let l = strip_possessive(&l).unwrap_or(&l).to_string();
                !c.function.contains(&l.as_str()) && !en.function.contains(&l.as_str()) && l != "'s"
            }
            Kind::Han => !c.function.contains(&t.text),
            Kind::Punct => false,
        })
    });
    relating.count() >= pairs
}

/// The rule-based analysis of `question` (as asked) whose self-contained form is
/// `standalone`; `language` is the language of the question.
pub(crate) fn analyze(question: &str, standalone: &str, language: Lang) -> QueryAnalysis {
    let s = signals(standalone, language);
    let query_type = if !s.comparative.is_empty() {
        QueryType::Comparative
    } else if !s.analytical.is_empty() {
        QueryType::Analytical
    } else {
        QueryType::Factual
    };
    let bridges = s.bridges();
    let multi_hop = bridges >= 1;
    let mut score = 0.1;
    score += match query_type {
        QueryType::Factual => 0.0,
        QueryType::Analytical | QueryType::Comparative => 0.25,
    };
    score += 0.2 * bridges.min(2) as f64;
    score += match s.names.len() {
        0 | 1 => 0.0,
        2 => 0.05,
        _ => 0.1,
    };
    score += 0.05 * s.conjunctions.min(2) as f64;
    score += if s.words > 25 {
        0.1
    } else if s.words > 14 {
        0.05
    } else {
        0.0
    };
    if !s.thematic.is_empty() {
        score += 0.05;
    }
    let complexity_score = round2(score);

    let c = cues(language);
    let cue_words: Vec<&str> = c.comparative.iter().chain(c.analytical).chain(c.factual).copied().collect();
    let skip = |w: &str| cue_words.contains(&w);
    let mut key_concepts: Vec<String> = Vec::new();
    let name_texts = s.names.iter().map(|n| n.text.clone());
    for k in name_texts.chain(terms(standalone, language, &s.names, &skip)) {
        if !key_concepts.iter().any(|x| x.to_lowercase() == k.to_lowercase()) {
            key_concepts.push(k);
        }
    }
    key_concepts.truncate(8);

    let mut cues_found = Vec::new();
    for (kind, list) in [
        ("comparative", &s.comparative),
        ("analytical", &s.analytical),
        ("thematic", &s.thematic),
        ("question word", &s.factual),
    ] {
        cues_found.extend(list.iter().map(|c| format!("{kind}: {c}")));
    }
    if s.relative > 0 {
        cues_found.push(format!("relative clauses: {}", s.relative));
    }
    if s.possessive > 0 {
        cues_found.push(format!("possessive links: {}", s.possessive));
    }
    if s.linked_names {
        cues_found.push("names linked by a relation".into());
    }
    if s.verb_over_possessive {
        cues_found.push("a verb over a possessive".into());
    }

    QueryAnalysis {
        question: question.to_string(),
        language,
        query_type,
        complexity: Complexity::from_score(complexity_score),
        complexity_score,
        key_concepts,
        requires_reasoning: query_type != QueryType::Factual || multi_hop,
        multiple_sources: query_type == QueryType::Comparative
            || multi_hop
            || !s.thematic.is_empty()
            || s.names.len() >= 2,
        multi_hop,
        standalone_question: standalone.to_string(),
        is_follow_up: false,
        source: AnalysisSource::Rules,
        notes: Vec::new(),
        cues: cues_found,
    }
}
