//! Stop words per language (lowercase). Vietnamese ones are also matched without their
//! diacritics when the text is Vietnamese ("co nhung gi" as typed for "có những gì").

use crate::lang::Lang;

/// English function words.
pub const EN_STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "did", "do", "does", "for", "from", "had", "has",
    "have", "he", "her", "his", "how", "i", "in", "into", "is", "it", "its", "of", "on", "or", "she", "that", "the",
    "their", "them", "they", "this", "to", "was", "were", "what", "when", "where", "which", "who", "whom", "whose",
    "why", "will", "with", "you", "s", "also", "than", "then", "there", "these", "those", "not", "no",
];

/// Vietnamese function syllables (conjunctions, prepositions, copula, classifiers,
/// question words).
pub const VI_STOP: &[&str] = &[
    "và", "của", "là", "có", "những", "các", "được", "trong", "cho", "với", "một", "này", "đã", "thì", "mà", "gì",
    "nào", "ở", "về", "để", "khi", "cũng", "như", "ai", "bao", "đó", "đây", "rằng", "sẽ", "đang", "bị", "vào", "nên",
    "nếu", "vì", "từ", "hay", "hoặc", "nhưng", "rất", "đâu", "sao", "thế", "nhiêu",
];

/// Vietnamese stop words without diacritics, for text typed without them: only those
/// whose folded form is not also a frequent content syllable ("trong" is also "trọng",
/// "cho" also "chợ", "thi" is also "exam": those stay).
pub const VI_STOP_FOLDED: &[&str] = &[
    "va", "cua", "la", "co", "nhung", "cac", "duoc", "voi", "mot", "gi", "nao", "khi", "nhu", "rang", "vao", "neu",
    "hoac", "nhieu",
];

/// Chinese function words and particles, as the segmenter cuts them.
pub const ZH_STOP: &[&str] = &[
    "的",
    "了",
    "是",
    "在",
    "有",
    "和",
    "与",
    "也",
    "就",
    "都",
    "而",
    "及",
    "什么",
    "么",
    "吗",
    "呢",
    "哪",
    "这",
    "那",
    "之",
    "其",
    "为",
    "着",
    "把",
    "被",
    "让",
    "从",
    "向",
    "对",
    "于",
    "以",
    "将",
    "到",
    "等",
    "或",
    "但",
    "并",
    "很",
    "又",
    "还",
    "个",
    "们",
    "我",
    "你",
    "他",
    "她",
    "它",
    "我们",
    "你们",
    "他们",
    "这个",
    "那个",
    "这些",
    "那些",
    "这是",
    "哪些",
    "哪个",
    "如何",
    "怎么",
    "怎样",
    "为什么",
    "因为",
    "所以",
    "如果",
    "虽然",
    "但是",
    "而且",
    "以及",
    "并且",
    "或者",
    "还是",
    "一个",
    "一些",
    "没有",
    "不是",
    "可以",
    "已经",
    "由",
    "给",
    "之一",
    "地",
    "得",
    "吧",
    "啊",
    "呀",
    "嘛",
    "哦",
    "所",
    "该",
    "此",
    "各",
    "每",
    "些",
    "其中",
];

/// True if `term` (lowercase) is a stop word of `lang`. For Vietnamese the folded forms
/// ([`VI_STOP_FOLDED`]) count too; Chinese text uses [`ZH_STOP`] for its Han words and
/// [`EN_STOP`] for the Latin words inside it.
pub fn is_stop_word_in(lang: Lang, term: &str) -> bool {
    if term.starts_with(crate::lang::is_han) {
        return ZH_STOP.contains(&term);
    }
    match lang {
        Lang::Vi => VI_STOP.contains(&term) || VI_STOP_FOLDED.contains(&term),
        Lang::En | Lang::Zh => EN_STOP.contains(&term),
    }
}
