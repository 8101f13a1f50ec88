//! The ingestion steps on their own: loaders, chunker, extractor, on temp files and on
//! the shared data sets (`../shared/data`, skipped with a message when absent).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rhizome_core::text::{count_tokens, token_spans};
use rhizome_core::{ids, Chunk, Chunker, Document, Extraction, Extractor, Loader};
use rhizome_ingest::chunk::TokenChunker;
use rhizome_ingest::extract::NlpExtractor;
use rhizome_ingest::load::{default_loaders, load_path, CorpusLoader, LoadOutcome, Skipped};

/// The shared data folder, or None (with a message) when it is not there.
fn data(rel: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    let p = root.join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipping: {} not found", p.display());
        None
    }
}

fn load(p: &Path) -> LoadOutcome {
    load_path(p, &default_loaders())
}

fn reason_of<'a>(out: &'a LoadOutcome, suffix: &str) -> &'a str {
    out.skipped
        .iter()
        .find(|s| s.path.ends_with(suffix))
        .map(|s| s.reason.as_str())
        .unwrap_or_else(|| panic!("{suffix} not skipped: {:?}", out.skipped))
}

fn doc(title: &str, text: &str) -> Document {
    Document {
        id: ids::document_id(title, text),
        source: "t".into(),
        title: title.into(),
        text: text.into(),
        pages: None,
        meta: Default::default(),
    }
}

// ---------------------------------------------------------------- loaders

#[test]
fn loaders_load_formats_and_skip_bad_files_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("a_notes.txt"), "  Aage Bohr won the Nobel Prize.\n").unwrap();
    fs::write(d.join("b_readme.md"), "# Bohr *Institute*\n\nSee [the site](http://nbi.ku.dk).\n").unwrap();
    fs::write(d.join("c_page.html"), "<html><head><title>Page &amp; Co</title><script>x()</script></head><body><p>Hello&nbsp;<b>world</b></p></body></html>").unwrap();
    fs::write(d.join("d_binary.txt"), b"abc\x00def").unwrap();
    fs::write(d.join("e_empty.txt"), "").unwrap();
    fs::write(d.join("f_blank.md"), " \n\t\n").unwrap();
    fs::write(d.join("g_latin1.txt"), b"caf\xe9 au lait").unwrap();
    fs::write(d.join("h_bad.json"), "[{\"title\": \"A\",\n \"text\": }]").unwrap();
    fs::write(d.join("i_paper.exe"), b"MZ").unwrap();
    fs::write(d.join("j_noext"), "text").unwrap();
    fs::write(d.join(".hidden.txt"), "secret").unwrap();
    fs::create_dir_all(d.join("sub/.git")).unwrap();
    fs::write(d.join("sub/.git/config.txt"), "nope").unwrap();
    fs::write(d.join("sub/k_more.TXT"), "More text.").unwrap();
    fs::write(d.join("sub/l_copy.txt"), "More text.").unwrap(); // different title: not a duplicate
    std::os::unix::fs::symlink(d.join("missing.txt"), d.join("m_dangling.txt")).unwrap();

    let out = load(d);
    let titles: Vec<&str> = out.documents.iter().map(|x| x.title.as_str()).collect();
    assert_eq!(titles, ["a_notes", "Bohr Institute", "Page & Co", "k_more", "l_copy"]);
    let a = &out.documents[0];
    assert_eq!(a.text, "Aage Bohr won the Nobel Prize.");
    assert_eq!(a.source, d.join("a_notes.txt").display().to_string());
    assert_eq!(a.id, ids::document_id("a_notes", &a.text));
    assert_eq!(out.documents[1].text, "Bohr Institute\n\nSee the site.");
    assert_eq!(out.documents[2].text, "Hello world");

    assert_eq!(reason_of(&out, "d_binary.txt"), "binary file");
    assert_eq!(reason_of(&out, "e_empty.txt"), "empty");
    assert_eq!(reason_of(&out, "f_blank.md"), "empty");
    assert_eq!(reason_of(&out, "g_latin1.txt"), "not valid UTF-8 (byte 0xe9 at offset 3)");
    assert!(reason_of(&out, "h_bad.json").starts_with("invalid JSON at line 2 column 10: "), "{:?}", out.skipped);
    assert_eq!(reason_of(&out, "i_paper.exe"), "unsupported file type .exe");
    assert_eq!(reason_of(&out, "j_noext"), "unsupported file type (no extension)");
    let target = d.join("missing.txt").display().to_string();
    assert_eq!(
        reason_of(&out, "m_dangling.txt"),
        format!("broken symbolic link to {target} (no such file or directory)")
    );
    assert_eq!(out.skipped.len(), 8, "{:?}", out.skipped);
    assert!(!out.skipped.iter().any(|s| s.path.contains("hidden") || s.path.contains(".git")));

    // Single paths, missing paths, determinism.
    let one = load(&d.join("a_notes.txt"));
    assert_eq!(one.documents.len(), 1);
    assert!(one.skipped.is_empty());
    let missing = load(&d.join("nope/none.txt"));
    assert!(missing.documents.is_empty());
    assert_eq!(
        missing.skipped,
        vec![Skipped {
            path: d.join("nope/none.txt").display().to_string(),
            reason: "no such file or directory".into()
        }]
    );
    assert_eq!(load(d), out);
}

