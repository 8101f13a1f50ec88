//! Which language a question is written in: English, Vietnamese or Chinese, by script and
//! diacritics (self-contained: no model, no dictionary beyond a list of syllables).

pub(crate) use rhizome_core::lang::is_han;
pub use rhizome_core::lang::{detect_language, Lang};

/// Common Vietnamese syllables written without diacritics (as people often type them);
/// none is a common English word.
pub(crate) const VI_PLAIN: &[&str] = &[
    "ai", "bao", "cac", "cho", "co", "cua", "duoc", "gi", "giai", "khac", "khi", "khong", "la", "lam", "mot", "nam",
    "nao", "nay", "nguoi", "nhau", "nhieu", "nhu", "nhung", "noi", "sanh", "sao", "tai", "thi", "thuong", "trong",
    "va", "vao", "ve", "vi", "voi", "cong", "ty", "ong", "truong", "dai", "hoc", "viet", "quoc", "gia", "den", "tren",
    "duoi", "sau", "truoc", "dang", "da", "se", "ra", "cung", "nen", "biet", "lanh", "dao", "ket", "qua", "thuoc",
    "con",
];

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
        assert_eq!(detect_language("Sam Altman领导的公司在AI领域有什么重要投资？"), Lang::Zh);
        assert_eq!(detect_language("Aage Bohr có những giải thưởng gì?"), Lang::Vi);
        assert_eq!(detect_language("Aage Bohr co nhung giai thuong gi?"), Lang::Vi);
        assert_eq!(detect_language("Who is Nguyễn Phú Trọng?"), Lang::En);
        assert_eq!(detect_language("What is the capital of France?"), Lang::En);
        assert_eq!(detect_language("What does 北京 mean in English?"), Lang::En);
        assert_eq!(detect_language("Tại sao bầu trời màu xanh?"), Lang::Vi);
        assert_eq!(fold("Như THẾ nào, Đà Nẵng"), "nhu the nao, da nang");
        assert_eq!(Lang::parse("zh-CN"), Some(Lang::Zh));
        assert_eq!(Lang::parse("Vietnamese"), Some(Lang::Vi));
        assert_eq!(Lang::parse("fr"), None);
    }
}
