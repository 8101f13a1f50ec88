//! Cue words per language. English and Vietnamese cues match whole words (Vietnamese
//! also without diacritics); Chinese cues match as substrings.

use super::Language;

/// The cue lists of one language.
pub(crate) struct Cues {
    /// The question sets things side by side.
    pub comparative: &'static [&'static str],
    /// With two names or more: the names are set side by side ("both", "the same").
    pub pair: &'static [&'static str],
    /// The question asks why / how / for effects or explanations.
    pub analytical: &'static [&'static str],
    /// The question is about the corpus as a whole (themes, overview).
    pub thematic: &'static [&'static str],
    /// Question words of factual questions.
    pub factual: &'static [&'static str],
    /// Relative-clause markers (a second hop hangs off a noun).
    pub relative: &'static [&'static str],
    /// Possessive links (`of`, `của`, `的`): two or more make a chain.
    pub possessive: &'static [&'static str],
    /// The question asks how two named things are connected (a path between them).
    pub relation: &'static [&'static str],
    /// Clause and list conjunctions.
    pub conjunction: &'static [&'static str],
    /// Openers or closers of elliptical follow-ups ("what about ...", "còn ... thì sao",
    /// "...呢"), longest first.
    pub follow_open: &'static [&'static str],
    pub follow_close: &'static [&'static str],
    /// Pronouns that refer to a person, then to anything; possessive determiners.
    pub pronoun_person: &'static [&'static str],
    pub pronoun_other: &'static [&'static str],
    pub pronoun_possessive: &'static [&'static str],
    /// Words that are never key concepts (question words, auxiliaries, imperatives). For
    /// Chinese they also split character runs into terms, so single characters that often
    /// sit inside words (中, 要, 会...) are left out.
    pub function: &'static [&'static str],
}

pub(crate) fn cues(lang: Language) -> &'static Cues {
    match lang {
        Language::English => &EN,
        Language::Vietnamese => &VI,
        Language::Chinese => &ZH,
    }
}

static EN: Cues = Cues {
    comparative: &[
        "compare", "compared", "comparing", "comparison", "difference", "differences", "differ",
        "differs", "different from", "versus", "vs", "contrast", "similarities", "similarity",
        "similar to", "in common", "better than", "worse than", "the same as", "which is better",
        "pros and cons",
    ],
    pair: &["both", "same", "either", "neither"],
    analytical: &[
        "why", "how does", "how do", "how did", "how can", "how could", "how has", "how have",
        "how is", "how are", "how was", "how were", "how would", "impact", "impacts", "effect",
        "effects", "affect", "affected", "influence", "influenced", "cause", "causes", "caused",
        "consequence", "consequences", "explain", "analyze", "analyse", "evaluate", "assess",
        "significance", "role of", "implications", "reasons", "reason", "what factors",
        "relationship between", "contribute", "contributed", "lead to", "led to", "result in",
        "trend", "trends", "themes", "overview", "summarize", "summarise",
    ],
    thematic: &[
        "main themes", "themes", "overall", "in general", "across", "summarize", "summarise",
        "overview", "trends", "key topics", "landscape", "the corpus", "the documents",
    ],
    factual: &[
        "who", "whom", "whose", "what", "when", "where", "which", "how many", "how much",
        "how old", "how long", "what year", "is", "was", "did", "does",
    ],
    relative: &["who", "whom", "whose", "which", "that", "where", "when"],
    possessive: &["of", "'s", "’s"],
    relation: &[
        "related", "relation", "relationship", "relationships", "connection", "connections",
        "connected", "link", "linked", "links", "in common", "ties",
    ],
    conjunction: &["and", "or", "but", "while", "whereas"],
    follow_open: &["and what about", "what about", "how about", "what else", "and", "also"],
    follow_close: &[],
    pronoun_person: &["he", "she", "him", "his", "her", "hers"],
    pronoun_other: &["it", "its", "they", "them", "their", "theirs"],
    pronoun_possessive: &["his", "her", "hers", "its", "their", "theirs"],
    function: &[
        "what", "who", "whom", "whose", "which", "when", "where", "why", "how", "is", "are",
        "was", "were", "do", "does", "did", "can", "could", "would", "should", "will", "shall",
        "has", "have", "had", "may", "might", "must", "compare", "compared", "describe",
        "explain", "list", "name", "tell", "give", "show", "summarize", "summarise", "analyze",
        "analyse", "evaluate", "please", "in", "on", "at", "for", "from", "after", "before",
        "during", "between", "among", "and", "or", "but", "if", "since", "about", "also",
        "then", "so", "there", "here", "this", "that", "these", "those", "i", "we", "you",
        "he", "she", "it", "they", "him", "his", "her", "hers", "its", "their", "them", "my",
        "our", "your", "me", "us", "the", "a", "an", "of", "to", "by", "with", "as", "not",
        "yes", "no", "many", "much", "some", "any", "all", "each", "both", "more", "most",
        "less", "other", "such", "same", "very", "than", "into", "over", "under", "up", "out",
        "own", "just", "only", "one", "difference", "differences", "versus", "vs", "similar",
        "between", "kind", "type", "else", "according", "been", "being", "be", "get", "got",
        "make", "made", "way", "ways", "thing", "things", "know", "known", "called",
    ],
};

