//! Text utilities shared by ingestion and retrieval: tokens for chunking, multilingual
//! BM25 terms, sentence splitting.
//!
//! BM25 terms ([`bm25_terms`]): Latin-script words are lowercased whole words
//! (Vietnamese syllables keep their diacritics, and add a folded twin so that text typed
//! without diacritics matches); Chinese is cut into words by a dictionary segmenter
//! ([`zh`], jieba). Stop words are dropped per language ([`stop`]). Text is read in
//! Unicode NFC ([`nfc`]): a word typed with combining marks is the same word precomposed.

pub mod fold;
pub mod stop;
pub mod zh;

use std::borrow::Cow;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};
use unicode_segmentation::UnicodeSegmentation;

use crate::lang::{detect_language, is_han, Lang};
pub use fold::fold_diacritics;
pub use stop::is_stop_word_in;

/// `text` in Unicode Normalization Form C: combining marks composed with their letters
/// where a precomposed letter exists ("e\u{301}" -> "é", Vietnamese "ệ" typed as
/// "e\u{323}\u{302}" -> "ệ"). Borrowed when `text` is already NFC (the usual case, checked
/// quickly). Documents are normalised when loaded and questions when asked, so the same
/// word is the same entity and the same term whichever way it was typed.
pub fn nfc(text: &str) -> Cow<'_, str> {
    match is_nfc_quick(text.chars()) {
        IsNormalized::Yes => Cow::Borrowed(text),
        _ => {
            let composed: String = text.nfc().collect();
            if composed == text {
                Cow::Borrowed(text)
            } else {
                Cow::Owned(composed)
            }
        }
    }
}

/// True for Han ideographs, kana and Hangul (scripts written without spaces).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF
        | 0xAC00..=0xD7AF | 0x20000..=0x2FA1F)
}

/// Byte ranges of the chunking tokens of `text`: each word, number, punctuation mark and
/// CJK character is one token; whitespace is not.
pub fn token_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (start, seg) in text.split_word_bound_indices() {
        if seg.chars().all(char::is_whitespace) {
            continue;
        }
        if seg.chars().any(is_cjk) {
            for (i, c) in seg.char_indices() {
                out.push((start + i, start + i + c.len_utf8()));
            }
        } else {
            out.push((start, start + seg.len()));
        }
    }
    out
}

/// Number of chunking tokens in `text`.
pub fn count_tokens(text: &str) -> usize {
    token_spans(text).len()
}

/// True if `term` (lowercase) is a stop word in English, Vietnamese or Chinese (any of
/// them; [`stop::is_stop_word_in`] checks one language).
pub fn is_stop_word(term: &str) -> bool {
    stop::EN_STOP.contains(&term) || stop::VI_STOP.contains(&term) || stop::ZH_STOP.contains(&term)
}

/// BM25 terms of `text`, in order, stop words of its language removed.
///
/// The language is [`detect_language`]'s, for a document and a query alike. Latin-script
/// words are lowercased whole words (Vietnamese syllables keep their diacritics); a word
/// with diacritics is followed by its folded form ([`fold_diacritics`]: `thưởng` gives
/// `thưởng`, `thuong`), so a query typed without diacritics matches, and one typed with
/// them matches the exact form too and ranks it first. Runs of Han characters are cut
/// into words by jieba ([`zh::segment_for_search`]). The text is read in NFC ([`nfc`]).
pub fn bm25_terms(text: &str) -> Vec<String> {
    let text = nfc(text);
    terms_in(detect_language(&text), &text)
}

/// [`bm25_terms`] with the language given.
pub fn terms_in(lang: Lang, text: &str) -> Vec<String> {
    let text = nfc(text);
    let text = text.as_ref();
    let mut out = Vec::new();
    let mut han_run: Option<(usize, usize)> = None;
    for (start, seg) in text.split_word_bound_indices() {
        if seg.starts_with(is_han) {
            let run = han_run.get_or_insert((start, start));
            run.1 = start + seg.len();
            continue;
        }
        if let Some((a, b)) = han_run.take() {
            push_chinese(&text[a..b], &mut out);
        }
        if seg.chars().any(char::is_alphanumeric) {
            push_word(lang, seg, &mut out);
        }
    }
    if let Some((a, b)) = han_run {
        push_chinese(&text[a..b], &mut out);
    }
    out
}

/// A Latin-script (or other non-Han) word: lowercased, then its folded form if that
/// differs. All-capital words ("AI") are never Vietnamese stop words ("ai": who).
fn push_word(lang: Lang, word: &str, out: &mut Vec<String>) {
    let lower = word.to_lowercase();
    let acronym = lang == Lang::Vi && word.chars().count() >= 2 && !word.chars().any(char::is_lowercase);
    if !acronym && is_stop_word_in(lang, &lower) {
        return;
    }
    if lower.is_ascii() {
        out.push(lower);
        return;
    }
    let folded = fold_diacritics(&lower);
    let keep_folded = folded != lower && (acronym || !is_stop_word_in(lang, &folded));
    out.push(lower);
    if keep_folded {
        out.push(folded);
    }
}