#[test]
fn corpus_loader_reads_all_three_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let list = d.join("list.json");
    fs::write(&list, r#"[{"title":"A","text":"Alpha text."},{"title":"B","passage":"Beta."},{"title":"C","text":""},{"title":"D","content":"Delta."},{"title":"E","body":"Echo."},{"title":"A","text":"Alpha text."}]"#).unwrap();
    let out = load(&list);
    let titles: Vec<&str> = out.documents.iter().map(|x| x.title.as_str()).collect();
    assert_eq!(titles, ["A", "B", "D", "E"]);
    let p = list.display().to_string();
    assert_eq!(out.documents[2].source, format!("{p}#3"));
    assert_eq!(out.skipped[0], Skipped { path: format!("{p}#2"), reason: "empty text".into() });
    assert_eq!(out.skipped[1], Skipped { path: format!("{p}#5"), reason: format!("duplicate of {p}#0") });
    assert_eq!(out.skipped.len(), 2);

    let map = d.join("hotpot.json");
    fs::write(&map, r#"{"Demon Dice": ["Demon Dice is a game.", " In it, players fight."], "Empty": []}"#).unwrap();
    let out = load(&map);
    assert_eq!(out.documents.len(), 1);
    assert_eq!(out.documents[0].title, "Demon Dice");
    assert_eq!(out.documents[0].text, "Demon Dice is a game. In it, players fight.");
    assert_eq!(out.skipped[0].reason, "empty text");

    let lines = d.join("c.jsonl");
    fs::write(&lines, "{\"title\":\"One\",\"text\":\"First.\"}\n\n{\"title\":\"Two\",\"text\":\"Second.\"}\n").unwrap();
    let out = load(&lines);
    assert_eq!(out.documents.iter().map(|x| x.title.as_str()).collect::<Vec<_>>(), ["One", "Two"]);
    assert!(out.documents[1].source.ends_with("c.jsonl#1"));
    fs::write(&lines, "{\"title\":\"One\",\"text\":\"First.\"}\n{\"title\":\"Two\"\n").unwrap();
    let out = load(&lines);
    assert!(out.documents.is_empty());
    assert!(out.skipped[0].reason.starts_with("invalid JSON at line 2 column"), "{:?}", out.skipped);
    fs::write(&lines, "{\"title\":\"One\",\"text\":\" \"}\n").unwrap();
    assert_eq!(load(&lines).skipped[0].reason, "no entries with text (1 empty)");
    assert!(CorpusLoader.accepts(&lines) && !CorpusLoader.accepts(Path::new("x.csv")));
}

#[test]
fn real_corpora_load_completely() {
    if let Some(p) = data("musique/musique_train_corpus.json") {
        let out = load(&p);
        assert_eq!(out.documents.len(), 1890);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let first = &out.documents[0];
        assert_eq!(first.title, "Journal of Mathematical Physics");
        assert!(first.text.starts_with("The Journal of Mathematical Physics is a peer-reviewed journal"));
        // Sources are canonical paths, so one file has one source however it was typed.
        assert_eq!(first.source, format!("{}#0", p.canonicalize().unwrap().display()));
        assert!(out.documents[1889].source.ends_with("#1889"));
    }
    if let Some(p) = data("hotpotqa/hotpotqa_train_corpus.json") {
        let out = load(&p);
        assert_eq!(out.documents.len(), 994);
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        let first = &out.documents[0];
        assert_eq!(first.title, "Demon Dice");
        // Sentences joined as they are (each carries its leading space).
        assert!(
            first.text.contains("(designer of the better-known Dragon Dice) and Tim Brown. In it, each player"),
            "{}",
            first.text
        );
    }
    if let Some(p) = data("zh_openai") {
        let out = load(&p);
        let titles: Vec<&str> = out.documents.iter().map(|x| x.title.as_str()).collect();
        assert_eq!(titles, ["ai_industry", "microsoft_investment", "openai_report"]);
    }
}

// ---------------------------------------------------------------- chunker

/// Checks every invariant of a chunking of `d`.
fn check_chunks(c: &TokenChunker, d: &Document) -> Vec<Chunk> {
    let chunks = c.chunk(d);
    let spans = token_spans(&d.text);
    if spans.is_empty() {
        assert!(chunks.is_empty());
        return chunks;
    }
    assert_eq!(chunks, c.chunk(d), "deterministic");
    if spans.len() <= c.size.max(1) {
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, d.text.trim());
        return chunks;
    }
    let w = c.windows(&d.text, &spans);
    assert_eq!(w.len(), chunks.len());
    assert_eq!(w[0].0, 0);
    assert_eq!(w.last().unwrap().1, spans.len(), "all tokens covered");
    let overlap = c.overlap.min(c.size.max(1) - 1);
    for (k, (ch, &(a, b))) in chunks.iter().zip(&w).enumerate() {
        assert!(b > a && b - a <= c.size.max(1));
        assert_eq!(ch.ordinal as usize, k);
        assert_eq!(ch.tokens as usize, b - a);
        assert_eq!(ch.text, &d.text[spans[a].0..spans[b - 1].1]);
        assert_eq!(ch.id, ids::chunk_id(&d.id, ch.ordinal, &ch.text));
        assert_eq!(ch.doc_id, d.id);
        if k + 1 < w.len() {
            assert_eq!(w[k + 1].0, b - overlap, "consecutive chunks share `overlap` tokens");
        }
    }
    chunks
}

