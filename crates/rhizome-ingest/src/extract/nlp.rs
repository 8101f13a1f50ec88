//! [`NlpExtractor`]: entities, co-occurrence relations and facts from sentence spans and
//! English noun phrases.

use std::collections::{HashMap, HashSet};

use rhizome_core::lang::{detect_language, Lang};
use rhizome_core::text::{is_cjk, sentences, token_spans};
use rhizome_core::{ids, Chunk, ExtractedEntity, ExtractedFact, ExtractedRelation, Extraction, Extractor, Result};

use super::en_phrases;
use super::en_pos::{self, PosTagger};
use super::spans::sentence_mentions;

/// Most entities of one sentence that are paired into relations.
const MAX_PAIRED_PER_SENTENCE: usize = 12;
/// Longest description, in characters.
const MAX_DESCRIPTION_CHARS: usize = 300;
/// Longest fact predicate, in words (a CJK word counted as two characters).
const MAX_PREDICATE_WORDS: usize = 8;

/// LLM-free, deterministic extractor (name `nlp`).
///
/// Per sentence of a chunk it finds entity-like spans ([`super::sentence_mentions`]:
/// capitalised names, dates, numbers, money, quoted terms, Chinese names) and, in English
/// text when the POS tagger is installed, lower-case noun phrases ([`super::en_phrases`],
/// type CONCEPT; a one-word phrase only when it occurs twice in the chunk or makes a
/// fact), then:
/// - one [`ExtractedEntity`] per distinct normalised name ([`ids::normalize_name`]), typed
///   by the most specific type seen, described by the first sentence it occurs in, with
///   its count of occurrences in the chunk;
/// - one `CO_OCCURS` [`ExtractedRelation`] per pair of entities sharing a sentence (source
///   = the one seen first; weight = sentences shared; at most 12 entities per sentence,
///   names before noun phrases);
/// - [`ExtractedFact`]s (subject, words between, object) for consecutive entities of a
///   sentence whose in-between text is 1-8 words without punctuation, articles trimmed
///   (names are paired as if there were no noun phrases, and noun phrases with their
///   neighbours).
///
/// At most `max_entities` entities are kept per chunk (most frequent first, ties by first
/// occurrence; 0 keeps all); noun phrases only fill the places names leave. Relations and
/// facts of dropped entities go with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NlpExtractor {
    /// Most entities kept per chunk (0: no limit).
    pub max_entities: usize,
    en_pos: EnPos,
}

/// Where English part-of-speech tags come from.
#[derive(Debug, Clone, Copy)]
enum EnPos {
    /// The installed model ([`en_pos::installed`]), read on the first English chunk.
    Installed,
    /// None: capitalised spans only.
    Off,
    /// A tagger given by the caller.
    Given(&'static PosTagger),
}

impl PartialEq for EnPos {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (EnPos::Given(a), EnPos::Given(b)) => std::ptr::eq(*a, *b),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

impl Eq for EnPos {}

impl Default for NlpExtractor {
    /// 40 entities per chunk, as [`rhizome_core::config::ExtractConfig`] defaults.
    fn default() -> Self {
        NlpExtractor::new(40)
    }
}

struct Ent {
    name: String,
    ty: &'static str,
    description: String,
    count: u32,
    /// Seen as a name (not only as a noun phrase).
    named: bool,
    /// A one-word noun phrase.
    single: bool,
}

/// One occurrence of an entity in a sentence.
struct Occ {
    idx: usize,
    start: usize,
    end: usize,
    /// Found as a noun phrase.
    phrase: bool,
}

struct Rel {
    source: usize,
    target: usize,
    description: String,
    weight: u32,
}

/// Says once per process that English noun phrases are skipped, and why.
static MISSING_TAGGER_WARNED: std::sync::Once = std::sync::Once::new();

impl NlpExtractor {
    /// An extractor keeping at most `max_entities_per_chunk` entities per chunk, finding
    /// English noun phrases with the installed POS tagger when there is one.
    pub fn new(max_entities_per_chunk: usize) -> Self {
        NlpExtractor { max_entities: max_entities_per_chunk, en_pos: EnPos::Installed }
    }

    /// The same extractor without English noun phrases (capitalised spans only).
    pub fn without_pos_tagger(self) -> Self {
        NlpExtractor { en_pos: EnPos::Off, ..self }
    }

    /// The same extractor tagging English with `tagger` instead of the installed model.
    pub fn with_pos_tagger(self, tagger: &'static PosTagger) -> Self {
        NlpExtractor { en_pos: EnPos::Given(tagger), ..self }
    }

    /// The tagger English text gets (None: noun phrases are skipped).
    pub fn pos_tagger(&self) -> Option<&'static PosTagger> {
        match self.en_pos {
            EnPos::Installed => en_pos::installed(),
            EnPos::Off => None,
            EnPos::Given(t) => Some(t),
        }
    }

