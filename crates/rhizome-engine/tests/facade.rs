//! The engine facade on its own, as the CLI and the server use it: open an index that does
//! not exist yet, index files and in-memory texts, query with two methods, list, count and
//! delete documents. The smaller embedder (all-MiniLM-L6-v2) keeps it to seconds; it must
//! be installed (`rhizome models fetch`).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use rhizome_core::{Config, Error};
use rhizome_engine::{text_document, Engine, IndexInput, Method, NoProgress, QueryOutcome, QueryRequest, WriteOptions};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/docs")
}

/// An engine on a new index in `dir`, with the smaller embedder.
fn engine(dir: &Path) -> Engine {
    let mut config = Config::default();
    config.embed.model = "all-MiniLM-L6-v2".into();
    Engine::open(&dir.join("index").display().to_string(), config, WriteOptions::default()).unwrap()
}

fn ask(engine: &Engine, question: &str, method: Method) -> QueryOutcome {
    engine.query(&QueryRequest::new(question, method), None).unwrap()
}

fn documents(engine: &Engine) -> u64 {
    engine.stats().unwrap().nodes.get("Document").copied().unwrap_or(0)
}

#[test]
fn files_are_indexed_queried_listed_and_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(tmp.path());
    let cancel = AtomicBool::new(false);
    assert!(!engine.exists(), "nothing is created before the first write");

    let out = engine.index(IndexInput::Paths(vec![examples()]), &NoProgress, &cancel).unwrap();
    assert!(engine.exists());
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    assert_eq!(out.report.documents_indexed, 3);
    assert_eq!(out.stats, engine.stats().unwrap());
    assert_eq!(documents(&engine), 3);
    assert!(out.stats.nodes.get("Entity").copied().unwrap_or(0) > 0, "{:?}", out.stats);

    let page = engine.documents(None, 0, 10).unwrap();
    assert_eq!(page.total, 3);
    let physics = page.documents.iter().find(|d| d.source.ends_with("copenhagen-physics.txt")).unwrap();
    assert!(physics.chunks > 0 && physics.entities > 0, "{physics:?}");
    assert_eq!(engine.documents(Some("copenhagen"), 0, 10).unwrap().total, 1);

    let question = "Who shared the Nobel Prize in Physics with Aage Bohr?";
    for method in [Method::Basic, Method::Hippo] {
        let o = ask(&engine, question, method);
        assert_eq!(o.method, method);
        let top = o.contexts.first().unwrap_or_else(|| panic!("{method:?}: no context"));
        assert!(top.source.ends_with("copenhagen-physics.txt"), "{method:?}: {:?}", top.source);
        assert!(o.contexts.iter().any(|c| c.text.contains("Mottelson")), "{method:?}: {:?}", o.contexts);
    }

    // Importance, LLM-free: the stored value (from mentions and documents) blended with
    // centrality, so the hub of a neighbourhood is shown above its leaves.
    let hood = engine.neighbourhood("Aage Bohr", 1, 40).unwrap();
    let shown = |id: &str| engine.entity_detail(id, 1).unwrap().entity.importance.unwrap();
    let stored = |id: &str| engine.reader().unwrap().entities(&[id.to_string()]).unwrap()[0].importance.unwrap();
    let leaf = hood.nodes.iter().filter(|n| n.id != hood.center).min_by_key(|n| n.degree).unwrap();
    assert!(shown(&hood.center) > stored(&hood.center), "a hub's centrality raises it");
    assert!(shown(&leaf.id) < stored(&leaf.id) || leaf.degree > 1, "{leaf:?}: a leaf's lowers it");
    assert!(shown(&hood.center) > shown(&leaf.id));

    viewer_reads_without_the_whole_graph(tmp.path(), &engine);

    // The same files again: nothing new.
    let again = engine.index(IndexInput::Paths(vec![examples()]), &NoProgress, &cancel).unwrap();
    assert_eq!((again.report.documents_indexed, again.report.documents_unchanged), (0, 3));
    assert_eq!(again.stats, out.stats);

    let deleted = engine.delete(&physics.source, &cancel).unwrap();
    assert_eq!(deleted.deleted.documents, 1);
    assert_eq!(documents(&engine), 2);
    assert_eq!(engine.documents(None, 0, 10).unwrap().total, 2);
    let o = ask(&engine, question, Method::Basic);
    assert!(o.contexts.iter().all(|c| !c.source.ends_with("copenhagen-physics.txt")), "{:?}", o.contexts);

    match engine.delete("no-such-document", &cancel) {
        Err(Error::NotFound(msg)) => assert!(msg.contains("no-such-document"), "{msg}"),
        other => panic!("deleting an unknown document: {other:?}"),
    }
}