#[test]
fn chunker_small_empty_and_degenerate() {
    let c = TokenChunker::new(10, 2);
    assert!(c.chunk(&doc("e", "")).is_empty());
    assert!(c.chunk(&doc("w", "  \n\t ")).is_empty());
    let one = c.chunk(&doc("s", "  Aage Bohr won.  "));
    assert_eq!(one.len(), 1);
    assert_eq!((one[0].text.as_str(), one[0].tokens, one[0].ordinal), ("Aage Bohr won.", 4, 0));
    let long = doc("l", &"word ".repeat(95));
    for c in [
        TokenChunker::new(10, 2),
        TokenChunker::new(10, 10),
        TokenChunker::new(10, 50),
        TokenChunker::new(1, 0),
        TokenChunker::new(0, 3),
    ] {
        let chunks = check_chunks(&c, &long);
        assert!(!chunks.is_empty());
    }
    assert_eq!(TokenChunker::new(10, 0).chunk(&long).len(), 10);
    // Spacing is kept; CJK characters are tokens.
    let zh = doc("zh", "Microsoft宣布向OpenAI投资100亿美元，这是AI领域最大的投资之一。OpenAI的CEO Sam Altman表示这次合作将加速AI技术的发展。");
    let chunks = check_chunks(&TokenChunker::new(12, 3), &zh);
    assert!(chunks.len() > 3);
    assert!(chunks.iter().any(|c| c.text.contains("CEO Sam Altman")));
}

