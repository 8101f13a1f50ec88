//! The English POS tagger against the wheel's own reference implementation, and the
//! noun phrases the extractor finds with it. Needs the installed `en-pos` model
//! (`rhizome models fetch`); the parity test also needs python3 (skipped without it).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rhizome_core::text::sentences;
use rhizome_core::{Chunker, Loader};
use rhizome_ingest::extract::en_phrases::tagger_words;
use rhizome_ingest::extract::en_pos::{self, PosTagger};
use rhizome_ingest::extract::NlpExtractor;

/// The installed tagger, or a failure that says how to install it.
fn tagger() -> &'static PosTagger {
    static T: OnceLock<PosTagger> = OnceLock::new();
    T.get_or_init(|| {
        let path = en_pos::model_dir().join(en_pos::WEIGHTS_FILE);
        assert!(path.is_file(), "POS tagger model missing at {}: run `rhizome models fetch`", path.display());
        PosTagger::load(&path).expect("load the POS tagger")
    })
}

fn data(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipping part: {} not found", p.display());
        None
    }
}

const SENTENCES: [&str; 22] = [
    "The Journal of Mathematical Physics is a peer-reviewed journal published monthly by the American Institute of Physics.",
    "Aage Niels Bohr was a Danish nuclear physicist who shared the Nobel Prize in Physics in 1975.",
    "Nuclear fission releases large amounts of energy, which power plants turn into electricity.",
    "She didn't know that the company's headquarters had moved to the U.S. in 1990.",
    "I can't believe they're selling the old farmhouse for $2.5 million!",
    "Photosynthesis converts light energy into chemical energy stored in glucose molecules.",
    "The quick brown fox jumps over the lazy dog.",
    "Running quickly, the athletes crossed the finish line before the heavy rain started.",
    "Mr. Smith's daughter studies machine learning and natural language processing at MIT.",
    "It was the best of times, it was the worst of times.",
    "Colorless green ideas sleep furiously.",
    "The 1990s saw rapid growth in mobile phone ownership across Europe and Asia.",
    "Would you have gone if we'd asked?",
    "Ørsted's experiments with electric current and magnetic needles founded electromagnetism.",
    "The long-term care plan covers nursing homes, home health aides and hospice services.",
    "GPT-4 and other large language models generate text token by token.",
    "Rock 'n' roll emerged from rhythm and blues in the late 1940s.",
    "He said: \"We’ll see\" — and left.",
    "Bank interest rates rose sharply after the central bank's announcement on Tuesday.",
    "a",
    "",
    "Xylophonists zigzagged quixotically, flummoxing bewildered onlookers near Zanzibar.",
];

/// Tags `sentences` (already split into words) with the wheel's `perceptron.py`; None
/// when python3 is not available.
fn python_tags(words: &[Vec<String>]) -> Option<Vec<Vec<String>>> {
    const DRIVER: &str = r#"
import gzip, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("perceptron", sys.argv[1])
m = importlib.util.module_from_spec(spec)
sys.modules["perceptron"] = m
spec.loader.exec_module(m)
raw = json.loads(gzip.decompress(open(sys.argv[2], "rb").read()).decode("utf-8"))
t = m.Tagger(weights=raw["weights"], tagdict=raw["tagdict"], classes=raw["classes"],
             vocabulary=frozenset(raw["vocabulary"]))
for line in sys.stdin:
    print(json.dumps(t.tag(json.loads(line))))
"#;
    if Command::new("python3").arg("--version").output().is_err() {
        return None;
    }
    let dir = en_pos::model_dir();
    let script = dir.join("perceptron.py");
    assert!(script.is_file(), "{} missing: run `rhizome models fetch`", script.display());
    let mut child = Command::new("python3")
        .args(["-c", DRIVER])
        .arg(&script)
        .arg(dir.join(en_pos::WEIGHTS_FILE))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut input = String::new();
    for w in words {
        input.push_str(&serde_json::to_string(w).unwrap());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("run python3");
    writer.join().unwrap().expect("write to python3");
    assert!(out.status.success(), "python3 failed: {}", String::from_utf8_lossy(&out.stderr));
    let tags: Vec<Vec<String>> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("python output"))
        .collect();
    Some(tags)
}