    /// What this extractor skips and why, for the index report: the note that English
    /// noun phrases are skipped when the tagger model is missing (with the command that
    /// fetches it). Empty when nothing is skipped or noun phrases were turned off.
    pub fn notes(&self) -> Vec<String> {
        match self.en_pos {
            EnPos::Installed => en_pos::unavailable_note().into_iter().collect(),
            EnPos::Off | EnPos::Given(_) => Vec::new(),
        }
    }

    /// The tagger for `text`: English text only; a missing installed model is said once
    /// on stderr.
    fn tagger_for(&self, text: &str) -> Option<&'static PosTagger> {
        if matches!(self.en_pos, EnPos::Off) || detect_language(text) != Lang::En {
            return None;
        }
        let t = self.pos_tagger();
        if t.is_none() {
            MISSING_TAGGER_WARNED.call_once(|| {
                for note in self.notes() {
                    eprintln!("warning: {note}");
                }
            });
        }
        t
    }

    /// Extracts from raw text (what [`Extractor::extract`] does with a chunk's text).
    pub fn extract_text(&self, text: &str) -> Extraction {
        // Lowercase words of the text: a capitalised sentence opener that also occurs in
        // lowercase ("Person ... person") is an ordinary word.
        let lower_words: HashSet<&str> = token_spans(text)
            .into_iter()
            .map(|(a, b)| &text[a..b])
            .filter(|w| w.chars().next().is_some_and(char::is_lowercase))
            .collect();
        let tagger = self.tagger_for(text);
        let mut ents: Vec<Ent> = Vec::new();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        let mut sents: Vec<(&str, Vec<Occ>)> = Vec::new();

        for sent in merged_sentences(text) {
            let mut seq: Vec<Occ> = Vec::new();
            let mut add = |name: &str, ty: &'static str, phrase: bool, single: bool| -> Option<usize> {
                let key = ids::normalize_name(name);
                if key.is_empty() {
                    return None;
                }
                let idx = *by_key.entry(key).or_insert_with(|| {
                    let description = truncate(sent);
                    ents.push(Ent { name: name.to_string(), ty, description, count: 0, named: false, single });
                    ents.len() - 1
                });
                let e = &mut ents[idx];
                e.count += 1;
                e.named |= !phrase;
                if is_generic(e.ty) && !is_generic(ty) {
                    e.ty = ty;
                }
                Some(idx)
            };
            for m in &sentence_mentions(sent) {
                if m.initial_word && m.entity_type == "ENTITY" {
                    let low = m.name.to_lowercase();
                    let singular = low.strip_suffix('s').unwrap_or(&low);
                    if lower_words.contains(low.as_str()) || lower_words.contains(singular) {
                        continue;
                    }
                }
                if let Some(idx) = add(&m.name, m.entity_type, false, false) {
                    seq.push(Occ { idx, start: m.start, end: m.end, phrase: false });
                }
            }
            if let Some(t) = tagger {
                let taken: Vec<(usize, usize)> = seq.iter().map(|o| (o.start, o.end)).collect();
                for p in en_phrases::noun_phrases(sent, t, &taken) {
                    if let Some(idx) = add(&p.name, "CONCEPT", true, p.words == 1) {
                        seq.push(Occ { idx, start: p.start, end: p.end, phrase: true });
                    }
                }
                seq.sort_by_key(|o| (o.start, o.end));
            }
            sents.push((sent, seq));
        }

        // A one-word noun phrase stays when it occurs twice, or is what a name is said to
        // be ("Aage Bohr was a physicist").
        let mut is_a = vec![false; ents.len()];
        for (sent, seq) in &sents {
            for w in seq.windows(2) {
                if !w[0].phrase
                    && w[1].phrase
                    && w[0].end <= w[1].start
                    && predicate(&sent[w[0].end..w[1].start]).is_some_and(|p| copula(&p))
                {
                    is_a[w[1].idx] = true;
                }
            }
        }
        let usable: Vec<bool> =
            ents.iter().zip(&is_a).map(|(e, &f)| e.named || !e.single || e.count >= 2 || f).collect();