#[test]
fn chunker_prefers_sentence_ends() {
    let text = "Alpha beta gamma delta. Epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi. Rho sigma tau upsilon phi chi psi omega one two three four.";
    let chunks = check_chunks(&TokenChunker::new(20, 4), &doc("g", text));
    assert_eq!(chunks[0].text, "Alpha beta gamma delta. Epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi.");
    assert_eq!(chunks[0].tokens, 18);
    // Newline gaps count as sentence ends too.
    let lines = (0..30).map(|i| format!("line {i} has some words")).collect::<Vec<_>>().join("\n");
    let chunks = check_chunks(&TokenChunker::new(22, 2), &doc("n", &lines));
    assert!(chunks[..chunks.len() - 1].iter().all(|c| c.text.ends_with("words")), "{chunks:#?}");
}

#[test]
fn chunker_invariants_on_real_corpus() {
    let Some(p) = data("musique/musique_train_corpus.json") else { return };
    let docs = load(&p).documents;
    let c = TokenChunker::new(48, 8);
    let (mut total, mut at_sentence_end) = (0, 0);
    for d in &docs {
        let chunks = check_chunks(&c, d);
        for ch in &chunks[..chunks.len().saturating_sub(1)] {
            total += 1;
            at_sentence_end += usize::from(ch.text.ends_with(['.', '!', '?', '"', ')']));
            assert_eq!(count_tokens(&ch.text), ch.tokens as usize);
        }
    }
    eprintln!("musique @48/8: {total} non-final chunks, {at_sentence_end} end at a sentence end");
    assert!(total > 1000 && at_sentence_end * 3 > total);
}

// ---------------------------------------------------------------- extractor

fn has(e: &Extraction, name: &str, ty: &str) -> bool {
    e.entities.iter().any(|x| x.name == name && x.entity_type == ty)
}

fn fact(e: &Extraction, s: &str, p: &str, o: &str) -> bool {
    e.facts.iter().any(|f| f.subject == s && f.predicate == p && f.object == o)
}

const JMP: &str = "The Journal of Mathematical Physics is a peer-reviewed journal published monthly by the American Institute of Physics devoted to the publication of papers in mathematical physics. The journal was first published bimonthly beginning in January 1960; it became a monthly publication in 1963. The current editor is Jan Philip Solovej from University of Copenhagen. Its 2018 Impact Factor is 1.355";

#[test]
fn extractor_finds_english_names_types_relations_and_facts() {
    let x = NlpExtractor::new(40);
    assert_eq!(x.name(), "nlp");
    let e = x.extract_text(JMP);
    for (name, ty) in [
        ("Journal of Mathematical Physics", "ORGANIZATION"),
        ("American Institute of Physics", "ORGANIZATION"),
        ("Jan Philip Solovej", "PERSON"),
        ("University of Copenhagen", "ORGANIZATION"),
        ("January 1960", "DATE"),
        ("1963", "DATE"),
        ("2018", "DATE"),
        ("1.355", "NUMBER"),
    ] {
        assert!(has(&e, name, ty), "{name} {ty}: {:#?}", e.entities);
    }
    assert!(!e.entities.iter().any(|x| ["The", "Its", "The Journal"].contains(&x.name.as_str())));
    let jmp = &e.entities[0];
    assert!(jmp.description.starts_with("The Journal of Mathematical Physics is a peer-reviewed"));
    assert_eq!(jmp.count, 1);
    let r = e.relations.iter().find(|r| r.target == "American Institute of Physics").unwrap();
    assert_eq!(
        (r.source.as_str(), r.rel_type.as_str(), r.weight),
        ("Journal of Mathematical Physics", "CO_OCCURS", 1.0)
    );
    assert!(
        fact(
            &e,
            "Journal of Mathematical Physics",
            "is a peer-reviewed journal published monthly by",
            "American Institute of Physics"
        ),
        "{:#?}",
        e.facts
    );
    assert!(fact(&e, "Jan Philip Solovej", "from", "University of Copenhagen"));

    let e = x.extract_text("The Journal of Mathematical Physics is published by the American Institute of Physics. The Journal of Mathematical Physics is published by the American Institute of Physics.");
    assert_eq!(e.facts.len(), 1, "facts are deduplicated");
    assert!(fact(&e, "Journal of Mathematical Physics", "is published by", "American Institute of Physics"));
    assert_eq!(e.entities[0].count, 2);
    assert_eq!(e.relations[0].weight, 2.0);

    let chunk = Chunk {
        id: "c".into(),
        doc_id: "d".into(),
        ordinal: 0,
        text: JMP.into(),
        tokens: 0,
        start: 0,
        end: 0,
        pages: None,
    };
    assert_eq!(x.extract(&chunk).unwrap(), x.extract_text(JMP), "deterministic");
}