/// A run of Han characters: its words ([`zh::segment_for_search`]), stop words and
/// punctuation dropped.
fn push_chinese(run: &str, out: &mut Vec<String>) {
    for w in zh::segment_for_search(run) {
        if w.chars().any(char::is_alphanumeric) && !stop::ZH_STOP.contains(&w) {
            out.push(w.to_string());
        }
    }
}

/// Runs of at least this many characters that are not letters (whitespace, digits,
/// punctuation) are sentence boundaries and are not given to the Unicode sentence
/// segmenter, whose look-ahead scans such a run from every position of it: 32 K tabs
/// after a full stop took 25 s (found by the fuzzer).
const LONG_NON_LETTER_RUN: usize = 64;

/// `text` cut to at most `max` bytes: at its last whitespace before that, else at a char
/// boundary. Bounds the work (and memory) of tokenising a huge text of which only the first
/// tokens are kept.
pub fn clip(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    head.rfind(char::is_whitespace).map_or(head, |i| &text[..i])
}

/// Sentences of `text` (Unicode sentence boundaries, plus line breaks), trimmed, non-empty,
/// with their byte offsets. A run of 64 or more non-letters (a rule of dashes, a table of
/// numbers, padding) is a sentence of its own, so the time taken stays linear.
pub fn sentences(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut off = 0;
    // A line break ends a sentence for the segmenter too (it never looks across one), so
    // lines can be segmented one by one.
    for line in text.split('\n') {
        let mut prose = 0;
        for (run, b) in long_non_letter_runs(line) {
            // The full stop or closing quote a run starts with stays with its sentence.
            let a = line[run..b].char_indices().take(8).find(|(_, c)| c.is_whitespace()).map_or(run, |(i, _)| run + i);
            segment(&line[prose..a], off + prose, &mut out);
            push_trimmed(&line[a..b], off + a, &mut out);
            prose = b;
        }
        segment(&line[prose..], off + prose, &mut out);
        off += line.len() + 1;
    }
    out
}

fn segment<'a>(piece: &'a str, at: usize, out: &mut Vec<(usize, &'a str)>) {
    for (start, s) in piece.split_sentence_bound_indices() {
        push_trimmed(s, at + start, out);
    }
}

fn push_trimmed<'a>(s: &'a str, at: usize, out: &mut Vec<(usize, &'a str)>) {
    let t = s.trim();
    if !t.is_empty() {
        out.push((at + s.len() - s.trim_start().len(), t));
    }
}

