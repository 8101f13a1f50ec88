//! The 187 real gpt-4o responses of nano-graphrag's test cache: tuple-delimited
//! extraction records and JSON community reports. Every record must be accounted for.

use std::collections::HashSet;
use std::path::PathBuf;

use rhizome_core::ids::normalize_name;

use super::parse;

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/nano_graphrag_fixtures/mock_cache.json")
}

/// (key, response text), sorted by key.
fn load() -> Vec<(String, String)> {
    let path = fixture_path();
    let raw = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "fixture file {} is missing ({e}); it is part of the shared data folder \
             (see ../shared/data/README.md, nano_graphrag_fixtures/mock_cache.json)",
            path.display()
        )
    });
    let v: serde_json::Value = serde_json::from_str(&raw).expect("mock_cache.json is JSON");
    let mut out: Vec<(String, String)> = v
        .as_object()
        .expect("mock_cache.json is an object")
        .iter()
        .map(|(k, v)| {
            let text = v["return"].as_str().or(v.as_str()).expect("each entry has a text");
            (k.clone(), text.to_string())
        })
        .collect();
    out.sort();
    assert_eq!(out.len(), 187, "expected the 187 responses of the fixture file");
    out
}

/// Independent of the parser: records of each kind, counted as `(` + optional quote +
/// kind word + optional quote + a field separator (so prose like "(Entity ID: 4)" is
/// not a record).
fn count_records(text: &str) -> (usize, usize) {
    let (mut entities, mut relations) = (0, 0);
    for (i, _) in text.match_indices('(') {
        let rest = text[i + 1..].trim_start().trim_start_matches(['"', '“', '\'']);
        let word: String = rest.chars().take_while(|c| c.is_alphabetic()).collect();
        let after = rest[word.len()..].trim_start_matches(['"', '”', '\'']).trim_start();
        if !after.starts_with(['<', '|', ',']) {
            continue;
        }
        match word.to_lowercase().as_str() {
            "entity" => entities += 1,
            "relationship" | "relation" => relations += 1,
            _ => {}
        }
    }
    (entities, relations)
}

/// Independent of the parser: quoted fields of the well-formed records,
/// `("kind"<|>"A"<|>"B"...`.
fn quoted_fields(text: &str, kinds: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for kind in kinds {
        for piece in text.split(&format!("(\"{kind}\"<|>\"")).skip(1) {
            let mut parts = piece.split("\"<|>\"");
            let a = parts.next().unwrap_or("");
            let b = parts.next().unwrap_or("");
            if !a.contains('"') && !b.contains('"') {
                out.push((normalize_name(a), normalize_name(b)));
            }
        }
    }
    out
}

fn entity_set(o: &rhizome_llm::parse::ParseOutcome) -> HashSet<String> {
    o.extraction.entities.iter().map(|e| normalize_name(&e.name)).collect()
}

fn relation_set(o: &rhizome_llm::parse::ParseOutcome) -> HashSet<(String, String)> {
    o.extraction.relations.iter().map(|r| (normalize_name(&r.source), normalize_name(&r.target))).collect()
}

#[derive(Default, Debug)]
struct Totals {
    responses: usize,
    extraction_responses: usize,
    entity_records: usize,
    relation_records: usize,
    entities: usize,
    relations: usize,
    dropped: usize,
    merged: usize,
    endpoints_added: usize,
    retyped: usize,
}

