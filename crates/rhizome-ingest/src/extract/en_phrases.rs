//! Lower-case English noun phrases ("nuclear fission", "peer-reviewed journal") from the
//! part-of-speech tags of [`super::en_pos`]: what capitalised spans cannot see.
//!
//! A sentence becomes the tagger's word stream ([`tagger_words`]: words and numbers,
//! clitics split as the training treebank splits them, punctuation left out). A phrase is
//! a run of adjacent ADJ / NOUN / PROPN words that ends in a NOUN, at most
//! [`MAX_PHRASE_WORDS`] words (the last ones of a longer run), and never takes in a word
//! that another detector claimed, a stop word, a determiner-like word or a number. The
//! name is the text as written, lower-cased unless a word of it is a proper noun.

use std::collections::HashSet;
use std::sync::LazyLock;

use rhizome_core::text::{is_stop_word, token_spans};

use super::en_pos::{upos, PosTagger};
use super::lexicon::{words, ABBREVIATIONS, STARTERS};

/// Longest noun phrase, in words.
pub const MAX_PHRASE_WORDS: usize = 4;

/// One token of the tagger's word stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Byte offset in the sentence.
    pub start: usize,
    /// Byte offset just past the word.
    pub end: usize,
    /// The token as the tagger sees it (`do` and `n't` for "don't", `U.S.` with its dot).
    pub text: String,
    /// Follows the previous word with only spaces (or a joining hyphen) between: a noun
    /// phrase may continue across.
    pub joined: bool,
    /// Joined to the previous word by a hyphen ("term" in "long-term").
    pub hyphen: bool,
}

/// A noun phrase of a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    /// Byte offset in the sentence.
    pub start: usize,
    /// Byte offset just past the phrase.
    pub end: usize,
    /// Surface form, whitespace collapsed, lower-cased unless it holds a proper noun.
    pub name: String,
    /// Number of words.
    pub words: usize,
}

/// Clitics the treebank writes as tokens of their own, longest first.
const CLITICS: [&str; 14] =
    ["n't", "n’t", "'re", "’re", "'ve", "’ve", "'ll", "’ll", "'s", "’s", "'d", "’d", "'m", "’m"];

/// Adjectives that quantify or point rather than describe: not part of a concept's name.
static WEAK_MODIFIERS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    words(
        "\
        other such same own various certain many much several few more most less least further former latter \
        next previous only whole entire different similar particular numerous additional respective due able \
        likely possible available total full usual overall following current recent later earlier main \
        specific individual ample wide vast huge considerable significant multiple",
    )
});

/// Nouns too general to stand alone as a concept (they still head longer phrases).
static GENERIC_NOUNS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    words(
        "\
        year years time times day days month months week weeks decade decades century centuries hour hours \
        minute minutes part parts number numbers way ways kind kinds sort type types lot lots thing things \
        end beginning side case cases fact example examples total percent order point half rest addition use \
        couple amount variety period age today date top bottom front back place term terms name names one \
        ones other others lack majority instance version line lines level role word words piece pieces form \
        forms behalf result results member members group groups area areas list set section range deal \
        levels aspect aspects reason reasons issue issues matter matters people person work works series \
        field value values history relation relations organization information man men woman women child \
        children city town village country state region district county outskirts vicinity north south east \
        west northeast northwest southeast southwest zero hundred hundreds thousand thousands million \
        millions billion billions dozen dozens countries cities towns villages states regions districts \
        counties",
    )
});

/// Abbreviated units, never part of a phrase ("6 km west").
const UNIT_SYMBOLS: [&str; 14] =
    ["km", "mi", "cm", "mm", "kg", "ft", "lb", "lbs", "mph", "sq", "km2", "oz", "kw", "mw"];

/// Units of measure: a phrase they head is a quantity, not a concept ("square kilometres").
static UNITS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    words(
        "\
        yard yards mile miles foot feet inch inches metre metres meter meters kilometre kilometres kilometer \
        kilometers acre acres hectare hectares pound pounds ton tons tonnes degree degrees percent kilogram \
        kilograms gram grams litre litres liter liters gallon gallons centimetre centimetres millimetre \
        millimetres seconds",
    )
});