#[test]
fn tags_match_the_reference_implementation() {
    let mut word_lists: Vec<Vec<String>> =
        SENTENCES.iter().map(|s| tagger_words(s).into_iter().map(|w| w.text).collect()).collect();
    // Edge cases fed as they are: digits, capitals, unknown words, no context.
    word_lists.push(vec!["1,000".into(), "3.5".into(), "X2".into(), "ÉCOLE".into(), "naïve".into(), "'s".into()]);
    word_lists.push(vec!["ǅemal".into(), "İstanbul".into(), "ΣΟΦΟΣ".into(), "straße".into()]);
    let handwritten = word_lists.len();
    // And the first 300 MuSiQue passages, sentence by sentence.
    if let Some(p) = data("musique/musique_train_corpus.json") {
        let corpus: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        for passage in corpus.iter().take(300) {
            let text = passage["text"].as_str().unwrap_or("");
            for (_, s) in sentences(text) {
                word_lists.push(tagger_words(s).into_iter().map(|w| w.text).collect());
            }
        }
    }
    let Some(want) = python_tags(&word_lists) else {
        eprintln!("SKIPPED: python3 is not installed, so the tags cannot be compared with perceptron.py");
        return;
    };
    assert_eq!(want.len(), word_lists.len());
    let t = tagger();
    let mut words = 0;
    for (w, py) in word_lists.iter().zip(&want) {
        let refs: Vec<&str> = w.iter().map(String::as_str).collect();
        let ours = t.tag(&refs);
        assert_eq!(ours, *py, "tags differ for {w:?}");
        words += w.len();
    }
    eprintln!("parity: {} sentences ({handwritten} handwritten), {words} words, identical tags", word_lists.len());
}

/// Entities per 1,000 characters on the first 200 MuSiQue passages with and without
/// noun phrases, printed with a seeded sample of 30 new phrases (to judge by hand).
#[test]
fn noun_phrase_figures() {
    let Some(p) = data("musique/musique_train_corpus.json") else { return };
    let docs = rhizome_ingest::load::CorpusLoader.load(&p).unwrap();
    let chunker = rhizome_ingest::chunk::TokenChunker::default();
    let chunks: Vec<rhizome_core::Chunk> = docs.iter().take(200).flat_map(|d| chunker.chunk(d)).collect();
    let chars: usize = chunks.iter().map(|c| c.text.chars().count()).sum();
    let before_x = NlpExtractor::default().without_pos_tagger();
    let after_x = NlpExtractor::default().with_pos_tagger(tagger());
    let (mut before, mut after) = (0, 0);
    let mut new: Vec<(String, String)> = Vec::new();
    let t = std::time::Instant::now();
    for c in &chunks {
        let b = before_x.extract_text(&c.text);
        let a = after_x.extract_text(&c.text);
        before += b.entities.len();
        after += a.entities.len();
        for e in a.entities {
            if !b.entities.iter().any(|x| x.name == e.name) && !new.iter().any(|(n, _)| *n == e.name) {
                new.push((e.name, e.description));
            }
        }
    }
    let per_k = |n: usize| n as f64 * 1000.0 / chars as f64;
    eprintln!(
        "FIGURES musique first 200 passages: {} chunks, {chars} chars; entities {before} -> {after} ({:.1} -> {:.1} per 1k chars); {} distinct new names; both extractions {:.0} ms",
        chunks.len(), per_k(before), per_k(after), new.len(), t.elapsed().as_secs_f64() * 1e3
    );
    let mut seed = 0x2545_f491_u32;
    let mut pool = new.clone();
    for i in 0..30.min(pool.len()) {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let k = i + (seed as usize) % (pool.len() - i);
        pool.swap(i, k);
        eprintln!("SAMPLE {:2}. {:<40} | {}", i + 1, pool[i].0, pool[i].1);
    }
    assert!(after > before, "noun phrases add entities");
    for (name, _) in &new {
        let first = name.split_whitespace().next().unwrap_or("").to_lowercase();
        assert!(!rhizome_core::text::is_stop_word(&first), "{name} starts with a stop word");
    }
}

fn concepts(e: &rhizome_core::Extraction) -> Vec<&str> {
    e.entities.iter().filter(|x| x.entity_type == "CONCEPT").map(|x| x.name.as_str()).collect()
}

