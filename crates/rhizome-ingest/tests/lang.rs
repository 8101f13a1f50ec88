//! Language-aware extraction: Chinese names from jieba's tags, Vietnamese proper names,
//! English spans, and the language of the shared data sets.

use std::path::{Path, PathBuf};

use rhizome_core::lang::{detect_language, Lang};
use rhizome_ingest::extract::NlpExtractor;

/// The shared data folder, or None (with a message) when it is not there.
fn data(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipping: {} not found", p.display());
        None
    }
}

/// (name, type) of the entities `NlpExtractor` finds in `text`.
fn entities(text: &str) -> Vec<(String, String)> {
    NlpExtractor::new(0).extract_text(text).entities.into_iter().map(|e| (e.name, e.entity_type)).collect()
}

fn has(ents: &[(String, String)], name: &str, ty: &str) -> bool {
    ents.iter().any(|(n, t)| n == name && t == ty)
}

#[test]
fn chinese_names_from_the_segmenter() {
    let Some(dir) = data("zh_openai") else { return };
    let mut all = Vec::new();
    for f in ["microsoft_investment.txt", "openai_report.txt", "ai_industry.txt"] {
        let text = std::fs::read_to_string(dir.join(f)).expect("read zh_openai");
        assert_eq!(detect_language(&text), Lang::Zh, "{f}");
        all.extend(entities(&text));
    }
    for name in ["OpenAI", "Microsoft", "Google", "GPT-4"] {
        assert!(all.iter().any(|(n, _)| n == name), "{name} missing: {all:?}");
    }
    assert!(has(&all, "Sam Altman", "PERSON"), "{all:?}");
    assert!(has(&all, "旧金山", "LOCATION"), "{all:?}");
    assert!(has(&all, "100亿美元", "MONEY"), "{all:?}");
    // Common words are not names.
    for word in ["领域", "投资", "公司", "模型", "技术"] {
        assert!(!all.iter().any(|(n, _)| n == word), "{word} taken as a name: {all:?}");
    }

    let e = entities("小明硕士毕业于中国科学院计算所，后在日本京都大学深造。李小福是创新办主任也是云计算方面的专家。");
    assert!(has(&e, "小明", "PERSON") && has(&e, "李小福", "PERSON"), "{e:?}");
    assert!(e.iter().any(|(n, t)| n.ends_with("京都大学") && t == "ORGANIZATION"), "{e:?}");
}

#[test]
fn vietnamese_proper_names() {
    let text = "Giải thưởng này được trao cho Aage Bohr. Ông sinh tại Copenhagen, thủ đô của \
                Đan Mạch. Năm 1975, Aage Bohr đoạt Giải Nobel Vật lý cùng Ben Mottelson. \
                Trước đó ông nhận Giải Nguyên tử vì Hòa bình. Bộ Giáo dục và Đào tạo đã mời \
                các nhà khoa học của Đại học Quốc gia Hà Nội và Đại học Copenhagen.";
    assert_eq!(detect_language(text), Lang::Vi);
    let e = entities(text);
    assert!(has(&e, "Aage Bohr", "PERSON") && has(&e, "Ben Mottelson", "PERSON"), "{e:?}");
    assert!(has(&e, "Đan Mạch", "LOCATION") && has(&e, "Copenhagen", "LOCATION"), "{e:?}");
    assert!(e.iter().any(|(n, _)| n == "Giải Nobel Vật lý"), "{e:?}");
    assert!(e.iter().any(|(n, _)| n == "Giải Nguyên tử vì Hòa bình"), "{e:?}");
    assert!(e.iter().any(|(n, _)| n == "Bộ Giáo dục và Đào tạo"), "{e:?}");
    assert!(has(&e, "Đại học Quốc gia Hà Nội", "ORGANIZATION"), "{e:?}");
    assert!(has(&e, "Đại học Copenhagen", "ORGANIZATION"), "{e:?}");
    // Sentence openers and stop words are not names.
    for word in ["Giải", "Ông", "Năm", "Trước", "Bộ"] {
        assert!(!e.iter().any(|(n, _)| n == word), "{word} taken as a name: {e:?}");
    }
}

#[test]
fn vietnamese_edge_list_and_english_corpus_languages() {
    if let Some(p) = data("vi_bohr/edges.csv") {
        let text = std::fs::read_to_string(p).expect("read edges.csv");
        assert_eq!(detect_language(&text), Lang::Vi);
    }
    let Some(p) = data("musique/musique_train_corpus.json") else { return };
    let corpus: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(p).expect("read corpus")).expect("corpus json");
    let not_en: Vec<&str> =
        corpus.iter().filter_map(|p| p["text"].as_str()).filter(|t| detect_language(t) != Lang::En).collect();
    assert!(not_en.is_empty(), "{} MuSiQue passages not English: {:?}", not_en.len(), &not_en[..not_en.len().min(3)]);
}

#[test]
fn english_spans_beyond_plain_capitals() {
    let e = entities(
        "Situated in Kalupahana, the waterfall is near St Paul's Cathedral. The Men's Studies Press \
         and Jehovah's Witnesses met there. It is published by Springer Science+Business Media. \
         The East–West Schism followed. Google's Sundar Pichai spoke. Unfortunately, it rained.",
    );
    let names: Vec<&str> = e.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "Kalupahana",
        "St Paul's Cathedral",
        "Men's Studies Press",
        "Jehovah's Witnesses",
        "Springer Science+Business Media",
        "East–West Schism",
        "Google",
        "Sundar Pichai",
    ] {
        assert!(names.contains(&want), "{want} missing: {names:?}");
    }
    for not in ["Situated", "Unfortunately", "Cathedral", "Studies Press", "Google's Sundar Pichai"] {
        assert!(!names.contains(&not), "{not} found: {names:?}");
    }
}

#[test]
fn chinese_company_names_with_long_suffixes() {
    let e = entities("公司拟对全资子公司吉林欧亚置业有限公司增资4.3亿元。京华大酒店的张尧经理来到了网易杭研大厦。");
    assert!(has(&e, "吉林欧亚置业有限公司", "ORGANIZATION"), "{e:?}");
    assert!(has(&e, "京华大酒店", "ORGANIZATION") && has(&e, "张尧", "PERSON"), "{e:?}");
    assert!(!e.iter().any(|(n, _)| n == "全资子公司" || n == "杭研"), "{e:?}");
}