#[test]
fn extractor_dates_money_quotes_initials() {
    let e = NlpExtractor::new(0).extract_text(
        "Bohr was born on 22 December 1955 and died December 22, 1962. Microsoft paid $10 billion to OpenAI. \
         The film “Made in Japan” and «Le Monde» and 「红楼梦」 were cited. Huy chương H. C. Ørsted went to Mr. John Smith in Chicago. \
         Dr. Ada King (born 1815) said so.",
    );
    for (name, ty) in [
        ("22 December 1955", "DATE"),
        ("December 22, 1962", "DATE"),
        ("$10 billion", "MONEY"),
        ("Made in Japan", "CONCEPT"),
        ("Le Monde", "CONCEPT"),
        ("红楼梦", "CONCEPT"),
        ("Huy chương H. C. Ørsted", "ENTITY"),
        ("John Smith", "PERSON"),
        ("Chicago", "LOCATION"),
        ("Ada King", "PERSON"),
        ("1815", "DATE"),
    ] {
        assert!(has(&e, name, ty), "{name} {ty}: {:#?}", e.entities);
    }
}

#[test]
fn extractor_prunes_to_the_most_frequent() {
    let text = "Copenhagen is big. Copenhagen is old. Aage Bohr lived in Copenhagen with Niels Bohr. Niels Bohr met Ernest Rutherford and Ben Mottelson.";
    let all = NlpExtractor::new(0).extract_text(text);
    assert_eq!(all.entities.len(), 5);
    let e = NlpExtractor::new(2).extract_text(text);
    let names: Vec<&str> = e.entities.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["Copenhagen", "Niels Bohr"]);
    for r in &e.relations {
        assert!(names.contains(&r.source.as_str()) && names.contains(&r.target.as_str()));
    }
    for f in &e.facts {
        assert!(names.contains(&f.subject.as_str()) && names.contains(&f.object.as_str()));
    }
}

#[test]
fn extractor_on_chinese_documents() {
    let Some(p) = data("zh_openai") else { return };
    let x = NlpExtractor::default();
    let docs = load(&p).documents;
    let all: Vec<Extraction> = docs.iter().map(|d| x.extract_text(&d.text)).collect();
    let found = |name: &str, ty: &str| all.iter().any(|e| has(e, name, ty));
    for name in ["OpenAI", "Microsoft", "Google", "AI", "GPT-4"] {
        assert!(found(name, "ENTITY"), "{name}: {all:#?}");
    }
    assert!(found("Sam Altman", "PERSON"));
    assert!(found("旧金山", "LOCATION") && found("旧金山湾区", "LOCATION"));
    assert!(found("100亿美元", "MONEY"));
    assert!(all.iter().any(|e| fact(e, "Microsoft", "宣布向", "OpenAI")));
}

/// Vietnamese sentences made of the vi_bohr edges ("source relation target.").
fn vi_text(edges: &str) -> String {
    edges
        .lines()
        .skip(1)
        .filter_map(|l| {
            let p: Vec<&str> = l.split(',').collect();
            (p.len() == 3).then(|| format!("{} {} {}. ", p[0], p[1], p[2]))
        })
        .collect()
}