#[test]
fn noun_phrases_become_concepts_beside_the_names() {
    let with = NlpExtractor::new(0).with_pos_tagger(tagger());
    let without = NlpExtractor::new(0).without_pos_tagger();
    for (text, want, not) in [
        (SENTENCES[1], &["nuclear physicist"][..], &["physicist"][..]),
        (SENTENCES[5], &["light energy", "chemical energy", "glucose molecules"], &["converts light energy"]),
        (SENTENCES[14], &["long-term care plan", "hospice services"], &["term care plan", "covers"]),
        (SENTENCES[18], &["interest rates", "central bank"], &["bank"]),
        (SENTENCES[6], &["quick brown fox", "lazy dog"], &["quick brown fox jumps"]),
        (SENTENCES[15], &["large language models"], &["other large language models"]),
        // A one-word phrase: twice in the chunk, or what a name is said to be.
        ("The reactor overheated on Monday. Engineers later shut the reactor down.", &["reactor"], &["engineers"]),
        ("Aage Bohr was a physicist. He liked tea.", &["physicist"], &["tea", "he"]),
        // Numbers, units, generic heads and quantities are not concepts.
        (
            "The city lies 6 km west of the border, with a large number of rivers over 20 square kilometres.",
            &[],
            &["km west", "large number", "square kilometres", "city"],
        ),
    ] {
        let e = with.extract_text(text);
        let got = concepts(&e);
        for w in want {
            assert!(got.contains(w), "{w} missing from {got:?} in {text:?}");
        }
        for n in not {
            assert!(!got.contains(n), "{n} found in {got:?} in {text:?}");
        }
        // The names stay as they were.
        let before = without.extract_text(text);
        for b in &before.entities {
            assert!(e.entities.iter().any(|x| x.name == b.name && x.entity_type == b.entity_type), "{} lost", b.name);
        }
        for x in &e.entities {
            let first = x.name.split_whitespace().next().unwrap_or("").to_lowercase();
            assert!(!rhizome_core::text::is_stop_word(&first), "{} opens with a stop word", x.name);
        }
    }
    let e = with.extract_text("Aage Bohr was a physicist. He liked tea.");
    assert!(
        e.facts.iter().any(|f| f.subject == "Aage Bohr" && f.predicate == "was" && f.object == "physicist"),
        "{:?}",
        e.facts
    );
    assert!(e.relations.iter().any(|r| r.source == "Aage Bohr" && r.target == "physicist"), "{:?}", e.relations);
}

#[test]
fn names_keep_their_places_under_the_cap() {
    let text = "Niels Bohr met Ernest Rutherford in Manchester. The young physicist studied atomic structure, \
                quantum theory, nuclear physics and radioactive decay with Rutherford.";
    let all = NlpExtractor::new(0).with_pos_tagger(tagger()).extract_text(text);
    let names = NlpExtractor::new(0).without_pos_tagger().extract_text(text);
    assert!(concepts(&all).len() >= 3, "{:?}", all.entities);
    let capped = NlpExtractor::new(names.entities.len() + 1).with_pos_tagger(tagger()).extract_text(text);
    assert_eq!(capped.entities.len(), names.entities.len() + 1);
    for n in &names.entities {
        assert!(capped.entities.iter().any(|x| x.name == n.name), "{} dropped for a noun phrase", n.name);
    }
    for r in &capped.relations {
        assert!(
            capped.entities.iter().any(|x| x.name == r.source) && capped.entities.iter().any(|x| x.name == r.target)
        );
    }
    let chunk = rhizome_core::Chunk {
        id: "c".into(),
        doc_id: "d".into(),
        ordinal: 0,
        text: text.into(),
        tokens: 0,
        start: 0,
        end: 0,
        pages: None,
    };
    use rhizome_core::Extractor;
    let x = NlpExtractor::new(0).with_pos_tagger(tagger());
    assert_eq!(x.extract(&chunk).unwrap(), x.extract_text(text), "deterministic");
}

#[test]
fn other_languages_and_no_tagger_are_unchanged() {
    let with = NlpExtractor::new(0).with_pos_tagger(tagger());
    let without = NlpExtractor::new(0).without_pos_tagger();
    for text in [
        "Aage Bohr đoạt giải Nobel Vật lý năm 1975 cùng Ben Mottelson và James Rainwater.",
        "Microsoft宣布向OpenAI投资100亿美元，以加强人工智能领域的合作。",
    ] {
        assert_eq!(with.extract_text(text), without.extract_text(text), "{text}");
    }
    let e = without.extract_text(SENTENCES[5]);
    assert!(e.entities.iter().all(|x| x.name.chars().next().is_some_and(|c| !c.is_lowercase())), "{:?}", e.entities);
    assert!(without.notes().is_empty() && without.pos_tagger().is_none());
    // The installed model is there (this suite needs it): nothing to note.
    assert!(NlpExtractor::new(0).notes().is_empty());
    assert!(NlpExtractor::new(0).pos_tagger().is_some());
}
