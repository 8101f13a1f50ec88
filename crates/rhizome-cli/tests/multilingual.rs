//! Chinese, Vietnamese and English through the `rhizome` binary with default settings:
//! language per document in the index report, Chinese names as entities, Chinese and
//! Vietnamese (typed without diacritics) questions finding their documents, and each
//! document described (summary, type, hashtags that are words of its language).

use std::path::{Path, PathBuf};
use std::process::Command;

use rhizome_core::StoreRead;
use rhizome_store::SqliteStore;
use serde_json::Value;

fn shared() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    assert!(p.join("README.md").exists(), "shared data missing at {}: clone beside ../shared", p.display());
    p.canonicalize().unwrap()
}

/// Runs `rhizome --index INDEX --json ARGS...` and parses its output.
fn rz(index: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_rhizome"))
        .arg("--index")
        .arg(index)
        .arg("--json")
        .args(args)
        .env_remove("RHIZOME_INDEX")
        .env_remove("RHIZOME_CONFIG")
        .output()
        .expect("run rhizome");
    assert!(
        out.status.success(),
        "rhizome {args:?} failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Entity names of the index, read through the store's public API.
fn entity_names(index: &Path) -> Vec<String> {
    let store = SqliteStore::open(index, false).expect("open index");
    store.graph_data().expect("graph").entities.into_iter().map(|e| e.name).collect()
}

fn top_source(r: &Value) -> &str {
    r["contexts"][0]["source"].as_str().unwrap_or_else(|| panic!("no context: {r:#}"))
}

#[test]
fn chinese_question_and_entities() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let zh = shared().join("zh_openai");
    let report = rz(&idx, &["index", zh.to_str().unwrap()]);
    assert_eq!(report["report"]["languages"]["zh"], 3, "{report:#}");

    let r = rz(&idx, &["query", "--method", "basic", "Sam Altman领导的公司在AI领域有什么重要投资？"]);
    assert!(top_source(&r).ends_with("microsoft_investment.txt"), "{r:#}");

    let names = entity_names(&idx);
    for want in ["OpenAI", "Microsoft", "Sam Altman"] {
        assert!(names.iter().any(|n| n == want), "{want} is not an Entity node: {names:?}");
    }
    let tags = assert_described(&idx, 3);
    assert!(tags.iter().any(|t| t.chars().any(rhizome_core::lang::is_han)), "Chinese hashtags: {tags:?}");

    // e5 pools a vector for every sentence of every chunk while embedding it: the
    // extractive answer reads them instead of embedding sentences per query.
    let store = SqliteStore::open(&idx, false).unwrap();
    let ids: Vec<String> = store.graph_data().unwrap().chunks.into_iter().map(|c| c.id).collect();
    let mut wanted = Vec::new();
    for c in store.chunks(&ids).unwrap() {
        for (_, s) in rhizome_core::text::sentences(&c.chunk.text) {
            wanted.push(rhizome_core::ids::sentence_id(&c.chunk.id, s));
        }
    }
    wanted.sort();
    wanted.dedup();
    assert!(wanted.len() > ids.len(), "{} sentences in {} chunks", wanted.len(), ids.len());
    let got = store.vectors(rhizome_core::VectorKind::Sentence, &wanted).unwrap();
    assert_eq!(got.len(), wanted.len(), "every sentence of every chunk has its vector");
}

#[test]
fn vietnamese_question_without_diacritics_and_languages_per_document() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    let files = [
        (
            "bohr.txt",
            "Aage Bohr là nhà vật lý người Đan Mạch. Ông đoạt giải Nobel Vật lý năm 1975 \
                      cùng Ben Mottelson và James Rainwater cho công trình về cấu trúc hạt nhân.",
        ),
        (
            "copenhagen.txt",
            "Copenhagen là thủ đô và thành phố lớn nhất của Đan Mạch. Đại học \
                            Copenhagen được thành lập năm 1479.",
        ),
        (
            "hue.txt",
            "Huế là cố đô của Việt Nam, nằm bên bờ sông Hương. Nhiều du khách đến thăm \
                     kinh thành và các lăng tẩm.",
        ),
        (
            "journal.txt",
            "The Journal of Mathematical Physics is a peer-reviewed journal published \
                         monthly by the American Institute of Physics.",
        ),
        ("beijing.txt", "北京大学是中国著名的综合性大学，位于北京市海淀区。"),
    ];
    for (name, text) in files {
        std::fs::write(docs.join(name), text).unwrap();
    }
    let idx = tmp.path().join("idx");
    let report = rz(&idx, &["index", docs.to_str().unwrap()]);
    let langs = &report["report"]["languages"];
    assert_eq!(
        (langs["vi"].as_u64(), langs["en"].as_u64(), langs["zh"].as_u64()),
        (Some(3), Some(1), Some(1)),
        "{report:#}"
    );

    for (q, want) in [
        ("Aage Bohr doat giai Nobel nam nao?", "bohr.txt"),
        ("thu do cua Dan Mach la gi?", "copenhagen.txt"),
        ("song Huong o dau?", "hue.txt"),
        ("Aage Bohr đoạt giải Nobel năm nào?", "bohr.txt"),
    ] {
        // BM25 only: the dense model is English, the point here is the term matching.
        let r = rz(&idx, &["--set", "retrieval.dense_weight=0", "query", "--method", "basic", q]);
        assert!(top_source(&r).ends_with(want), "{q}: {r:#}");
    }
    let names = entity_names(&idx);
    for want in ["Aage Bohr", "Đan Mạch", "北京大学"] {
        assert!(names.iter().any(|n| n == want), "{want} is not an Entity node: {names:?}");
    }
    let tags = assert_described(&idx, 5);
    for want in ["Đan Mạch", "Việt Nam", "综合性大学"] {
        assert!(tags.iter().any(|t| t == want), "{want} is not a hashtag: {tags:?}");
    }
}