static VI: Cues = Cues {
    comparative: &[
        "so sánh", "so với", "khác nhau", "khác biệt", "khác gì", "điểm khác", "giống nhau",
        "điểm chung", "tương đồng", "hơn", "đối chiếu", "ưu nhược điểm",
    ],
    pair: &["cả hai", "đều là", "cùng là"],
    analytical: &[
        "tại sao", "vì sao", "như thế nào", "thế nào", "ra sao", "làm sao", "bằng cách nào",
        "ảnh hưởng", "tác động", "nguyên nhân", "giải thích", "phân tích", "đánh giá",
        "vai trò", "ý nghĩa", "hệ quả", "hậu quả", "mối quan hệ", "xu hướng", "lý do",
        "góp phần", "dẫn đến", "tổng quan", "tóm tắt", "chủ đề",
    ],
    thematic: &["tổng quan", "chủ đề", "tóm tắt", "xu hướng", "nhìn chung", "nói chung", "toàn bộ"],
    factual: &[
        "ai", "gì", "khi nào", "ở đâu", "đâu", "bao nhiêu", "nào", "năm nào", "là gì",
        "những", "có phải",
    ],
    relative: &["mà"],
    possessive: &["của"],
    relation: &["liên quan", "quan hệ", "liên hệ", "mối liên hệ", "điểm chung", "kết nối"],
    conjunction: &["và", "hoặc", "hay", "nhưng", "cùng với"],
    follow_open: &["thế còn", "vậy còn", "còn"],
    follow_close: &["thì sao", "thì thế nào"],
    pronoun_person: &[
        "ông ấy", "bà ấy", "anh ấy", "cô ấy", "chị ấy", "em ấy", "ông ta", "bà ta", "anh ta",
        "cô ta", "người đó", "người này",
    ],
    pronoun_other: &["họ", "nó", "công ty đó", "công ty này"],
    pronoun_possessive: &[],
    function: &[
        "ai", "gì", "nào", "đâu", "sao", "tại", "vì", "như", "thế", "hãy", "so", "sánh", "còn",
        "vậy", "khi", "ở", "nếu", "trong", "sau", "trước", "theo", "cái", "những", "các",
        "bao", "nhiêu", "điều", "có", "không", "làm", "liệt", "kê", "cho", "giữa", "và",
        "của", "là", "được", "với", "một", "này", "đã", "thì", "mà", "về", "để", "cũng",
        "hay", "hoặc", "nhưng", "đó", "ra", "bị", "do", "bởi", "từ", "đến", "tới", "rằng",
        "nhau", "khác", "biệt", "hơn", "nhất", "năm", "phải", "đang", "sẽ", "rất", "lại",
        "ông", "bà", "anh", "chị", "ấy", "ta", "họ", "nó", "người",
    ],
};

static ZH: Cues = Cues {
    comparative: &[
        "比较", "对比", "相比", "区别", "差异", "不同", "异同", "相同", "哪个更", "谁更", "更好",
        "优劣", "还是", "与之相比",
    ],
    pair: &["都是", "同一", "两者", "哪一个"],
    analytical: &[
        "为什么", "为何", "如何", "怎样", "怎么", "影响", "原因", "作用", "分析", "评价", "意义",
        "解释", "关系", "趋势", "导致", "后果", "主题", "总结", "概述",
    ],
    thematic: &["主题", "总体", "总结", "概述", "整体", "趋势", "全部", "所有文档"],
    factual: &["谁", "什么", "哪里", "哪儿", "何时", "什么时候", "多少", "几", "哪些", "哪个", "是否", "吗"],
    relative: &["所"],
    possessive: &["的"],
    relation: &["关系", "联系", "关联", "共同点"],
    conjunction: &["和", "与", "及", "以及", "或", "或者", "但", "而且"],
    follow_open: &["那么", "那", "还有"],
    follow_close: &["呢"],
    pronoun_person: &["他们", "她们", "他", "她", "此人"],
    pronoun_other: &["它们", "它", "该公司"],
    pronoun_possessive: &[],
    function: &[
        "为什么", "什么时候", "什么", "怎么样", "怎么", "如何", "怎样", "哪些", "哪个", "哪里",
        "哪儿", "多少", "是否", "为何", "何时", "比较", "对比", "相比", "区别", "差异", "不同",
        "异同", "请问", "请", "还是", "以及", "或者", "而且", "那么", "他们", "她们", "它们",
        "的", "了", "是", "在", "有", "和", "与", "及", "也", "就", "都", "而", "对", "把", "被",
        "从", "向", "于", "吗", "呢", "吧", "啊", "哪", "这", "那", "谁", "几", "所", "他", "她",
        "它", "或", "但",
    ],
};