#[test]
fn extractor_on_vietnamese() {
    let x = NlpExtractor::default();
    let e = x.extract_text("Aage Bohr đoạt giải Nobel Vật lý năm 1975 cùng Ben Mottelson.");
    assert!(has(&e, "Aage Bohr", "PERSON") && has(&e, "Ben Mottelson", "PERSON") && has(&e, "1975", "DATE"), "{e:#?}");
    let Some(p) = data("vi_bohr/edges.csv") else { return };
    let edges = fs::read_to_string(p).unwrap();
    let e = NlpExtractor::new(0).extract_text(&vi_text(&edges));
    let mut names: Vec<&str> = edges
        .lines()
        .skip(1)
        .flat_map(|l| {
            let p: Vec<&str> = l.split(',').collect();
            [p[0], p[2]]
        })
        .filter(|n| n.chars().next().is_some_and(char::is_uppercase))
        .collect();
    names.sort();
    names.dedup();
    let missed: Vec<&&str> = names.iter().filter(|n| !e.entities.iter().any(|x| x.name == **n)).collect();
    eprintln!("vi_bohr: {} capitalised names, missed {missed:?}", names.len());
    assert!(missed.len() * 10 <= names.len(), "missed {missed:?}");
    for (name, ty) in [
        ("Viện Niels Bohr", "ORGANIZATION"),
        ("Đại học Copenhagen", "ORGANIZATION"),
        ("Copenhagen", "LOCATION"),
        ("Đan Mạch", "LOCATION"),
        ("Niels Bohr", "PERSON"),
    ] {
        assert!(has(&e, name, ty), "{name}");
    }
    assert!(fact(&e, "Aage Bohr", "là con trai của", "Niels Bohr"));
    assert!(fact(&e, "Copenhagen", "là thủ đô của", "Đan Mạch"));
}

/// Entities per 1,000 characters and the extraction time on the real data, printed.
#[test]
fn extraction_figures() {
    let x = NlpExtractor::default();
    let chunker = TokenChunker::default();
    let per_k = |chunks: &[Chunk]| {
        let chars: usize = chunks.iter().map(|c| c.text.chars().count()).sum();
        let ents: usize = chunks.iter().map(|c| x.extract(c).unwrap().entities.len()).sum();
        (ents, ents as f64 * 1000.0 / chars.max(1) as f64)
    };
    if let Some(p) = data("musique/musique_train_corpus.json") {
        let docs = load(&p).documents;
        let chunks: Vec<Chunk> = docs.iter().flat_map(|d| chunker.chunk(d)).collect();
        let t = Instant::now();
        let (ents, rels, facts) = chunks.iter().fold((0, 0, 0), |acc, c| {
            let e = x.extract(c).unwrap();
            (acc.0 + e.entities.len(), acc.1 + e.relations.len(), acc.2 + e.facts.len())
        });
        let took = t.elapsed();
        let (_, k) = per_k(&chunks);
        eprintln!(
            "FIGURES musique: {} docs, {} chunks, {ents} entities, {rels} relations, {facts} facts, {k:.1} entities/1k chars, extraction {:.0} ms",
            docs.len(), chunks.len(), took.as_secs_f64() * 1000.0
        );
        assert!((10.0..60.0).contains(&k));
    }
    if let Some(p) = data("zh_openai") {
        let chunks: Vec<Chunk> = load(&p).documents.iter().flat_map(|d| chunker.chunk(d)).collect();
        let (ents, k) = per_k(&chunks);
        eprintln!("FIGURES zh_openai: {ents} entities, {k:.1} entities/1k chars");
    }
    if let Some(p) = data("vi_bohr/edges.csv") {
        let text = vi_text(&fs::read_to_string(p).unwrap());
        let chunks = chunker.chunk(&doc("vi", &text));
        let (ents, k) = per_k(&chunks);
        eprintln!(
            "FIGURES vi_bohr sentences: {} chars, {} chunks, {ents} entities, {k:.1} entities/1k chars",
            text.chars().count(),
            chunks.len()
        );
    }
}