#[test]
fn the_example_documents_are_described_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/docs");
    let report = rz(&idx, &["index", examples.to_str().unwrap()]);
    assert_eq!(report["described"]["described"], 3, "{report:#}");
    let tags = assert_described(&idx, 3);
    assert!(tags.iter().any(|t| t == "Aage Bohr" || t == "Niels Bohr Institute"), "{tags:?}");
    // Described once: indexing again describes nothing; `describe --force` all again.
    let again = rz(&idx, &["index", examples.to_str().unwrap()]);
    assert_eq!(again["described"]["described"], 0, "{again:#}");
    assert_eq!(rz(&idx, &["describe", "--force"])["described"], 3);
}

/// `rhizome documents --json` lists `n` documents, each with a summary made of its own
/// sentences, a type of the default list, file facts, and hashtags that are whole words
/// of its text (a Vietnamese tag starts and ends at syllable boundaries, a Chinese one at
/// the boundaries of the words jieba cuts the text into). Returns every hashtag.
fn assert_described(index: &Path, n: usize) -> Vec<String> {
    const TYPES: [&str; 10] =
        ["report", "contract", "article", "manual", "paper", "email", "slides", "spreadsheet", "book", "other"];
    let listed = rz(index, &["documents"]);
    let docs = listed["documents"].as_array().unwrap();
    assert_eq!(docs.len(), n, "{listed:#}");
    let store = SqliteStore::open(index, false).unwrap();
    let mut all = Vec::new();
    for d in docs {
        let m = &d["meta"];
        let text = store.find_document(d["id"].as_str().unwrap()).unwrap().unwrap().text;
        let summary = m["summary"].as_str().unwrap_or_else(|| panic!("no summary: {d:#}"));
        let first = rhizome_core::text::sentences(summary)[0].1;
        assert!(text.contains(first.trim_end_matches(['.', '。'])), "an extractive summary quotes the text: {d:#}");
        assert!(TYPES.contains(&m["type"].as_str().unwrap_or("")), "{d:#}");
        assert_eq!(m["described_by"], "extractive", "{d:#}");
        assert!(m["media_type"].as_str().is_some_and(|t| t.starts_with("text/")), "{d:#}");
        assert!(m["size_bytes"].as_u64().unwrap() > 0 && m["modified"].is_string(), "{d:#}");
        let tags: Vec<String> =
            m["hashtags"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
        assert!(!tags.is_empty(), "{d:#}");
        for t in &tags {
            assert!(is_whole_word(&text, t), "hashtag {t:?} is not a word of {text:?}");
        }
        all.extend(tags);
    }
    all
}

/// Whether `tag` stands in `text` as whole words: nothing alphanumeric right before or
/// after it, and, next to Chinese, on the boundaries of the words jieba cuts the text into.
fn is_whole_word(text: &str, tag: &str) -> bool {
    let cuts: Vec<usize> = {
        let mut at = 0;
        let mut v = vec![0];
        for w in rhizome_core::text::zh::segment(text) {
            at += w.len();
            v.push(at);
        }
        v
    };
    text.match_indices(tag).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + tag.len()..].chars().next();
        let han = |c: Option<char>| c.is_some_and(rhizome_core::lang::is_han);
        let alnum = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() && !rhizome_core::lang::is_han(c));
        let ends_ok = !alnum(before) && !alnum(after);
        let first_han = han(tag.chars().next()) || han(before);
        let last_han = han(tag.chars().next_back()) || han(after);
        ends_ok && (!first_han || cuts.contains(&i)) && (!last_han || cuts.contains(&(i + tag.len())))
    })
}

