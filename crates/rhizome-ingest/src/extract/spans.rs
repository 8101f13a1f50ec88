//! Entity-like spans of one sentence: quoted terms, money, dates, capitalised names, years
//! and numbers (Chinese-specific spans are in [`super::chinese`]).
//!
//! Detectors run in a fixed order, each claiming tokens so later ones skip them:
//! quoted terms, money, month dates, Chinese spans, capitalised names, years, numbers.

use rhizome_core::lang::{detect_language, Lang};
use rhizome_core::text::{is_cjk, is_stop_word};

use super::chinese;
use super::classify::{classify, looks_like_name};
use super::lexicon::*;
use super::mention::{collapse, push, Mention};
use super::tokens::Sent;

/// The entity-like spans of `sentence`, in order, not overlapping.
pub fn sentence_mentions(sentence: &str) -> Vec<Mention> {
    let mut s = Sent::new(sentence);
    let mut out = Vec::new();
    quoted(&mut s, &mut out);
    money(&mut s, &mut out);
    month_dates(&mut s, &mut out);
    if sentence.chars().any(is_cjk) {
        chinese::detect(&mut s, &mut out);
    }
    cap_spans(&mut s, &mut out);
    years_and_numbers(&mut s, &mut out);
    out.sort_by_key(|m| (m.start, m.end));
    out
}

/// Largest char boundary of `t` at or below `i`.
fn floor_boundary(t: &str, mut i: usize) -> usize {
    i = i.min(t.len());
    while !t.is_char_boundary(i) {
        i -= 1;
    }
    i
}

const QUOTES: [(&str, &str); 7] =
    [("“", "”"), ("«", "»"), ("「", "」"), ("『", "』"), ("„", "“"), ("``", "''"), ("\"", "\"")];

/// Quoted terms of 1-6 words (or up to 12 CJK characters) -> CONCEPT.
fn quoted(s: &mut Sent, out: &mut Vec<Mention>) {
    let text = s.text;
    let mut i = 0;
    while i < text.len() {
        let Some(&(open, close)) = QUOTES.iter().find(|(o, _)| text[i..].starts_with(o)) else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let inner_start = i + open.len();
        let window = &text[inner_start..floor_boundary(text, inner_start + 400)];
        let Some(p) = window.find(close) else {
            i = inner_start;
            continue;
        };
        let inner = &text[inner_start..inner_start + p];
        i = inner_start + p + close.len();
        let body = inner.trim().trim_end_matches([',', '.', ';', ':']).trim_end();
        let words = body.split_whitespace().count();
        let cjk = body.chars().filter(|&c| is_cjk(c)).count();
        if body.is_empty() || words > 6 || cjk > 12 || !body.chars().any(char::is_alphanumeric) {
            continue;
        }
        let start = inner_start + (inner.len() - inner.trim_start().len());
        let (a, b) = s.tokens_in(start, start + body.len());
        if a < b && s.all_free(a, b) {
            push(s, out, a, b, "CONCEPT");
        }
    }
}

/// `$10 billion`, `US$5`, `10 dollars`, `100亿美元` -> MONEY.
fn money(s: &mut Sent, out: &mut Vec<Mention>) {
    scan(s, out, "MONEY", money_at);
}

/// Left to right: where `at` finds a span starting at a token, push it as `label` and go
/// on after it.
fn scan(s: &mut Sent, out: &mut Vec<Mention>, label: &'static str, at: fn(&Sent, usize) -> Option<usize>) {
    let mut i = 0;
    while i < s.len() {
        match at(s, i) {
            Some(end) => {
                push(s, out, i, end, label);
                i = end;
            }
            None => i += 1,
        }
    }
}