/// The graph viewer's reads (name search, explorer subgraph, entity, document page) give
/// the same on an engine that holds no whole graph (`retrieval.whole_graph_up_to` 0) as
/// on `whole`, but for importance: the stored one without the centrality of the graph.
fn viewer_reads_without_the_whole_graph(dir: &Path, whole: &Engine) {
    let mut config = Config::default();
    config.embed.model = "all-MiniLM-L6-v2".into();
    config.retrieval.whole_graph_up_to = 0;
    let around = Engine::open(&dir.join("index").display().to_string(), config, WriteOptions::default()).unwrap();
    let rows = whole.reader().unwrap().entity_rows().unwrap();
    assert!(rows.len() > 20, "{} entities", rows.len());
    let mut prefixes = std::collections::BTreeSet::new();
    for r in &rows {
        let words: Vec<&str> = r.name.split_whitespace().collect();
        prefixes.insert(r.name.chars().take(1).collect::<String>());
        prefixes.insert(r.name.to_uppercase());
        for w in words.iter().skip(1) {
            prefixes.insert(w.chars().take(3).collect::<String>());
        }
    }
    for p in &prefixes {
        for limit in [1, 5, 50] {
            let (a, b) = (whole.search_entities(p, limit), around.search_entities(p, limit));
            assert_eq!(json(&a.unwrap()), json(&b.unwrap()), "search {p:?} limit {limit}");
        }
    }
    assert!(around.search_entities("zzqqxx", 5).unwrap().is_empty());
    assert!(matches!(around.search_entities("  ", 5), Err(Error::BadInput { .. })));
    for r in &rows {
        for (depth, max_nodes) in [(0, 5), (1, 40), (2, 6), (3, 1000)] {
            let (a, b) = (whole.neighbourhood(&r.id, depth, max_nodes), around.neighbourhood(&r.id, depth, max_nodes));
            assert_eq!(json(&a.unwrap()), json(&b.unwrap()), "around {} depth {depth} max {max_nodes}", r.name);
        }
        let (a, b) = (whole.neighbourhood(&r.name.to_lowercase(), 2, 12), around.neighbourhood(&r.name, 2, 12));
        assert_eq!(json(&a.unwrap()), json(&b.unwrap()), "around the name {}", r.name);
        let mut a = json(&whole.entity_detail(&r.id, 3).unwrap());
        let mut b = json(&around.entity_detail(&r.id, 3).unwrap());
        let stored = around.reader().unwrap().entities(std::slice::from_ref(&r.id)).unwrap()[0].importance;
        assert_eq!(b["entity"]["importance"].as_f64().map(|x| x as f32), stored, "{}: the stored importance", r.name);
        a["entity"]["importance"] = serde_json::Value::Null;
        b["entity"]["importance"] = serde_json::Value::Null;
        assert_eq!(a, b, "entity {}", r.name);
    }
    assert!(matches!(around.neighbourhood("no such entity", 1, 5), Err(Error::NotFound(_))));
    assert!(matches!(around.neighbourhood("", 1, 5), Err(Error::NotFound(_))));
    let start: String = rows[0].name.chars().take(2).collect();
    let named = around.entity_named(&start, 2).unwrap();
    assert_eq!(named.entity.id, whole.entity_named(&start, 2).unwrap().entity.id);
    let docs = whole.documents(None, 0, 10).unwrap().documents;
    assert_eq!(docs.len(), 3);
    for d in docs.iter().map(|d| d.id.as_str()).chain([docs[0].source.as_str()]) {
        let (a, b) = (json(&whole.document(d).unwrap()), json(&around.document(d).unwrap()));
        assert!(!a["entities"].as_array().unwrap().is_empty());
        assert_eq!(a, b, "document {d}");
    }
}

/// `x` as JSON, for comparing what two engines give.
fn json(x: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(x).unwrap()
}

