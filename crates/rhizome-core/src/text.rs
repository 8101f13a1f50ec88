//! Text utilities shared by ingestion and retrieval: tokens for chunking, multilingual
//! BM25 terms, sentence splitting.
//!
//! BM25 terms: Latin-script words are lowercased whole words (Vietnamese syllables keep
//! their diacritics); runs of CJK ideographs give character unigrams and bigrams, which
//! matches Chinese words without a dictionary. Stop words are dropped per language.

use unicode_segmentation::UnicodeSegmentation;

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

const EN_STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "did", "do", "does", "for",
    "from", "had", "has", "have", "he", "her", "his", "how", "i", "in", "into", "is", "it",
    "its", "of", "on", "or", "she", "that", "the", "their", "them", "they", "this", "to", "was",
    "were", "what", "when", "where", "which", "who", "whom", "whose", "why", "will", "with",
    "you", "s", "also", "than", "then", "there", "these", "those", "not", "no",
];
const VI_STOP: &[&str] = &[
    "và", "của", "là", "có", "những", "các", "được", "trong", "cho", "với", "một", "này",
    "đã", "thì", "mà", "gì", "nào", "ở", "về", "để", "khi", "cũng", "như", "ai", "bao",
];
const ZH_STOP: &[&str] = &[
    "的", "了", "是", "在", "有", "和", "与", "也", "就", "都", "而", "及", "什么", "么", "吗",
    "呢", "哪", "这", "那", "之", "其", "为",
];

/// True if `term` (lowercased) is a stop word in English, Vietnamese or Chinese.
pub fn is_stop_word(term: &str) -> bool {
    EN_STOP.contains(&term) || VI_STOP.contains(&term) || ZH_STOP.contains(&term)
}

/// BM25 terms of `text`, in order, stop words removed.
pub fn bm25_terms(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut run: Vec<char> = Vec::new();
    for seg in lower.split_word_bounds() {
        let mut chars = seg.chars();
        let first = chars.next().unwrap_or(' ');
        if is_cjk(first) {
            run.extend(seg.chars());
            continue;
        }
        flush_cjk_run(&mut run, &mut out);
        if seg.chars().any(char::is_alphanumeric) && !is_stop_word(seg) {
            out.push(seg.to_string());
        }
    }
    flush_cjk_run(&mut run, &mut out);
    out
}

/// A run of CJK characters gives its unigrams and bigrams.
fn flush_cjk_run(run: &mut Vec<char>, out: &mut Vec<String>) {
    for (i, c) in run.iter().enumerate() {
        let s = c.to_string();
        if !is_stop_word(&s) {
            out.push(s);
        }
        if let Some(n) = run.get(i + 1) {
            let bi: String = [*c, *n].iter().collect();
            if !is_stop_word(&bi) {
                out.push(bi);
            }
        }
    }
    run.clear();
}

/// Sentences of `text` (Unicode sentence boundaries, plus line breaks), trimmed, non-empty,
/// with their byte offsets.
pub fn sentences(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    for (start, s) in text.split_sentence_bound_indices() {
        let mut off = start;
        for line in s.split('\n') {
            let t = line.trim();
            if !t.is_empty() {
                let lead = line.len() - line.trim_start().len();
                out.push((off + lead, t));
            }
            off += line.len() + 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_terms_handle_three_languages() {
        assert_eq!(bm25_terms("The Journal of Physics"), vec!["journal", "physics"]);
        let vi = bm25_terms("Aage Bohr có những giải thưởng gì?");
        assert_eq!(vi, vec!["aage", "bohr", "giải", "thưởng"]);
        let zh = bm25_terms("Sam Altman领导的公司");
        assert!(zh.contains(&"sam".to_string()));
        assert!(zh.contains(&"altman".to_string()));
        assert!(zh.contains(&"领导".to_string()));
        assert!(zh.contains(&"公司".to_string()));
        assert!(!zh.contains(&"的".to_string()));
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