fn money_at(s: &Sent, i: usize) -> Option<usize> {
    if !s.free(i) {
        return None;
    }
    let mut k = i;
    if matches!(s.tok(k), "US" | "A" | "C" | "HK" | "S" | "NZ" | "AU" | "CA") && s.adjacent(k + 1) {
        k += 1;
    }
    if CURRENCY_SYMBOLS.contains(&s.tok(k)) {
        if !(s.free(k + 1) && s.is_number(k + 1) && (s.adjacent(k + 1) || s.spaced(k + 1))) {
            return None;
        }
        let end = k + 2;
        return Some(if s.spaced(end) && s.free(end) && has(&SCALES, s.lower(end)) { end + 1 } else { end });
    }
    if !s.is_number(i) {
        return None;
    }
    let mut end = i + 1;
    if s.spaced(end) && s.free(end) && has(&SCALES, s.lower(end)) {
        end += 1;
    }
    if (s.spaced(end) || s.adjacent(end)) && s.free(end) && has(&CURRENCY_WORDS, s.lower(end)) {
        return Some(end + 1);
    }
    if end == i + 1 && s.adjacent(end) && s.is_cjk(end) {
        return chinese::money_suffix(&s.cjk_run(end, 8)).map(|n| end + n);
    }
    None
}

fn is_month(s: &Sent, i: usize) -> bool {
    s.free(i) && s.is_cap(i) && MONTHS.contains(s.lower(i))
}

fn is_month_abbr(s: &Sent, i: usize) -> bool {
    s.lower(i).len() <= 4 && !matches!(s.lower(i), "may" | "june" | "july")
}

/// A day of the month: `1`..`31`, or an ordinal like `22nd`.
fn is_day(s: &Sent, i: usize) -> bool {
    let t = s.lower(i);
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &t[digits.len()..];
    s.free(i)
        && !digits.is_empty()
        && digits.len() <= 2
        && digits.bytes().all(|b| b.is_ascii_digit())
        && matches!(suffix, "" | "st" | "nd" | "rd" | "th")
        && (1..=31).contains(&digits.parse::<u32>().unwrap_or(0))
}

/// Extends a date ending before token `end` by a following year (`, 1955` or ` 1955`).
fn year_after(s: &Sent, end: usize) -> usize {
    if s.tok(end) == "," && s.adjacent(end) && s.spaced(end + 1) && s.free(end + 1) && s.is_year(end + 1) {
        end + 2
    } else if s.spaced(end) && s.free(end) && s.is_year(end) {
        end + 1
    } else {
        end
    }
}

/// `22 December 1955`, `December 22, 1955`, `January 1960`, `Dec. 5`, `January`,
/// weekdays -> DATE.
fn month_dates(s: &mut Sent, out: &mut Vec<Mention>) {
    scan(s, out, "DATE", date_at);
}

fn date_at(s: &Sent, i: usize) -> Option<usize> {
    if !s.free(i) {
        return None;
    }
    if is_day(s, i) && s.spaced(i + 1) && is_month(s, i + 1) {
        let mut end = i + 2;
        if is_month_abbr(s, i + 1) && s.adjacent(end) && s.tok(end) == "." {
            end += 1;
        }
        return Some(year_after(s, end));
    }
    if s.is_cap(i) && WEEKDAYS.contains(s.lower(i)) {
        return Some(i + 1);
    }
    if !is_month(s, i) {
        return None;
    }
    let abbr = is_month_abbr(s, i);
    let mut end = i + 1;
    if abbr && s.adjacent(end) && s.tok(end) == "." {
        end += 1;
    }
    if s.spaced(end) && is_day(s, end) {
        return Some(year_after(s, end + 1));
    }
    if s.spaced(end) && s.free(end) && s.is_year(end) {
        return Some(end + 1);
    }
    // A month on its own: full names only; "May" is too often the verb.
    (!abbr && s.lower(i) != "may" && i != s.first_word).then_some(i + 1)
}

/// Ends with a possessive `'s`.
fn possessive(t: &str) -> bool {
    t.chars().count() > 2 && (t.ends_with("'s") || t.ends_with("’s"))
}

/// Token `i` is a word (has a letter or digit).
fn is_word(s: &Sent, i: usize) -> bool {
    s.tok(i).chars().any(char::is_alphanumeric)
}

/// All capitals, two or more letters ("AI", "NASA"): not a stop word even if it spells one.
fn is_acronym(t: &str) -> bool {
    t.chars().count() >= 2 && t.chars().all(|c| c.is_uppercase() || c.is_ascii_digit())
}

