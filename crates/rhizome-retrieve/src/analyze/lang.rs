//! Which language a question is written in: English, Vietnamese or Chinese, by script and
//! diacritics (self-contained: no model, no dictionary beyond a list of syllables).

use serde::{Deserialize, Serialize};

/// A language the rules know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Language {
    #[serde(rename = "en")]
    English,
    #[serde(rename = "vi")]
    Vietnamese,
    #[serde(rename = "zh")]
    Chinese,
}

impl Language {
    /// ISO 639-1 code: `en`, `vi`, `zh`.
    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::Vietnamese => "vi",
            Language::Chinese => "zh",
        }
    }

    /// A code or name (`en`, `English`, `zh-CN`, `中文`, `tiếng Việt`...), if it is one of
    /// the three.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_lowercase();
        let head = s.split(['-', '_', ' ']).next().unwrap_or("");
        match (s.as_str(), head) {
            (_, "en" | "english" | "eng") => Some(Language::English),
            (_, "vi" | "vietnamese" | "vie") | ("tiếng việt", _) => Some(Language::Vietnamese),
            (_, "zh" | "chinese" | "zho" | "cmn" | "mandarin") | ("中文" | "汉语" | "漢語", _) => {
                Some(Language::Chinese)
            }
            _ => None,
        }
    }
}

pub(crate) use rhizome_core::lang::is_han;

/// Common Vietnamese syllables written without diacritics (as people often type them);
/// none is a common English word.
pub(crate) const VI_PLAIN: &[&str] = &[
    "ai", "bao", "cac", "cho", "co", "cua", "duoc", "gi", "giai", "khac", "khi", "khong", "la", "lam", "mot", "nam",
    "nao", "nay", "nguoi", "nhau", "nhieu", "nhu", "nhung", "noi", "sanh", "sao", "tai", "thi", "thuong", "trong",
    "va", "vao", "ve", "vi", "voi", "cong", "ty", "ong", "truong", "dai", "hoc", "viet", "quoc", "gia", "den", "tren",
    "duoi", "sau", "truoc", "dang", "da", "se", "ra", "cung", "nen", "biet", "lanh", "dao", "ket", "qua", "thuoc",
    "con",
];

/// The language of `text`, by the detector every part of Rhizome uses
/// ([`rhizome_core::lang::detect_language`]).
pub fn detect_language(text: &str) -> Language {
    match rhizome_core::lang::detect_language(text) {
        rhizome_core::lang::Lang::En => Language::English,
        rhizome_core::lang::Lang::Vi => Language::Vietnamese,
        rhizome_core::lang::Lang::Zh => Language::Chinese,
    }
}

/// Lowercase `s` and strip Vietnamese diacritics (`Như thế nào` -> `nhu the nao`), so cues
/// match questions typed without them.
pub(crate) fn fold(s: &str) -> String {
    rhizome_core::text::fold_diacritics(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_and_diacritics() {
        assert_eq!(detect_language("Sam Altman领导的公司在AI领域有什么重要投资？"), Language::Chinese);
        assert_eq!(detect_language("Aage Bohr có những giải thưởng gì?"), Language::Vietnamese);
        assert_eq!(detect_language("Aage Bohr co nhung giai thuong gi?"), Language::Vietnamese);
        assert_eq!(detect_language("Who is Nguyễn Phú Trọng?"), Language::English);
        assert_eq!(detect_language("What is the capital of France?"), Language::English);
        assert_eq!(detect_language("What does 北京 mean in English?"), Language::English);
        assert_eq!(detect_language("Tại sao bầu trời màu xanh?"), Language::Vietnamese);
        assert_eq!(fold("Như THẾ nào, Đà Nẵng"), "nhu the nao, da nang");
        assert_eq!(Language::parse("zh-CN"), Some(Language::Chinese));
        assert_eq!(Language::parse("Vietnamese"), Some(Language::Vietnamese));
        assert_eq!(Language::parse("fr"), None);
    }
}