/// The tagger's word stream of `sentence`: the chunking tokens that hold a letter or a
/// digit, with `n't`, `'s`, `'re`, `'ve`, `'ll`, `'d`, `'m` split off as the treebank
/// does (`ca` + `n't` for "can't") and the dot of an abbreviation or initialism kept
/// (`U.S.`, `Mr.`). Punctuation is left out, as in the tagger's training data.
pub fn tagger_words(sentence: &str) -> Vec<Word> {
    let toks = token_spans(sentence);
    let mut out: Vec<Word> = Vec::with_capacity(toks.len());
    let mut broken = true;
    let mut hyphen = false;
    for (k, &(a, b)) in toks.iter().enumerate() {
        let t = &sentence[a..b];
        let gap_breaks = k > 0 && sentence[toks[k - 1].1..a].contains('\n');
        if gap_breaks {
            broken = true;
        }
        if !t.chars().any(char::is_alphanumeric) {
            let glued = |i: usize| i > 0 && i < toks.len() && toks[i - 1].1 == toks[i].0;
            if let Some(w) = out.last_mut().filter(|w| t == "." && w.end == a && takes_dot(&w.text)) {
                w.text.push('.');
                w.end = b;
                continue;
            }
            let spaced = |i: usize| {
                i > 0
                    && i < toks.len()
                    && toks[i - 1].1 < toks[i].0
                    && !sentence[toks[i - 1].1..toks[i].0].contains('\n')
            };
            // "long-term", "peer-reviewed" (or "person - centered", as tokenised corpora
            // write it): a hyphen between two words joins them.
            let joining = (glued(k) && glued(k + 1)) || (spaced(k) && spaced(k + 1));
            if matches!(t, "-" | "‑") && joining && !out.is_empty() {
                hyphen = true;
            } else {
                broken = true;
            }
            continue;
        }
        for (i, (pa, pb)) in split_clitic(t).into_iter().enumerate() {
            let (joined, hyphen) = if i == 0 { (!broken, hyphen && !broken) } else { (true, false) };
            out.push(Word { start: a + pa, end: a + pb, text: t[pa..pb].to_string(), joined, hyphen });
        }
        broken = false;
        hyphen = false;
    }
    out
}

/// `word` may end with an abbreviation's dot: a single letter, a dotted initialism
/// ("U.S"), or a known abbreviation ("Mr", "St").
fn takes_dot(word: &str) -> bool {
    let mut cs = word.chars();
    let single = matches!((cs.next(), cs.next()), (Some(c), None) if c.is_alphabetic());
    single || (word.contains('.') && !word.ends_with('.')) || ABBREVIATIONS.contains(word.to_lowercase().as_str())
}

/// Byte ranges of `t`'s pieces: the word and a trailing clitic, if it has one.
fn split_clitic(t: &str) -> Vec<(usize, usize)> {
    for c in CLITICS {
        if t.len() > c.len() && t.is_char_boundary(t.len() - c.len()) && t[t.len() - c.len()..].eq_ignore_ascii_case(c)
        {
            let cut = t.len() - c.len();
            if t[..cut].chars().any(char::is_alphabetic) {
                return vec![(0, cut), (cut, t.len())];
            }
        }
    }
    vec![(0, t.len())]
}