fn is_initial(t: &str) -> bool {
    let mut cs = t.chars();
    matches!((cs.next(), cs.next()), (Some(c), None) if c.is_uppercase())
}

/// Most tokens in one capitalised span.
const MAX_SPAN_TOKENS: usize = 16;

/// Maximal runs of capitalised words -> PERSON / ORGANIZATION / LOCATION / ENTITY.
fn cap_spans(s: &mut Sent, out: &mut Vec<Mention>) {
    let mut i = 0;
    while i < s.len() {
        if !(s.free(i) && s.is_cap(i)) {
            i += 1;
            continue;
        }
        let mut last = i;
        let mut has_of = false;
        // Names are short; a long run of capitalised words is a heading, cut in pieces.
        while let Some(next) = extend(s, i, last, &mut has_of).filter(|_| last - i < MAX_SPAN_TOKENS) {
            last = next;
        }
        finish_span(s, out, i, last);
        i = last + 1;
    }
}

/// The next token a capitalised span `first..=last` takes in, if any.
fn extend(s: &Sent, first: usize, last: usize, has_of: &mut bool) -> Option<usize> {
    let k = last + 1;
    if !s.free(k) {
        return None;
    }
    if possessive(s.tok(last)) {
        // "St Paul's Cathedral", "Men's Studies Press", but not "Google's Sundar Pichai".
        return (s.spaced(k) && s.is_cap(k) && POSSESSIVE_HEADS.contains(s.lower(cap_run_end(s, k)))).then_some(k);
    }
    let t = s.tok(k);
    // Hyphenated, dashed, slashed or plussed: "Wiley-Blackwell", "GPT-4", "East–West",
    // "AC/DC", "Science+Business".
    if matches!(t, "-" | "‑" | "–" | "/" | "+")
        && s.adjacent(k)
        && s.adjacent(k + 1)
        && s.free(k + 1)
        && (s.is_cap(k + 1) || s.is_digits(k + 1))
    {
        return Some(k + 1);
    }
    // Initials and abbreviations: "H. C. Ørsted", "George T. Solomon", "St. Louis".
    if t == "."
        && s.adjacent(k)
        && (is_initial(s.tok(last)) || ABBREVIATIONS.contains(s.lower(last)))
        && s.spaced(k + 1)
        && s.free(k + 1)
        && s.is_cap(k + 1)
    {
        return Some(k + 1);
    }
    if t == "&" && s.free(k + 1) && s.is_cap(k + 1) && s.adjacent(k) == s.adjacent(k + 1) {
        return Some(k + 1);
    }
    if !s.spaced(k) {
        return None;
    }
    if s.is_cap(k) {
        return Some(k);
    }
    if s.is_lower_word(k) && VI_COMPOUNDS.iter().any(|&(a, b)| a == s.lower(last) && b == s.lower(k)) {
        return Some(k);
    }
    // Connectors between capitalised words: "University of Copenhagen", "van der".
    let mut j = k;
    let mut conns: Vec<&str> = Vec::new();
    while j < k + 2 && s.spaced(j) && s.free(j) && s.is_lower_word(j) && is_connector(s.lower(j)) {
        conns.push(s.lower(j));
        j += 1;
    }
    if conns.is_empty() || !(s.spaced(j) && s.free(j) && s.is_cap(j)) {
        return None;
    }
    let ok = match conns[0] {
        "of" => conns.len() == 1 || conns[1] == "the" || PARTICLES.contains(conns[1]),
        "the" => conns.len() == 1,
        "and" => *has_of && conns.len() == 1,
        "for" | "on" => has(&ORG_WORDS, s.lower(last)) && (conns.len() == 1 || conns[1] == "the"),
        // "Giải Nguyên tử vì Hòa bình", "Bộ Giáo dục và Đào tạo" (not "Đại học A và Đại
        // học B": a second name starts there).
        "vì" | "và" => {
            conns.len() == 1 && VI_NAME_HEADS.contains(s.lower(first)) && !VI_NAME_HEADS.contains(s.lower(j))
        }
        p => PARTICLES.contains(p) && conns.iter().all(|c| PARTICLES.contains(c)),
    };
    if !ok {
        return None;
    }
    *has_of |= conns.contains(&"of");
    Some(j)
}