#[test]
fn texts_in_memory_are_indexed_and_seen_by_another_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let writer = engine(tmp.path());
    let cancel = AtomicBool::new(false);
    let docs = vec![
        text_document(
            "Ada Lovelace",
            "Ada Lovelace wrote the first program for Charles Babbage's Analytical Engine in 1843.",
            "upload:ada",
            "text",
        )
        .unwrap(),
        text_document(
            "Grace Hopper",
            "Grace Hopper built the first compiler, the A-0 system, in 1952.",
            "upload:grace",
            "text",
        )
        .unwrap(),
    ];
    assert!(matches!(text_document("Empty", "  ", "upload:empty", "text"), Err(Error::BadInput { .. })));
    let out = writer.index(IndexInput::Documents(docs), &NoProgress, &cancel).unwrap();
    assert_eq!(out.report.documents_indexed, 2);

    // Another engine on the same index (another process, as far as the store knows).
    let reader = engine(tmp.path());
    assert_eq!(reader.stats().unwrap(), writer.stats().unwrap());
    let o = ask(&reader, "Who wrote the first program for the Analytical Engine?", Method::Basic);
    assert_eq!(o.contexts.first().map(|c| c.source.as_str()), Some("upload:ada"), "{:?}", o.contexts);

    // A write by one engine is seen by the other's pooled readers.
    writer.delete("upload:grace", &cancel).unwrap();
    assert_eq!(documents(&reader), 1);
    assert_eq!(reader.documents(Some("Hopper"), 0, 10).unwrap().total, 0);

    // A name takes new content while its old content arrives under another name in the
    // same run (a file renamed, and a new one saved under the old name): both are kept,
    // the old under its new name, without indexing it again.
    let docs = vec![
        text_document("Ada Lovelace", "Ada Lovelace translated Menabrea's paper on the engine.", "upload:ada", "text")
            .unwrap(),
        text_document(
            "Ada Lovelace",
            "Ada Lovelace wrote the first program for Charles Babbage's Analytical Engine in 1843.",
            "upload:ada-1843",
            "text",
        )
        .unwrap(),
    ];
    let out = writer.index(IndexInput::Documents(docs), &NoProgress, &cancel).unwrap();
    assert_eq!((out.report.documents_indexed, out.report.documents_replaced), (1, 1), "{:?}", out.report);
    assert_eq!(documents(&writer), 2);
    let o = ask(&writer, "Who wrote the first program for the Analytical Engine?", Method::Basic);
    assert_eq!(o.contexts.first().map(|c| c.source.as_str()), Some("upload:ada-1843"), "{:?}", o.contexts);
}

#[test]
fn a_question_in_a_scope_reads_community_reports_of_its_documents_only() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(tmp.path());
    let cancel = AtomicBool::new(false);
    let text = |title: &str, body: &str, source: &str| text_document(title, body, source, "text").unwrap();
    // One person in both documents: a community of the whole graph holds what each says.
    let docs = vec![
        text(
            "Institute",
            "Niels Bohr founded the Institute for Theoretical Physics in Copenhagen. Niels Bohr won the Nobel \
             Prize in Physics in 1922. The Institute for Theoretical Physics trained Werner Heisenberg.",
            "upload:institute",
        ),
        text(
            "Family",
            "Niels Bohr married Margrethe Norlund in Slagelse in 1912. Margrethe Norlund sailed with Niels Bohr \
             on the Oresund. Margrethe Norlund edited the letters of Niels Bohr.",
            "upload:family",
        ),
    ];
    engine.index(IndexInput::Documents(docs), &NoProgress, &cancel).unwrap();
    let mut all = QueryRequest::new("What is known about Niels Bohr?", Method::Global);
    all.retrieve_only = true;
    let reports = |o: &QueryOutcome| -> String {
        o.contexts.iter().filter(|c| c.kind.as_str() == "report").map(|c| c.text.clone()).collect::<Vec<_>>().join("\n")
    };
    let whole = reports(&engine.query(&all, None).unwrap());
    assert!(whole.contains("Margrethe"), "the whole index's reports tell of both documents: {whole}");
    let mut scoped = all.clone();
    scoped.filter = rhizome_core::DocFilter::parse(&["source=upload:institute"]).unwrap();
    let got = reports(&engine.query(&scoped, None).unwrap());
    assert!(got.contains("Bohr"), "{got}");
    for other in ["Margrethe", "Slagelse", "Oresund"] {
        assert!(!got.contains(other), "a report in scope tells only its documents, not {other}: {got}");
    }
}