        let mut rels: Vec<Rel> = Vec::new();
        let mut rel_index: HashMap<(usize, usize), usize> = HashMap::new();
        let mut facts: Vec<(usize, String, usize)> = Vec::new();
        let mut fact_seen: HashSet<(usize, String, usize)> = HashSet::new();
        for (sent, seq) in &sents {
            let named: Vec<&Occ> = seq.iter().filter(|o| !o.phrase).collect();
            let all: Vec<&Occ> = seq.iter().filter(|o| !o.phrase || usable[o.idx]).collect();
            // Names first, then noun phrases, each in order of first occurrence.
            let mut distinct: Vec<(usize, usize)> = Vec::new();
            for o in named.iter().chain(all.iter().filter(|o| o.phrase)) {
                if !distinct.iter().any(|d| d.1 == o.idx) && distinct.len() < MAX_PAIRED_PER_SENTENCE {
                    let first = all.iter().find(|x| x.idx == o.idx).map_or(o.start, |x| x.start);
                    distinct.push((first, o.idx));
                }
            }
            distinct.sort_unstable();
            for (x, &(_, a)) in distinct.iter().enumerate() {
                for &(_, b) in &distinct[x + 1..] {
                    let pair = (a.min(b), a.max(b));
                    match rel_index.get(&pair) {
                        Some(&r) => rels[r].weight += 1,
                        None => {
                            rel_index.insert(pair, rels.len());
                            rels.push(Rel { source: a, target: b, description: truncate(sent), weight: 1 });
                        }
                    }
                }
            }
            let name_pairs = named.windows(2).map(|w| (w[0], w[1]));
            let phrase_pairs = all.windows(2).map(|w| (w[0], w[1])).filter(|(a, b)| a.phrase || b.phrase);
            for (a, b) in name_pairs.chain(phrase_pairs) {
                if a.idx == b.idx || a.end > b.start {
                    continue;
                }
                if let Some(pred) = predicate(&sent[a.end..b.start]) {
                    if fact_seen.insert((a.idx, pred.clone(), b.idx)) {
                        facts.push((a.idx, pred, b.idx));
                    }
                }
            }
        }

        let keep = self.kept(&ents, &usable);
        let relations = rels
            .iter()
            .filter(|r| keep[r.source] && keep[r.target])
            .map(|r| ExtractedRelation {
                source: ents[r.source].name.clone(),
                target: ents[r.target].name.clone(),
                rel_type: "CO_OCCURS".to_string(),
                description: r.description.clone(),
                weight: r.weight as f32,
            })
            .collect();
        let facts = facts
            .into_iter()
            .filter(|(s, _, o)| keep[*s] && keep[*o])
            .map(|(s, p, o)| ExtractedFact {
                subject: ents[s].name.clone(),
                predicate: p,
                object: ents[o].name.clone(),
            })
            .collect();
        let entities = ents
            .into_iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(e, _)| ExtractedEntity {
                name: e.name,
                entity_type: e.ty.to_string(),
                description: e.description,
                count: e.count,
                importance: None,
            })
            .collect();
        Extraction { entities, relations, facts, claims: Vec::new() }
    }

    /// Which entities the chunk keeps: names under `max_entities` (most frequent first,
    /// ties by first occurrence), then usable noun phrases in the places left, the same way.
    fn kept(&self, ents: &[Ent], usable: &[bool]) -> Vec<bool> {
        let mut keep = vec![false; ents.len()];
        let limit = if self.max_entities == 0 { usize::MAX } else { self.max_entities };
        let mut room = limit;
        for names in [true, false] {
            let mut order: Vec<usize> =
                (0..ents.len()).filter(|&i| ents[i].named == names && (names || usable[i])).collect();
            order.sort_by_key(|&i| (std::cmp::Reverse(ents[i].count), i));
            for &i in order.iter().take(room) {
                keep[i] = true;
            }
            room = room.saturating_sub(order.len());
        }
        keep
    }
}

impl Extractor for NlpExtractor {
    fn name(&self) -> &str {
        "nlp"
    }
    fn extract(&self, chunk: &Chunk) -> Result<Extraction> {
        Ok(self.extract_text(&chunk.text))
    }
}

/// Sentences of `text` ([`sentences`]), re-joined where the splitter cut after an initial
/// or an abbreviation ("H. C. Ørsted", "Mr. Smith", "St. Louis") on the same line.
fn merged_sentences(text: &str) -> Vec<&str> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (off, s) in sentences(text) {
        if let Some(last) = out.last_mut() {
            let prev = &text[last.0..last.1];
            if ends_with_abbreviation(prev) && !text[last.1..off].contains('\n') {
                last.1 = off + s.len();
                continue;
            }
        }
        out.push((off, off + s.len()));
    }
    out.into_iter().map(|(a, b)| &text[a..b]).collect()
}