/// The noun phrases of `sentence`, in order, none touching a byte range in `taken`
/// (spans other detectors found). `tagger` tags the sentence's [`tagger_words`].
pub fn noun_phrases(sentence: &str, tagger: &PosTagger, taken: &[(usize, usize)]) -> Vec<Phrase> {
    let words = tagger_words(sentence);
    if words.is_empty() {
        return Vec::new();
    }
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let tagged = tagger.tag_detailed(&texts);
    let mut tags: Vec<&str> = tagged.iter().map(|t| upos(t.label)).collect();
    if let Some(v) = missing_verb(&tagged) {
        tags[v] = "VERB";
    }
    for i in 1..words.len() {
        if verb_after_noun(&words, &tagged, &tags, i) {
            tags[i] = "VERB";
        }
    }
    let usable = |i: usize| {
        let w = &words[i];
        let lower = w.text.to_lowercase();
        matches!(tags[i], "NOUN" | "ADJ" | "PROPN")
            && w.text.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && w.text.chars().all(latin_word_char)
            && !is_stop_word(&lower)
            && !STARTERS.contains(lower.as_str())
            && !taken.iter().any(|&(a, b)| w.start < b && a < w.end)
            && !UNIT_SYMBOLS.contains(&lower.as_str())
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if !usable(i) {
            i += 1;
            continue;
        }
        // A run ends before an adjective that follows a noun: in English the adjectives
        // of a noun phrase come first ("fission | large amounts").
        let mut j = i + 1;
        while j < words.len() && words[j].joined && usable(j) && !(tags[j] == "ADJ" && tags[j - 1] == "NOUN") {
            j += 1;
        }
        // A phrase that would end inside a hyphenated word ("peer" of "peer-reviewed")
        // is a fragment.
        let cut_compound = words.get(j).is_some_and(|w| w.hyphen);
        if let Some(p) = phrase(sentence, &words[i..j], &tags[i..j], cut_compound) {
            out.push(p);
        }
        i = j;
    }
    out
}

/// Most a noun's score may lead a finite verb's for [`missing_verb`] to read it as one.
const VERB_MARGIN: f64 = 10.0;

/// A sentence of four words or more needs a finite verb. When the tagger found none, the
/// noun whose runner-up label is a finite verb, closest behind (within [`VERB_MARGIN`]),
/// is most likely the verb ("the quick brown fox jumps", "vocals appears"): its index.
fn missing_verb(tagged: &[super::en_pos::Tagged]) -> Option<usize> {
    if tagged.len() < 4 || tagged.iter().any(|t| t.label.ends_with("|Fin")) {
        return None;
    }
    tagged
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            upos(t.label) == "NOUN" && t.runner_up.is_some_and(|r| r.ends_with("|Fin")) && t.margin < VERB_MARGIN
        })
        .min_by(|a, b| a.1.margin.total_cmp(&b.1.margin).then(a.0.cmp(&b.0)))
        .map(|(i, _)| i)
}

/// A letter of the Latin script (with its diacritics), a digit, an apostrophe or a dot:
/// what English words are made of (not IPA, not another script).
fn latin_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '\'' | '’' | '.')
        || (c.is_alphabetic() && (c as u32) < 0x250)
        || ('\u{1E00}'..='\u{1EFF}').contains(&c)
}

/// Most a noun's score may lead a finite verb's for [`verb_after_noun`].
const VERB_AFTER_NOUN_MARGIN: f64 = 5.0;

/// Word `i` reads as a present-tense verb after its subject: an `-s` noun, a finite verb
/// close behind, after a singular noun, before a word a verb takes (a preposition, a
/// determiner, an adjective, an adverb, a number): "snowfall occurs from", "fission
/// releases large".
fn verb_after_noun(words: &[Word], tagged: &[super::en_pos::Tagged], tags: &[&str], i: usize) -> bool {
    let w = words[i].text.to_lowercase();
    let prev = words[i - 1].text.to_lowercase();
    tags[i] == "NOUN"
        && tags[i - 1] == "NOUN"
        && words[i].joined
        && w.ends_with('s')
        && !w.ends_with("ss")
        && !prev.ends_with('s')
        && tagged[i].runner_up.is_some_and(|r| r == "VERB|Fin")
        && tagged[i].margin < VERB_AFTER_NOUN_MARGIN
        && tags.get(i + 1).is_some_and(|t| matches!(*t, "ADP" | "DET" | "ADJ" | "ADV" | "NUM"))
}