/// Two documents state one relation (Niels Bohr and Copenhagen) and describe its ends in
/// their own words: through a scope of one document, the graph methods' context carries
/// that document's wording only, of the relation and of the entities alike.
#[test]
fn a_question_in_a_scope_reads_relations_as_its_documents_state_them() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(tmp.path());
    let text = |title: &str, body: &str, source: &str| text_document(title, body, source, "text").unwrap();
    let docs = vec![
        text(
            "Lecture",
            "Niels Bohr lectured on quantum theory in Copenhagen. Niels Bohr taught Werner Heisenberg in Copenhagen.",
            "upload:lecture",
        ),
        text(
            "Voyage",
            "Niels Bohr sailed on the Oresund ferry from Copenhagen. Niels Bohr rowed past Slagelse from Copenhagen.",
            "upload:voyage",
        ),
    ];
    engine.index(IndexInput::Documents(docs), &NoProgress, &AtomicBool::new(false)).unwrap();
    let context = |method: Method, filter: &[&str]| -> String {
        let mut q = QueryRequest::new("What did Niels Bohr do in Copenhagen?", method);
        q.retrieve_only = true;
        q.filter = rhizome_core::DocFilter::parse(filter).unwrap();
        let out = engine.query(&q, None).unwrap();
        out.contexts.iter().map(|c| format!("[{}] {}", c.kind.as_str(), c.text)).collect::<Vec<_>>().join("\n")
    };
    // The two documents word the relation and its ends differently; the whole index
    // tells one of them.
    let whole = context(Method::Local, &[]);
    let bohr =
        |c: &str| c.lines().find(|l| l.contains("Niels Bohr --CO_OCCURS--> Copenhagen")).unwrap_or("").to_string();
    assert!(["sailed", "lectured"].iter().any(|w| bohr(&whole).contains(w)), "{whole}");
    let own = [
        ("source=upload:lecture", ["Oresund", "Slagelse", "sailed", "rowed"]),
        ("source=upload:voyage", ["lectured", "quantum", "taught", "Heisenberg"]),
    ];
    for (method, name) in
        [(Method::Local, "local"), (Method::Drift, "drift"), (Method::Tog, "tog"), (Method::Multihop, "multihop")]
    {
        for (source, other) in own {
            let got = context(method, &[source]);
            assert!(!got.is_empty(), "{name} under {source} found nothing");
            for w in other {
                assert!(
                    !got.contains(w),
                    "{name} under {source} says {w:?}, which only the other document states: {got}"
                );
            }
        }
    }
    assert!(!bohr(&context(Method::Local, &[own[0].0])).is_empty(), "the relation is in scope");
}

/// Records where indexing says it is.
#[derive(Default)]
struct Places(std::sync::Mutex<Vec<String>>);

impl rhizome_engine::Progress for Places {
    fn start(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
    fn warn(&self, _: &str) {}
    fn at(&self, place: &str) {
        self.0.lock().unwrap().push(place.to_string());
    }
}

#[test]
fn a_long_paged_document_reports_the_page_indexing_is_at() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(tmp.path());
    let mut text = String::new();
    let mut pages = Vec::new();
    for n in 1..=120u32 {
        let start = text.chars().count() as u32;
        for s in 0..12 {
            text.push_str(&format!("Harbour record {n}.{s} lists the ferry Halvorsen {s} arriving at pier {n}. "));
        }
        text.push_str("\n\n");
        pages.push(rhizome_core::PageSpan { number: n, label: None, start, end: text.chars().count() as u32 });
    }
    let mut doc = rhizome_core::Document::new("/docs/harbour log.pdf", "Harbour log", &text);
    doc.pages = Some(rhizome_core::Pagination { unit: "page".into(), pages });
    let places = Places::default();
    let out = engine.index(IndexInput::Documents(vec![doc]), &places, &AtomicBool::new(false)).unwrap();
    assert_eq!(out.stats.nodes["Chunk"], 120, "a chunk a page here: {:?}", out.stats);
    let seen = places.0.into_inner().unwrap();
    assert_eq!(seen.first().map(String::as_str), Some("harbour log.pdf: page 64 of 120"), "{seen:?}");
    assert_eq!(seen.last().map(String::as_str), Some("harbour log.pdf: page 120 of 120"), "{seen:?}");
}