/// Ends with `X.` where X is a single uppercase letter or a common abbreviation.
fn ends_with_abbreviation(s: &str) -> bool {
    let Some(body) = s.strip_suffix('.') else { return false };
    let word = body.rsplit(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
    let mut cs = word.chars();
    let initial = matches!((cs.next(), cs.next()), (Some(c), None) if c.is_uppercase());
    let lower = word.to_lowercase();
    initial
        || (super::lexicon::ABBREVIATIONS.contains(lower.as_str())
            && !matches!(lower.as_str(), "inc" | "co" | "corp" | "ltd" | "no" | "vol" | "bros"))
}

/// A predicate that says what something is: "is", "was also", "became".
fn copula(pred: &str) -> bool {
    let mut words = pred.split(' ');
    words
        .next()
        .is_some_and(|w| matches!(w, "is" | "was" | "are" | "were" | "became" | "becomes" | "remains" | "remained"))
        && words.all(|w| matches!(w, "a" | "an" | "the" | "also" | "now" | "still" | "later" | "once" | "formerly"))
}

fn is_generic(ty: &str) -> bool {
    matches!(ty, "ENTITY" | "CONCEPT")
}

/// At most [`MAX_DESCRIPTION_CHARS`] characters of `s`, cut at a char boundary.
fn truncate(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(MAX_DESCRIPTION_CHARS) {
        Some((i, _)) => s[..i].trim_end().to_string(),
        None => s.to_string(),
    }
}

/// The predicate of a fact from the text between two entities: lowercased, articles
/// trimmed at both ends, 1-8 words, no punctuation, not just a conjunction.
fn predicate(between: &str) -> Option<String> {
    const BREAKS: &str = ".!?;:,()[]{}\"“”«»「」『』|。！？；：，、（）";
    let t = between.trim();
    if t.is_empty() || t.contains(|c| BREAKS.contains(c)) {
        return None;
    }
    let lower = t.to_lowercase();
    let mut words: Vec<&str> = lower.split_whitespace().collect();
    while words.first().is_some_and(|w| matches!(*w, "the" | "a" | "an")) {
        words.remove(0);
    }
    while words.last().is_some_and(|w| matches!(*w, "the" | "a" | "an")) {
        words.pop();
    }
    if words.is_empty() || !words.iter().any(|w| w.chars().any(char::is_alphanumeric)) {
        return None;
    }
    // "X and Y", or a predicate opening with a conjunction (its subject is not X).
    if matches!(words[0], "and" | "or" | "but" | "&" | "và" | "hoặc" | "nhưng" | "-" | "–" | "—")
        || words[0].starts_with(['和', '与', '及', '或', '但'])
    {
        return None;
    }
    let size: usize = words
        .iter()
        .map(|w| match w.chars().filter(|&c| is_cjk(c)).count() {
            0 => 1,
            n => n.div_ceil(2),
        })
        .sum();
    (size <= MAX_PREDICATE_WORDS).then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates() {
        assert_eq!(predicate(" is published by the ").as_deref(), Some("is published by"));
        assert_eq!(predicate(" and "), None);
        assert_eq!(predicate(", "), None);
        assert_eq!(predicate("宣布向").as_deref(), Some("宣布向"));
        assert_eq!(predicate(" x b c d e f g h i "), None);
    }

    #[test]
    fn never_panics_on_odd_input() {
        let x = NlpExtractor::new(5);
        let mut odd = vec![
            String::new(),
            " ".into(),
            "\u{0}\u{1}\u{7f}".into(),
            "👩‍👩‍👧‍👦 🇻🇳🇨🇳 Émile 🎉 \"".into(),
            "e\u{301}\u{302}\u{303} A\u{301}\u{301}lice B\u{300}ob".into(),
            "שלום עולם Tel Aviv مرحبا بالعالم".into(),
            "“unclosed «nested “quotes” here» and ``PTB'' style \"".into(),
            "$ $$ 100亿 亿美元 年月日 2023年 5月 Jan. Dec 31st, Mr. Dr.".into(),
            "A. B. C. D. - -- & && of the of the van der".into(),
            "位于 位于位于 公司公司 省省省 ".repeat(20),
            "Ǆemal ǅ ǈ ﬁ ß ẞ İstanbul".into(),
            "\u{202e}RTL override\u{202c} \u{200b}zero\u{200d}width".into(),
        ];
        odd.push("Big Word ".repeat(20_000));
        odd.push("x".repeat(100_000));
        odd.push("“".repeat(50_000));
        odd.push("Microsoft宣布向OpenAI投资。".repeat(2_000));
        let mut seed = 0x9e37_79b9_u32;
        for _ in 0..200 {
            let s: String = (0..64)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    char::from_u32(seed % 0x3_0000).unwrap_or('?')
                })
                .collect();
            odd.push(s);
        }
        odd.push("President ".repeat(100_000));
        odd.push("H. ".repeat(100_000));
        let t = std::time::Instant::now();
        for s in &odd {
            let e = x.extract_text(s);
            assert!(e.entities.len() <= 5);
            assert!(e.entities.iter().all(|x| x.description.chars().count() <= MAX_DESCRIPTION_CHARS));
        }
        assert!(t.elapsed().as_secs() < 20, "too slow: {:?}", t.elapsed());
    }
}