/// A superlative adjective ("largest", "earliest"): ranks rather than names.
fn superlative(w: &str) -> bool {
    w.len() > 5 && w.ends_with("est") && !matches!(w, "honest" | "modest" | "interest" | "forest" | "harvest")
}

/// The phrase of one run of usable words: up to its last NOUN, the last
/// [`MAX_PHRASE_WORDS`] words (never starting inside a hyphenated word), leading weak
/// modifiers dropped. `cut_compound`: the word after the run is hyphen-joined to it.
fn phrase(sentence: &str, words: &[Word], tags: &[&str], cut_compound: bool) -> Option<Phrase> {
    let head = tags.iter().rposition(|&t| t == "NOUN")?;
    if cut_compound && head + 1 == words.len() {
        return None;
    }
    let mut a = (head + 1).saturating_sub(MAX_PHRASE_WORDS);
    while a < head && words[a].hyphen {
        a += 1;
    }
    // Leading quantifying or ranking adjectives go ("other large", "largest"), unless
    // part of a hyphenated word ("full-page").
    while a < head && tags[a] == "ADJ" && !words[a + 1].hyphen && {
        let w = words[a].text.to_lowercase();
        WEAK_MODIFIERS.contains(w.as_str()) || superlative(&w)
    } {
        a += 1;
    }
    let (first, last) = (&words[a], &words[head]);
    let n = head + 1 - a;
    let text = sentence[first.start..last.end].split_whitespace().collect::<Vec<_>>().join(" ");
    let head_word = last.text.to_lowercase();
    if UNITS.contains(head_word.as_str()) || head_word.chars().any(|c| c.is_ascii_digit()) {
        return None; // "square kilometres", "lower 50s"
    }
    if GENERIC_NOUNS.contains(head_word.as_str()) && tags[a..head].iter().all(|&t| t == "ADJ") {
        return None; // "year", "large number", "same time"; not "election year"
    }
    // "populous", "globally": adjectives or adverbs the tagger took for nouns (not
    // "assembly", "family").
    let adverb = ["ally", "ently", "antly", "ively", "ously", "fully"]
        .iter()
        .any(|s| head_word.len() > s.len() + 2 && head_word.ends_with(s));
    if head_word.ends_with("ous") || adverb {
        return None;
    }
    if n == 1 && (text.chars().count() < 3 || WEAK_MODIFIERS.contains(head_word.as_str())) {
        return None;
    }
    let proper = tags[a..=head].contains(&"PROPN");
    let name = if proper { text } else { text.to_lowercase() };
    Some(Phrase { start: first.start, end: last.end, name, words: n })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        tagger_words(s).into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn word_stream_splits_clitics_and_drops_punctuation() {
        assert_eq!(
            texts("Don't stop: the company's U.S. office, Mr. Smith's car!"),
            ["Do", "n't", "stop", "the", "company", "'s", "U.S.", "office", "Mr.", "Smith", "'s", "car"]
        );
        assert_eq!(texts("I’m here in 1990"), ["I", "’m", "here", "in", "1990"]);
        // "rest - x": tokenised corpora write hyphens spaced ("person - centered").
        let w = tagger_words("a long-term care plan, then (the) rest - x");
        let joined: Vec<(&str, bool, bool)> = w.iter().map(|w| (w.text.as_str(), w.joined, w.hyphen)).collect();
        assert_eq!(
            joined,
            [
                ("a", false, false),
                ("long", true, false),
                ("term", true, true),
                ("care", true, false),
                ("plan", true, false),
                ("then", false, false),
                ("the", false, false),
                ("rest", false, false),
                ("x", true, true)
            ]
        );
        // A dash between spaced words is not a hyphen.
        assert!(!tagger_words("rest – x")[1].joined);
        assert!(tagger_words("").is_empty() && tagger_words(" .,;!? ").is_empty());
        assert_eq!(texts("it's WON'T"), ["it", "'s", "WO", "N'T"]);
    }
}
