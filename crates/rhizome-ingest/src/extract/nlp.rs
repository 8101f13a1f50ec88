//! [`NlpExtractor`]: entities, co-occurrence relations and facts from sentence spans.

use std::collections::{HashMap, HashSet};

use rhizome_core::text::{is_cjk, sentences, token_spans};
use rhizome_core::{ids, Chunk, ExtractedEntity, ExtractedFact, ExtractedRelation, Extraction, Extractor, Result};

use super::spans::{sentence_mentions, Mention};

/// Most entities of one sentence that are paired into relations.
const MAX_PAIRED_PER_SENTENCE: usize = 12;
/// Longest description, in characters.
const MAX_DESCRIPTION_CHARS: usize = 300;
/// Longest fact predicate, in words (a CJK word counted as two characters).
const MAX_PREDICATE_WORDS: usize = 8;

/// LLM-free, deterministic extractor (name `nlp`).
///
/// Per sentence of a chunk it finds entity-like spans ([`super::sentence_mentions`]:
/// capitalised names, dates, numbers, money, quoted terms, Chinese names), then:
/// - one [`ExtractedEntity`] per distinct normalised name ([`ids::normalize_name`]), typed
///   by the most specific type seen, described by the first sentence it occurs in, with
///   its count of occurrences in the chunk;
/// - one `CO_OCCURS` [`ExtractedRelation`] per pair of entities sharing a sentence (source
///   = the one seen first; weight = sentences shared; at most 12 entities per sentence);
/// - [`ExtractedFact`]s (subject, words between, object) for consecutive entities of a
///   sentence whose in-between text is 1-8 words without punctuation, articles trimmed.
///
/// At most `max_entities` entities are kept per chunk (most frequent first, ties by first
/// occurrence; 0 keeps all); relations and facts of dropped entities go with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NlpExtractor {
    /// Most entities kept per chunk (0: no limit).
    pub max_entities: usize,
}

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
}

struct Rel {
    source: usize,
    target: usize,
    description: String,
    weight: u32,
}

impl NlpExtractor {
    /// An extractor keeping at most `max_entities_per_chunk` entities per chunk.
    pub fn new(max_entities_per_chunk: usize) -> Self {
        NlpExtractor { max_entities: max_entities_per_chunk }
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
        let mut ents: Vec<Ent> = Vec::new();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        let mut rels: Vec<Rel> = Vec::new();
        let mut rel_index: HashMap<(usize, usize), usize> = HashMap::new();
        let mut facts: Vec<(usize, String, usize)> = Vec::new();
        let mut fact_seen: HashSet<(usize, String, usize)> = HashSet::new();

        for sent in merged_sentences(text) {
            let mentions = sentence_mentions(sent);
            let mut seq: Vec<(usize, &Mention)> = Vec::with_capacity(mentions.len());
            for m in &mentions {
                if m.initial_word && m.entity_type == "ENTITY" {
                    let low = m.name.to_lowercase();
                    let singular = low.strip_suffix('s').unwrap_or(&low);
                    if lower_words.contains(low.as_str()) || lower_words.contains(singular) {
                        continue;
                    }
                }
                let key = ids::normalize_name(&m.name);
                if key.is_empty() {
                    continue;
                }
                let idx = *by_key.entry(key).or_insert_with(|| {
                    ents.push(Ent { name: m.name.clone(), ty: m.entity_type, description: truncate(sent), count: 0 });
                    ents.len() - 1
                });
                let e = &mut ents[idx];
                e.count += 1;
                if is_generic(e.ty) && !is_generic(m.entity_type) {
                    e.ty = m.entity_type;
                }
                seq.push((idx, m));
            }
            let mut distinct: Vec<usize> = Vec::new();
            for &(idx, _) in &seq {
                if !distinct.contains(&idx) && distinct.len() < MAX_PAIRED_PER_SENTENCE {
                    distinct.push(idx);
                }
            }
            for (x, &a) in distinct.iter().enumerate() {
                for &b in &distinct[x + 1..] {
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
            for w in seq.windows(2) {
                let ((ia, ma), (ib, mb)) = (w[0], w[1]);
                if ia == ib || ma.end > mb.start {
                    continue;
                }
                if let Some(pred) = predicate(&sent[ma.end..mb.start]) {
                    if fact_seen.insert((ia, pred.clone(), ib)) {
                        facts.push((ia, pred, ib));
                    }
                }
            }
        }

        let mut keep = vec![true; ents.len()];
        if self.max_entities > 0 && ents.len() > self.max_entities {
            let mut order: Vec<usize> = (0..ents.len()).collect();
            order.sort_by_key(|&i| (std::cmp::Reverse(ents[i].count), i));
            keep = vec![false; ents.len()];
            for &i in &order[..self.max_entities] {
                keep[i] = true;
            }
        }
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
            .map(|(s, p, o)| ExtractedFact { subject: ents[s].name.clone(), predicate: p, object: ents[o].name.clone() })
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
            })
            .collect();
        Extraction { entities, relations, facts }
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
            "位于 位于位于 公司公司 省省省 ". repeat(20),
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