/// The last token of the run of spaced, free, capitalised words starting at `k` (at most
/// four words).
fn cap_run_end(s: &Sent, k: usize) -> usize {
    let mut r = k;
    while r < k + 3 && s.spaced(r + 1) && s.free(r + 1) && s.is_cap(r + 1) {
        r += 1;
    }
    r
}

fn is_connector(w: &str) -> bool {
    matches!(w, "of" | "the" | "and" | "for" | "on" | "vì" | "và") || PARTICLES.contains(w)
}

/// Trims a raw span `first..=last` (leading "The", honorifics, titles), drops ordinary
/// words, classifies it and records it.
fn finish_span(s: &mut Sent, out: &mut Vec<Mention>, first: usize, mut last: usize) {
    let words_in = |s: &Sent, a: usize, last: usize| (a..=last).filter(|&k| is_word(s, k)).count();
    let mut a = first;
    let mut person = false;
    while a < last && words_in(s, a, last) > 1 {
        let w = s.lower(a);
        let next_word = (a + 1..=last).find(|&k| is_word(s, k));
        if is_initial(s.tok(a)) && s.tok(a + 1) == "." {
            break; // "S. Epatha Merkerson"
        } else if !is_word(s, a) || s.is_lower_word(a) {
            a += 1;
        } else if has(&HONORIFICS, w)
            || (ROLE_TITLES.contains(w) && next_word.is_some_and(|k| s.is_cap(k) && s.spaced(k)))
        {
            person = true;
            a += 1;
        } else if (STARTERS.contains(w) || is_stop_word(w)) && !s.adjacent(a + 1) && !is_acronym(s.tok(a)) {
            a += 1; // ("All-America" keeps its "All")
        } else {
            break;
        }
    }
    while a < last && !is_word(s, a) {
        a += 1;
    }
    // A title or qualifier inside, before a name: "Democratic Senator Laura Kelly".
    if let Some(r) = (a..last).rev().find(|&r| {
        (ROLE_TITLES.contains(s.lower(r)) || QUALIFIERS.contains(s.lower(r)))
            && s.spaced(r + 1)
            && looks_like_name(s, r + 1, last)
    }) {
        a = r + 1;
        person = true;
    }
    let words = words_in(s, a, last);
    if words == 1 {
        let w = s.lower(a);
        // A common Vietnamese word opening a Vietnamese sentence ("Giải thưởng này...").
        let vi_opener =
            a == s.first_word && VI_COMMON.contains(w) && (!w.is_ascii() || detect_language(s.text) == Lang::Vi);
        let ordinary = !is_acronym(s.tok(a))
            && (STARTERS.contains(w)
                || is_stop_word(w)
                || HONORIFICS.contains(w)
                || ROLE_TITLES.contains(w)
                || vi_opener
                || en_opener(s, a));
        if s.tok(a).chars().count() < 2 || ordinary {
            return;
        }
    }
    // A prize or event may carry its year: "Giải Nobel Vật lý 1975".
    if (a..=last).any(|k| EVENT_WORDS.contains(s.lower(k)))
        && s.spaced(last + 1)
        && s.free(last + 1)
        && s.is_year(last + 1)
    {
        last += 1;
    }
    let start = s.toks[a].0;
    let mut end = s.toks[last].1;
    if possessive(s.tok(last)) {
        end -= if s.tok(last).ends_with("'s") { 2 } else { "’s".len() };
    }
    let entity_type = classify(s, a, last, person);
    s.take(first, last + 1);
    out.push(Mention {
        start,
        end,
        name: collapse(&s.text[start..end]),
        entity_type,
        initial_word: words == 1 && a == s.first_word,
    });
}

/// A participle or adverb opening an English sentence before a preposition or a comma:
/// "Situated in", "Founded by", "Unfortunately,".
fn en_opener(s: &Sent, a: usize) -> bool {
    let w = s.lower(a);
    a == s.first_word
        && w.len() >= 5
        && (w.ends_with("ed") || w.ends_with("ly"))
        && !PLACES.contains(w)
        && matches!(
            s.lower(a + 1),
            "," | "in"
                | "by"
                | "on"
                | "at"
                | "from"
                | "to"
                | "as"
                | "with"
                | "for"
                | "after"
                | "before"
                | "the"
                | "a"
                | "an"
        )
}