/// Decomposed (NFD) `s`: base letters followed by combining marks.
fn nfd(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfd().collect()
}

/// BM25 score of the context from `file` in a query's output.
fn score_of(r: &Value, file: &str) -> f64 {
    r["contexts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["source"].as_str().is_some_and(|s| s.ends_with(file)))
        .and_then(|c| c["score"].as_f64())
        .unwrap_or(0.0)
}

#[test]
fn vietnamese_typed_with_combining_marks_is_the_same_text() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    // "độ" (degree) and "đỗ" (to pass) fold to the same "do": only the exact syllable
    // tells them apart, and it only matches when both sides are in the same form.
    let nhiet = nfd("Nhiệt độ ở Đà Lạt thấp quanh năm.");
    assert_ne!(nhiet, "Nhiệt độ ở Đà Lạt thấp quanh năm.");
    let files = [
        ("nhiet.txt", nhiet),
        ("thi.txt", "Anh ấy thi đỗ ở Đà Lạt năm ngoái.".to_string()),
        ("hue.txt", "Huế là cố đô của Việt Nam.".to_string()),
    ];
    for (name, text) in &files {
        std::fs::write(docs.join(name), text).unwrap();
    }
    let idx = tmp.path().join("idx");
    rz(&idx, &["index", docs.to_str().unwrap()]);
    // The decomposed document answers a precomposed question, ranked above the one
    // that only matches folded...
    let r = rz(&idx, &["--set", "retrieval.dense_weight=0", "query", "--method", "basic", "nhiệt độ"]);
    assert!(top_source(&r).ends_with("nhiet.txt"), "{r:#}");
    let r = rz(&idx, &["--set", "retrieval.dense_weight=0", "query", "--method", "basic", "độ"]);
    assert!(top_source(&r).ends_with("nhiet.txt"), "{r:#}");
    assert!(score_of(&r, "nhiet.txt") > score_of(&r, "thi.txt"), "exact syllable first: {r:#}");
    // ...and a decomposed question finds the precomposed document the same way.
    let q = nfd("đỗ");
    assert_ne!(q, "đỗ");
    let r = rz(&idx, &["--set", "retrieval.dense_weight=0", "query", "--method", "basic", &q]);
    assert!(top_source(&r).ends_with("thi.txt"), "{r:#}");
    assert!(score_of(&r, "thi.txt") > score_of(&r, "nhiet.txt"), "exact syllable first: {r:#}");
    // One entity for the name, stored precomposed whichever way it was typed.
    let names = entity_names(&idx);
    assert_eq!(names.iter().filter(|n| n.as_str() == "Đà Lạt").count(), 1, "{names:?}");
    assert!(names.iter().all(|n| !n.chars().any(|c| ('\u{300}'..='\u{36f}').contains(&c))), "{names:?}");
}

#[test]
fn english_noun_phrases_need_the_tagger_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let doc = tmp.path().join("fission.txt");
    std::fs::write(&doc, "Nuclear fission releases energy. Most power plants turn that energy into electricity.")
        .unwrap();
    // With the installed tagger: lower-case noun phrases among the entities.
    let idx = tmp.path().join("idx");
    rz(&idx, &["index", doc.to_str().unwrap()]);
    let names = entity_names(&idx);
    assert!(names.iter().any(|n| n == "power plants"), "{names:?}");
    // Without it (a models dir holding only the embedders): names only, and a note
    // that says what was skipped and how to fetch the model.
    let models = tmp.path().join("models");
    std::fs::create_dir(&models).unwrap();
    let real = rhizome_embed::models_dir();
    for m in ["all-MiniLM-L6-v2", "multilingual-e5-small"] {
        std::os::unix::fs::symlink(real.join(m), models.join(m)).unwrap();
    }
    let bare = tmp.path().join("bare");
    let out = Command::new(env!("CARGO_BIN_EXE_rhizome"))
        .arg("--index")
        .arg(&bare)
        .args(["--json", "index"])
        .arg(&doc)
        .env("RHIZOME_MODELS_DIR", &models)
        .env_remove("RHIZOME_INDEX")
        .env_remove("RHIZOME_CONFIG")
        .output()
        .expect("run rhizome");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("English noun phrases skipped") && stderr.contains("rhizome models fetch"), "{stderr}");
    let names = entity_names(&bare);
    assert!(!names.iter().any(|n| n == "power plants"), "{names:?}");
}