/// Byte ranges of the maximal runs of at least [`LONG_NON_LETTER_RUN`] non-letters.
fn long_non_letter_runs(line: &str) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (byte offset, chars so far)
    for (i, c) in line.char_indices() {
        if c.is_alphabetic() {
            if let Some((a, n)) = start.take() {
                if n >= LONG_NON_LETTER_RUN {
                    runs.push((a, i));
                }
            }
        } else {
            let run = start.get_or_insert((i, 0));
            run.1 += 1;
        }
    }
    if let Some((a, n)) = start {
        if n >= LONG_NON_LETTER_RUN {
            runs.push((a, line.len()));
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_at_whitespace_or_char_boundary() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("one two three", 9), "one two");
        assert_eq!(clip("ééééé", 5), "éé");
        assert_eq!(clip("", 0), "");
    }

    #[test]
    fn bm25_terms_handle_three_languages() {
        assert_eq!(bm25_terms("The Journal of Physics"), vec!["journal", "physics"]);
        let vi = bm25_terms("Aage Bohr có những giải thưởng gì?");
        assert_eq!(vi, vec!["aage", "bohr", "giải", "giai", "thưởng", "thuong"]);
        assert_eq!(bm25_terms("Aage Bohr co nhung giai thuong gi?"), vec!["aage", "bohr", "giai", "thuong"]);
        let zh = bm25_terms("Sam Altman领导的公司在AI领域有什么重要投资？");
        for w in ["sam", "altman", "领导", "公司", "ai", "领域", "重要", "投资"] {
            assert!(zh.contains(&w.to_string()), "{w} missing from {zh:?}");
        }
        for w in ["的", "在", "有", "什么", "？"] {
            assert!(!zh.contains(&w.to_string()), "{w} kept in {zh:?}");
        }
        // "AI" written in capitals is not the Vietnamese stop word "ai" (who).
        let vi_ai = bm25_terms("Ai là người phát triển AI tại Việt Nam?");
        assert_eq!(vi_ai.iter().filter(|t| *t == "ai").count(), 1, "{vi_ai:?}");
        // Words with diacritics in English text get a folded twin too.
        assert_eq!(bm25_terms("Beyoncé"), vec!["beyoncé", "beyonce"]);
    }

    #[test]
    fn decomposed_and_precomposed_text_give_the_same_terms() {
        use unicode_normalization::UnicodeNormalization;
        let composed = "Aage Bohr đoạt giải Nobel Vật lý năm 1975 cùng Ben Mottelson. Beyoncé.";
        let decomposed: String = composed.nfd().collect();
        assert_ne!(decomposed, composed);
        assert_eq!(nfc(&decomposed), composed);
        assert!(matches!(nfc(composed), Cow::Borrowed(_)));
        assert_eq!(bm25_terms(&decomposed), bm25_terms(composed));
        assert!(bm25_terms(&decomposed).contains(&"đoạt".to_string()));
        assert_eq!(terms_in(Lang::Vi, &decomposed), terms_in(Lang::Vi, composed));
        assert_eq!(nfc("plain ascii"), "plain ascii");
    }

    /// BM25 (k1 = 1.2, b = 0.75) of `query` over `docs`, best first, ties by index.
    fn bm25_rank(docs: &[&str], query: &str) -> Vec<(usize, f32)> {
        let d: Vec<Vec<String>> = docs.iter().map(|t| bm25_terms(t)).collect();
        let avg = d.iter().map(Vec::len).sum::<usize>() as f32 / d.len() as f32;
        let mut q = bm25_terms(query);
        q.sort();
        q.dedup();
        let mut scores: Vec<(usize, f32)> = (0..docs.len()).map(|i| (i, 0.0)).collect();
        for t in &q {
            let df = d.iter().filter(|x| x.contains(t)).count() as f32;
            let idf = (1.0 + (d.len() as f32 - df + 0.5) / (df + 0.5)).ln();
            for (i, x) in d.iter().enumerate() {
                let tf = x.iter().filter(|y| *y == t).count() as f32;
                scores[i].1 += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * x.len() as f32 / avg));
            }
        }
        scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scores
    }

    #[test]
    fn vietnamese_query_without_diacritics_matches_diacritic_text() {
        let docs = [
            "Aage Bohr đoạt giải Nobel Vật lý năm 1975 cùng Ben Mottelson.",
            "Niels Bohr sinh tại Copenhagen, thủ đô của Đan Mạch.",
            "Huy chương Rutherford được đặt theo tên Ernest Rutherford.",
        ];
        let r = bm25_rank(&docs, "Aage Bohr doat giai Nobel nam nao");
        assert_eq!(r[0].0, 0, "{r:?}");
        assert!(r[0].1 > r[1].1);
        let r = bm25_rank(&docs, "thu do Dan Mach");
        assert_eq!(r[0].0, 1, "{r:?}");
        assert!(r[1].1 == 0.0, "{r:?}");
        // Typed with diacritics, the exact syllable outranks another one that folds the
        // same ("đỗ" and "độ" both fold to "do").
        let docs = ["Nhiệt độ tại Hà Nội.", "Anh ấy thi đỗ tại Hà Nội.", "Trời mưa ở Huế."];
        let r = bm25_rank(&docs, "nhiệt độ");
        assert_eq!(r[0].0, 0, "{r:?}");
        let r = bm25_rank(&docs, "thi đỗ");
        assert_eq!(r[0].0, 1, "{r:?}");
        let r = bm25_rank(&docs, "ha noi");
        assert!(r[0].1 > 0.0 && r[1].1 > 0.0 && r[2].1 == 0.0, "{r:?}");
        let r = bm25_rank(&docs, "độ");
        assert_eq!(r[0].0, 0, "{r:?}");
        assert!(r[0].1 > r[1].1 && r[1].1 > 0.0, "{r:?}");
    }

    #[test]
    fn sentences_of_long_non_letter_runs_are_linear() {
        // 32 K tabs after a full stop: 25 s in the segmenter before (found by the fuzzer).
        let text = format!("Quoted.{}end. Next one.\n{} Last.", "\t".repeat(32_000), "1 ".repeat(20_000));
        let s = sentences(&text);
        let texts: Vec<&str> = s.iter().map(|x| x.1).collect();
        assert_eq!(texts[0], "Quoted.");
        assert_eq!(texts[1], "end.");
        assert_eq!(texts[2], "Next one.");
        assert_eq!(*texts.last().unwrap(), "Last.");
        for (at, s) in &s {
            assert_eq!(&text[*at..*at + s.len()], *s);
        }
    }

    #[test]
    fn tokens_and_sentences() {
        assert_eq!(count_tokens("Hello, world!"), 4);
        assert_eq!(count_tokens("微软投资"), 4);
        let s = sentences("First one. Second one!\nThird 第三句。第四句。");
        let texts: Vec<&str> = s.iter().map(|x| x.1).collect();
        assert_eq!(texts[0], "First one.");
        assert_eq!(texts[1], "Second one!");
        assert!(texts.len() >= 4, "{texts:?}");
        for (off, t) in &s {
            assert!("First one. Second one!\nThird 第三句。第四句。"[*off..].starts_with(t));
        }
    }
}
