//! Targets: text processing on arbitrary text (English, Vietnamese, Chinese and
//! anything else): NFC, language detection, sentence splitting, token spans, BM25 terms,
//! the chunker (with sizes from the input), entity-name normalisation and the LLM-free
//! extractor.

use std::sync::OnceLock;

use rhizome_core::lang::{detect_language, Lang};
use rhizome_core::text::{bm25_terms, nfc, sentences, terms_in, token_spans};
use rhizome_core::{ids, Chunker, Document};
use rhizome_ingest::chunk::TokenChunker;
use rhizome_ingest::extract::NlpExtractor;

use crate::seeds::{file, head, repo, shared, strs};
use crate::{text, Target};

const WORDS: &[&str] = &[
    ". ",
    "! ",
    "? ",
    "。",
    "！",
    "？",
    "…",
    "\"",
    "”",
    ")",
    "」",
    "\n",
    "\n\n",
    "Mr. ",
    "Dr. ",
    "U.S. ",
    "e.g. ",
    "Aage Bohr",
    "Niels",
    "Copenhagen",
    "Nobel Prize",
    "in 1975",
    "$3.5 billion",
    "June 3, 1990",
    "the",
    "of",
    "Microsoft",
    "OpenAI",
    "Sam Altman",
    "微软",
    "投资",
    "2019年",
    "10亿美元",
    "领导",
    "Hà Nội",
    "Việt Nam",
    "giải",
    "đoạt",
    "không",
    "“Quoted Term”",
    "'s ",
    "-",
    "—",
    "&",
    "@",
    "#tag",
    "http://x.y/z",
    "3.14",
    "1,000",
];

fn seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        "Aage Bohr won the Nobel Prize in Physics in 1975. He was born in Copenhagen.",
        "Aage Bohr đoạt giải Nobel Vật lý năm 1975. Ông sinh ra ở Copenhagen.",
        "微软于2019年向OpenAI投资了10亿美元。Sam Altman领导OpenAI。",
        "a. b. c. d. e. f. g. h. i. j. k. l. m.",
        "",
        "Hue\u{302}\u{301} và Đa\u{300} Na\u{306}\u{303}ng",
        "\"Quoted.\" (Bracketed!) 「引用。」 «fr»",
    ]);
    s.extend(head(repo().join("examples/docs/copenhagen-physics.txt"), 8192));
    s.extend(head(shared().join("zh_openai/ai_industry.txt"), 4096));
    s.extend(file(shared().join("zh_openai/microsoft_investment.txt")).map(|mut b| {
        b.truncate(4096);
        String::from_utf8_lossy(&b).into_owned().into_bytes()
    }));
    s
}

/// Chunking and the text functions under it, with invariants: every chunk is a piece of
/// the document, windows progress and cover every token.
fn chunk(input: &[u8]) -> Result<(), String> {
    let (size, overlap) = match input {
        [a, b, ..] => (*a as usize % 64, *b as usize % 80),
        _ => (8, 2),
    };
    let t = text(input.get(2..).unwrap_or(&[]));
    let n = nfc(&t).into_owned();
    let lang = detect_language(&n);
    let _ = lang.code();
    for (off, s) in sentences(&n) {
        if n.get(off..off + s.len()) != Some(s) {
            return Err(format!("sentence at {off} is not the text there"));
        }
    }
    let spans = token_spans(&n);
    if spans.windows(2).any(|w| w[0].1 > w[1].0) || spans.iter().any(|&(a, b)| a >= b || n.get(a..b).is_none()) {
        return Err("token spans overlap, are empty or cut a character".into());
    }
    let _ = bm25_terms(&n);
    for l in [Lang::En, Lang::Vi, Lang::Zh] {
        let _ = terms_in(l, &n);
    }
    let chunker = TokenChunker::new(size, overlap);
    let w = chunker.windows(&n, &spans);
    if !spans.is_empty() && (w.first().map(|x| x.0) != Some(0) || w.last().map(|x| x.1) != Some(spans.len())) {
        return Err(format!("windows {w:?} do not cover {} tokens", spans.len()));
    }
    if w.windows(2).any(|p| p[1].0 <= p[0].0) {
        return Err("windows do not progress".into());
    }
    let doc = Document {
        id: ids::document_id("fuzz", &n),
        source: "fuzz".into(),
        title: "fuzz".into(),
        text: n.clone(),
        pages: None,
        meta: Default::default(),
    };
    for c in chunker.chunk(&doc) {
        if !n.contains(c.text.as_str()) || c.text.is_empty() {
            return Err(format!("chunk {} is not a non-empty piece of the document", c.ordinal));
        }
    }
    let _ = ids::normalize_name(&n);
    let _ = ids::entity_id(&n);
    Ok(())
}

fn extractor() -> &'static NlpExtractor {
    static E: OnceLock<NlpExtractor> = OnceLock::new();
    E.get_or_init(NlpExtractor::default)
}

/// The LLM-free extractor: every relation's ends are among the entities found.
fn extract(input: &[u8]) -> Result<(), String> {
    let t = nfc(&text(input)).into_owned();
    let x = extractor().extract_text(&t);
    let names: std::collections::HashSet<&str> = x.entities.iter().map(|e| e.name.as_str()).collect();
    for r in &x.relations {
        if !names.contains(r.source.as_str()) || !names.contains(r.target.as_str()) {
            return Err(format!("relation {:?} -> {:?} names an entity not extracted", r.source, r.target));
        }
    }
    Ok(())
}

pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "text_chunk",
            what: "NFC, language detection, sentences, token spans, BM25 terms, chunker",
            max_len: 32 << 10,
            dict: WORDS,
            seeds,
            run: chunk,
            min_time_limit_s: 0,
        },
        Target {
            name: "nlp_extract",
            what: "the LLM-free extractor (EN/VI/ZH names, dates, money, relations)",
            max_len: 8 << 10,
            dict: WORDS,
            seeds,
            run: extract,
            min_time_limit_s: 0,
        },
    ]
}
