//! Language detection for documents and questions: English, Vietnamese or Chinese, from
//! the script, Vietnamese letters and tone marks, and common Vietnamese syllables. No
//! model: it runs on every chunk and query.

use serde::{Deserialize, Serialize};

/// A language Rhizome's text processing knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Lang {
    /// English, and any text that is neither Chinese nor Vietnamese.
    #[serde(rename = "en")]
    En,
    /// Vietnamese, with or without diacritics.
    #[serde(rename = "vi")]
    Vi,
    /// Chinese (Han characters are the dominant script).
    #[serde(rename = "zh")]
    Zh,
}

impl Lang {
    /// ISO 639-1 code: `en`, `vi` or `zh`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Vi => "vi",
            Lang::Zh => "zh",
        }
    }

    /// A code or name (`en`, `English`, `zh-CN`, `中文`, `tiếng Việt`...), if it is one of
    /// the three.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_lowercase();
        let head = s.split(['-', '_', ' ']).next().unwrap_or("");
        match (s.as_str(), head) {
            (_, "en" | "english" | "eng") => Some(Lang::En),
            (_, "vi" | "vietnamese" | "vie") | ("tiếng việt", _) => Some(Lang::Vi),
            (_, "zh" | "chinese" | "zho" | "cmn" | "mandarin") | ("中文" | "汉语" | "漢語", _) => Some(Lang::Zh),
            _ => None,
        }
    }
}

impl std::fmt::Display for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// Han ideographs: CJK unified (and extension A, B+), compatibility ideographs.
pub fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// Letters only Vietnamese uses (among the languages Rhizome meets in Latin script): đ,
/// ă, ơ, ư, the precomposed vowels with a Vietnamese tone mark (U+1EA0..U+1EF9), and the
/// combining hook above, horn and dot below of decomposed text.
pub fn is_vi_letter(c: char) -> bool {
    matches!(c, 'đ' | 'Đ' | 'ă' | 'Ă' | 'ơ' | 'Ơ' | 'ư' | 'Ư' | '\u{0309}' | '\u{031B}' | '\u{0323}')
        || ('\u{1EA0}'..='\u{1EF9}').contains(&c)
}

/// Accented vowels Vietnamese shares with other Latin-script languages.
fn is_shared_accent(c: char) -> bool {
    "àáâãèéêìíòóôõùúýÀÁÂÃÈÉÊÌÍÒÓÔÕÙÚÝ\u{0300}\u{0301}\u{0303}".contains(c)
}

/// Frequent Vietnamese syllables as typed without diacritics; none is an English word
/// that English running text uses often.
const VI_PLAIN: &[&str] = &[
    "bao", "cac", "cho", "co", "cua", "duoc", "gi", "giai", "khac", "khi", "khong", "la", "lam", "mot", "nao", "nay",
    "nguoi", "nhau", "nhieu", "nhu", "nhung", "noi", "sao", "thi", "thuong", "trong", "va", "vao", "voi", "cong",
    "truong", "hoc", "viet", "quoc", "gia", "tren", "duoi", "truoc", "dang", "cung", "nen", "biet", "lanh", "dao",
    "ket", "thuoc", "sinh", "nhat", "nuoc", "thanh", "pho", "duong", "chinh", "tinh", "huyen", "nghiep", "phat",
    "trien", "dau", "tu", "ngay", "thang", "nam", "cau", "hoi", "tra", "loi", "ban", "toi", "chung", "minh",
];

/// English function words, the counterweight to Vietnamese evidence.
const EN_FUNCTION: &[&str] = &[
    "the", "of", "and", "a", "an", "in", "on", "at", "to", "is", "was", "are", "were", "for", "with", "by", "from",
    "that", "this", "which", "who", "what", "when", "where", "how", "as", "it", "its", "his", "her", "their", "be",
    "been", "has", "have", "had", "did", "does", "do", "not", "or", "but",
];

/// Evidence for Vietnamese and English in a list of words.
#[derive(Default)]
struct Votes {
    vi: usize,
    vi_letter: usize,
    en: usize,
}

fn votes<'a>(words: impl Iterator<Item = &'a str>) -> Votes {
    let mut v = Votes::default();
    for w in words {
        if w.chars().any(is_vi_letter) {
            v.vi += 1;
            v.vi_letter += 1;
        } else if w.chars().any(is_shared_accent) {
            v.vi += 1;
        } else {
            let low = w.to_ascii_lowercase();
            if VI_PLAIN.contains(&low.as_str()) {
                v.vi += 1;
            } else if EN_FUNCTION.contains(&low.as_str()) {
                v.en += 1;
            }
        }
    }
    v
}

/// The language of `text` (a document or a question).
///
/// - Chinese when Han characters are at least as many as the words in other scripts (a
///   Chinese sentence naming "Sam Altman" or "OpenAI" is Chinese; an English question
///   quoting "北京" is English).
/// - Vietnamese when, among the lowercase words (names are capitalised in every language,
///   so "Who is Nguyễn Phú Trọng?" stays English), words with Vietnamese diacritics or
///   common Vietnamese syllables typed without them outnumber English function words,
///   with at least two such words or one letter only Vietnamese has (ă đ ơ ư, tone marks).
///   Text with no lowercase word is judged on all its words.
/// - English otherwise (including empty text).
pub fn detect_language(text: &str) -> Lang {
    let han = text.chars().filter(|&c| is_han(c)).count();
    let is_word_char = |c: char| (c.is_alphanumeric() && !is_han(c)) || ('\u{0300}'..='\u{036F}').contains(&c);
    let words: Vec<&str> =
        text.split(|c: char| !is_word_char(c)).filter(|w| w.chars().any(char::is_alphabetic)).collect();
    if han > 0 && han >= words.len() {
        return Lang::Zh;
    }
    let lower = votes(words.iter().copied().filter(|w| !w.starts_with(char::is_uppercase)));
    let v = if lower.vi + lower.en == 0 { votes(words.iter().copied()) } else { lower };
    if v.vi > v.en && (v.vi >= 2 || v.vi_letter >= 1) {
        Lang::Vi
    } else {
        Lang::En
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_three_languages() {
        assert_eq!(detect_language("Sam Altman领导的公司在AI领域有什么重要投资？"), Lang::Zh);
        assert_eq!(detect_language("Microsoft宣布向OpenAI投资100亿美元"), Lang::Zh);
        assert_eq!(detect_language("Aage Bohr có những giải thưởng gì?"), Lang::Vi);
        assert_eq!(detect_language("Aage Bohr co nhung giai thuong gi?"), Lang::Vi);
        assert_eq!(detect_language("Tại sao bầu trời màu xanh?"), Lang::Vi);
        assert_eq!(detect_language("Đại Học Quốc Gia Hà Nội"), Lang::Vi);
        assert_eq!(detect_language("phở"), Lang::Vi);
        assert_eq!(detect_language("Who is Nguyễn Phú Trọng?"), Lang::En);
        assert_eq!(detect_language("What is the capital of France?"), Lang::En);
        assert_eq!(detect_language("What does 北京 mean in English?"), Lang::En);
        assert_eq!(detect_language("He ordered a café au lait."), Lang::En);
        assert_eq!(detect_language(""), Lang::En);
        assert_eq!(detect_language("12345 !!!"), Lang::En);
        assert_eq!(Lang::Vi.to_string(), "vi");
    }

    #[test]
    fn english_text_with_vietnamese_names_stays_english() {
        let t = "The Perfume River flows through Huế, where Nguyễn Phúc Ánh was crowned in 1802; \
                 the Đồng Khánh era followed later.";
        assert_eq!(detect_language(t), Lang::En);
    }
}