/// Years -> DATE; other numbers (with `%`, scale words or Chinese units) -> NUMBER.
/// Bare single digits are left out.
fn years_and_numbers(s: &mut Sent, out: &mut Vec<Mention>) {
    for i in 0..s.len() {
        if !s.free(i) {
            continue;
        }
        if s.is_year(i) {
            let era = s.spaced(i + 1) && matches!(s.tok(i + 1), "BC" | "AD" | "BCE" | "CE");
            push(s, out, i, i + 1 + usize::from(era), "DATE");
        } else if s.is_number(i) {
            let mut end = i + 1;
            if (s.adjacent(end) && matches!(s.tok(end), "%" | "％"))
                || (s.spaced(end) && s.free(end) && has(&SCALES, s.lower(end)))
            {
                end += 1;
            } else if s.adjacent(end) && s.is_cjk(end) {
                end += chinese::number_units(&s.cjk_run(end, 3));
            }
            if end > i + 1 || s.tok(i).len() > 1 {
                push(s, out, i, end, "NUMBER");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sentence_mentions;

    fn names(s: &str) -> Vec<(String, &'static str)> {
        sentence_mentions(s).into_iter().map(|m| (m.name, m.entity_type)).collect()
    }

    /// The rules of `chinese`, among the other detectors.
    #[test]
    fn chinese_spans() {
        let n = names("Microsoft宣布向OpenAI投资100亿美元，这是AI领域最大的投资之一。");
        assert!(n.contains(&("100亿美元".into(), "MONEY")), "{n:?}");
        assert!(n.contains(&("Microsoft".into(), "ENTITY")), "{n:?}");
        assert!(n.contains(&("OpenAI".into(), "ENTITY")), "{n:?}");
        let n = names("公司总部位于旧金山，由Sam Altman领导。");
        assert!(n.contains(&("旧金山".into(), "LOCATION")), "{n:?}");
        assert!(n.contains(&("Sam Altman".into(), "PERSON")), "{n:?}");
        let n = names("旧金山湾区是AI创新的中心。");
        assert!(n.contains(&("旧金山湾区".into(), "LOCATION")), "{n:?}");
        let n = names("北京大学的研究人员于2023年5月4日在中国人民银行发表报告，全国关注。");
        assert!(n.contains(&("北京大学".into(), "ORGANIZATION")), "{n:?}");
        assert!(n.contains(&("2023年5月4日".into(), "DATE")), "{n:?}");
        assert!(n.contains(&("中国人民银行".into(), "ORGANIZATION")), "{n:?}");
        assert!(!n.iter().any(|(x, _)| x == "全国"), "{n:?}");
    }

    /// The names of `zh_tags`, after the Chinese rules.
    #[test]
    fn tagged_chinese_names() {
        let n = names("小明硕士毕业于中国科学院计算所，后在日本京都大学深造。");
        assert!(n.contains(&("小明".into(), "PERSON")), "{n:?}");
        assert!(n.iter().any(|(x, t)| x.contains("京都大学") && *t == "ORGANIZATION"), "{n:?}");
        let n = names("今天纽约的天气真好啊，京华大酒店的张尧经理吃了一只北京烤鸭。");
        assert!(n.contains(&("纽约".into(), "LOCATION")), "{n:?}");
        assert!(n.contains(&("张尧".into(), "PERSON")), "{n:?}");
        let n = names("我就会升职加薪，当上CEO，走上人生巅峰。");
        assert!(!n.iter().any(|(x, _)| x == "加薪"), "{n:?}");
        let n = names("OpenAI的CEO Sam Altman表示这次合作将加速AI技术的发展。");
        assert!(n.contains(&("Sam Altman".into(), "PERSON")), "{n:?}");
        assert!(n.iter().any(|(x, _)| x == "OpenAI"), "{n:?}");
    }
}
