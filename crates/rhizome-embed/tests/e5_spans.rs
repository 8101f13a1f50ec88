//! Span pooling of multilingual-e5-small against the real weights: a text's vector from
//! `embed_spans` is bit for bit the one `embed` gives, and each sentence's vector is pooled
//! over exactly the tokens of that sentence.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::OnceLock;

use rhizome_core::text::sentences;
use rhizome_core::{dot, EmbedKind, Embedder};
use rhizome_embed::e5::E5Embedder;
use rhizome_embed::models::{self, E5_SMALL};

fn embedder() -> &'static E5Embedder {
    static E: OnceLock<E5Embedder> = OnceLock::new();
    E.get_or_init(|| {
        let dir: PathBuf = models::fetch(&E5_SMALL, &models::models_dir())
            .unwrap_or_else(|e| panic!("multilingual-e5-small is not installed and fetching failed: {e}"));
        E5Embedder::load(&dir).expect("load multilingual-e5-small")
    })
}

/// Chunks as indexing embeds them (title line, then text), in three languages.
fn chunks() -> Vec<String> {
    [
        "Journal of Psychotherapy Integration\nThe Journal of Psychotherapy Integration is a quarterly peer-reviewed academic journal. It is published by the American Psychological Association on behalf of the Society for the Exploration of Psychotherapy Integration. The editor-in-chief is Jerry Gold.",
        "Aage Bohr\nAage Niels Bohr là một nhà vật lý người Đan Mạch. Ông nhận giải Nobel Vật lý năm 1975.  Ông là con trai của Niels Bohr.",
        "OpenAI\nSam Altman领导的公司OpenAI成立于2015年。该公司在人工智能领域进行了多项重要投资。微软是其主要合作伙伴。",
        "Short\nOne sentence only",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn sentence_spans(text: &str) -> Vec<Range<usize>> {
    sentences(text).into_iter().map(|(at, s)| at..at + s.len()).collect()
}

#[test]
fn text_vectors_are_those_of_embed_bit_for_bit() {
    let e = embedder();
    let texts = chunks();
    let spans: Vec<Vec<Range<usize>>> = texts.iter().map(|t| sentence_spans(t)).collect();
    let plain = e.embed(&texts, EmbedKind::Passage).unwrap();
    let pooled = e.embed_spans(&texts, &spans, EmbedKind::Passage).unwrap().expect("e5 pools spans");
    assert_eq!(pooled.len(), texts.len());
    for (i, (p, v)) in pooled.iter().zip(&plain).enumerate() {
        assert_eq!(&p.text, v, "text {i}: the chunk vector changed");
        assert_eq!(p.spans.len(), spans[i].len());
        for (k, sv) in p.spans.iter().enumerate() {
            let sv = sv.as_ref().unwrap_or_else(|| panic!("text {i} sentence {k} has no vector"));
            assert!((dot(sv, sv).sqrt() - 1.0).abs() < 1e-4, "text {i} sentence {k} is not unit length");
        }
    }
}

#[test]
fn span_tokens_are_the_sentence_tokens() {
    let e = embedder();
    for text in chunks() {
        let spans = sentence_spans(&text);
        let (ids, ranges) = e.tokenize_spans(&text, EmbedKind::Passage, &spans);
        assert_eq!(ids, e.tokenize(&text, EmbedKind::Passage), "token ids differ from tokenize's");
        for (sp, r) in spans.iter().zip(&ranges) {
            let r = r.clone().unwrap_or_else(|| panic!("no tokens for {:?}", &text[sp.clone()]));
            // A sentence after a space or line break is segmented as a word of its own.
            let alone = e.tokenizer().encode_content(&text[sp.clone()]);
            let got = &ids[r.clone()];
            let (a, b) = (&alone[alone.len().saturating_sub(got.len())..], got);
            let tail_matches = alone.len() >= 2 && got.len() >= 2 && a[1..] == b[1..];
            assert!(
                got == alone.as_slice() || tail_matches,
                "{:?}: span tokens {got:?}, the sentence alone {alone:?}",
                &text[sp.clone()]
            );
        }
        // Spans tile the sentences in order without sharing tokens between sentences
        // separated by whitespace.
        for w in ranges.windows(2) {
            let (a, b) = (w[0].clone().unwrap(), w[1].clone().unwrap());
            assert!(a.end <= b.start || !text.contains(' '), "{a:?} then {b:?}");
        }
    }
}

#[test]
fn truncated_or_empty_spans_have_no_vector() {
    let dir = models::fetch(&E5_SMALL, &models::models_dir()).unwrap();
    let short = E5Embedder::load(&dir).unwrap().with_max_tokens(16);
    let text = chunks().remove(0);
    let spans = sentence_spans(&text);
    let last = spans.len() - 1;
    let mut asked = spans.clone();
    asked.push(3..3);
    asked.push(text.len()..text.len() + 5);
    let out = short.embed_spans(std::slice::from_ref(&text), &[asked], EmbedKind::Passage).unwrap().unwrap().remove(0);
    assert_eq!(out.text, short.embed(std::slice::from_ref(&text), EmbedKind::Passage).unwrap()[0]);
    assert!(out.spans[0].is_some(), "the title fits in 16 tokens");
    assert!(out.spans[last].is_none(), "the last sentence is past the 16-token cut");
    assert!(out.spans[last + 1].is_none() && out.spans[last + 2].is_none());
}