#[test]
fn all_fixture_responses_are_accounted_for() {
    let mut t = Totals::default();
    for (key, text) in load() {
        t.responses += 1;
        let o = parse(&text);
        assert!(!o.warnings.iter().any(|w| w.contains("internal error")), "{key}: parser panicked");
        let (n_ent, n_rel) = count_records(&text);
        let s = &o.stats;
        if n_ent + n_rel == 0 {
            // Community reports (JSON or prose): nothing to extract, nothing dropped.
            assert!(o.extraction.entities.is_empty() && o.extraction.relations.is_empty(), "{key}: {o:?}");
            assert_eq!(o.dropped, 0, "{key}");
            continue;
        }
        t.extraction_responses += 1;
        assert_eq!(s.entity_records, n_ent, "{key}: entity records seen\n{text}\n{:?}", o.warnings);
        assert_eq!(s.relation_records, n_rel, "{key}: relation records seen\n{text}");
        assert_eq!(
            o.extraction.entities.len(),
            n_ent - s.entities_dropped - s.entities_merged + s.endpoints_added,
            "{key}: entities"
        );
        assert_eq!(o.extraction.relations.len(), n_rel - s.relations_dropped, "{key}: relations");
        assert_eq!(o.dropped, s.entities_dropped + s.relations_dropped + s.facts_dropped + s.fragments_dropped);

        // What a naive reading of the well-formed records finds is all there.
        let names = entity_set(&o);
        let missing: Vec<_> =
            quoted_fields(&text, &["entity"]).into_iter().filter(|(n, _)| !names.contains(n)).collect();
        assert!(missing.len() <= s.entities_dropped, "{key}: entities missing: {missing:?}");
        let pairs = relation_set(&o);
        let missing: Vec<_> =
            quoted_fields(&text, &["relationship", "relation"]).into_iter().filter(|p| !pairs.contains(p)).collect();
        assert!(missing.len() <= s.relations_dropped, "{key}: relations missing: {missing:?}");
        // Every relation endpoint is an entity; every weight is in 0..1.
        for r in &o.extraction.relations {
            assert!(names.contains(&normalize_name(&r.source)) && names.contains(&normalize_name(&r.target)));
            assert!((0.0..=1.0).contains(&r.weight), "{key}: weight {}", r.weight);
        }
        if o.dropped > 0 {
            eprintln!("{key}: dropped {} — {:?}", o.dropped, o.warnings);
        }

        t.entity_records += n_ent;
        t.relation_records += n_rel;
        t.entities += o.extraction.entities.len();
        t.relations += o.extraction.relations.len();
        t.dropped += o.dropped;
        t.merged += s.entities_merged;
        t.endpoints_added += s.endpoints_added;
        t.retyped += s.retyped;
    }
    eprintln!("fixture totals: {t:#?}");
    assert_eq!(t.responses, 187);
    assert!(t.extraction_responses >= 80, "{t:?}");
    // Malformed records are rare in these responses; dropping many would be a bug.
    assert!(t.dropped * 100 <= t.entity_records + t.relation_records, "{t:?}");
}

/// A small deterministic generator (SplitMix64), so cut points are random but fixed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[test]
fn truncated_fixtures_yield_a_subset() {
    let mut rng = Rng(20240601);
    let mut cuts = 0;
    let mut kept_entities = 0;
    for (key, text) in load() {
        let full = parse(&text);
        let (names, pairs) = (entity_set(&full), relation_set(&full));
        for _ in 0..8 {
            let mut at = (rng.next() % text.len() as u64) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let cut = parse(&text[..at]);
            cuts += 1;
            assert!(!cut.warnings.iter().any(|w| w.contains("internal error")), "{key}@{at}: panicked");
            let extra: Vec<_> = entity_set(&cut).into_iter().filter(|n| !names.contains(n)).collect();
            assert!(
                extra.is_empty(),
                "{key} cut at {at}: entities not in the full parse: {extra:?}\n…{}",
                tail(&text[..at])
            );
            let extra: Vec<_> = relation_set(&cut).into_iter().filter(|p| !pairs.contains(p)).collect();
            assert!(extra.is_empty(), "{key} cut at {at}: relations not in the full parse: {extra:?}");
            assert!(cut.extraction.entities.len() <= full.extraction.entities.len());
            kept_entities += cut.extraction.entities.len();
        }
    }
    eprintln!("{cuts} truncated parses, {kept_entities} entities kept in total");
}

fn tail(s: &str) -> &str {
    let mut i = s.len().saturating_sub(200);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[i..]
}
