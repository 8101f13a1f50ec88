//! The store contract, written against the traits only: every backend's test file runs
//! these functions on stores it opens (`store_suite.rs`: SQLite, `store_postgres.rs`:
//! PostgreSQL + pgvector, `store_falkordb.rs`: FalkorDB).
#![allow(dead_code)]

mod aliases;
mod communities;
mod meta;
mod neighbourhood;
mod tags;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use rhizome_core::ids::{chunk_id, document_id, entity_id, fact_id, relation_id, sentence_id};
use rhizome_core::*;

pub use aliases::aliases_contract;
pub use communities::community_contract;
pub use meta::meta_contract;
pub use neighbourhood::neighbourhood_contract;
pub use tags::document_index_contract;

pub fn unit(v: &[f32]) -> Vec<f32> {
    let mut v = v.to_vec();
    l2_normalize(&mut v);
    v
}

/// A document with one chunk per text, entities named in `ents`, a relation and a fact
/// between the first two entities, and vectors for all of them.
pub fn batch(title: &str, texts: &[&str], ents: &[&str]) -> WriteBatch {
    let body = texts.join(" ");
    let doc = Document {
        id: document_id(title, &body),
        source: format!("{title}.txt"),
        title: title.into(),
        text: body,
        pages: None,
        meta: Default::default(),
    };
    let mut b = WriteBatch::default();
    for (i, t) in texts.iter().enumerate() {
        let c = Chunk {
            id: chunk_id(&doc.id, i as u32, t),
            doc_id: doc.id.clone(),
            ordinal: i as u32,
            text: t.to_string(),
            tokens: 3,
            start: 0,
            end: 0,
            pages: None,
        };
        b.vectors.push((VectorKind::Chunk, c.id.clone(), unit(&[1.0, i as f32, title.len() as f32])));
        // Two sentence vectors per chunk (their ids sort apart from the chunk's).
        for (k, s) in ["first", "second"].iter().enumerate() {
            b.vectors.push((
                VectorKind::Sentence,
                sentence_id(&c.id, &format!("{t} {s}")),
                unit(&[0.5, k as f32, 1.0]),
            ));
        }
        for e in ents {
            b.mentions.push(MentionRecord {
                entity_id: entity_id(e),
                name: e.to_string(),
                entity_type: "ENTITY".into(),
                description: format!("{e} in {title}"),
                doc_id: doc.id.clone(),
                chunk_id: Some(c.id.clone()),
                count: 1,
                importance: None,
            });
        }
        b.chunks.push(c);
    }
    for (i, e) in ents.iter().enumerate() {
        b.vectors.push((VectorKind::Entity, entity_id(e), unit(&[1.0, 0.01 * i as f32, 0.0])));
    }
    if ents.len() >= 2 {
        let (s, o) = (entity_id(ents[0]), entity_id(ents[1]));
        b.relations.push(RelationRecord {
            relation: Relation {
                id: relation_id(&s, "CO_OCCURS", &o),
                source_id: s.clone(),
                target_id: o.clone(),
                rel_type: "CO_OCCURS".into(),
                description: title.into(),
                weight: 1.0,
            },
            doc_id: doc.id.clone(),
            chunk_id: Some(b.chunks[0].id.clone()),
        });
        let f = Fact {
            id: fact_id(ents[0], "knows", ents[1]),
            subject: ents[0].into(),
            predicate: "knows".into(),
            object: ents[1].into(),
            subject_id: s,
            object_id: o,
        };
        b.vectors.push((VectorKind::Fact, f.id.clone(), unit(&[0.0, 1.0, 0.0])));
        b.facts.push(FactRecord { fact: f, doc_id: doc.id.clone(), chunk_id: Some(b.chunks[0].id.clone()) });
    }
    if b.chunks.len() >= 2 {
        b.similar.push((b.chunks[0].id.clone(), b.chunks[1].id.clone(), 0.9));
    }
    b.documents.push(doc);
    b
}

/// The embedding callback of a deletion that re-keys no entity: embedding fails the test.
pub fn unnamed(names: &[String]) -> Result<Vec<Vec<f32>>> {
    panic!("no entity is re-keyed here, yet {names:?} were to be embedded")
}

/// `b` as entity resolution writes it when the entity named `alias` merges into the stored
/// entity named `into`: its records under `into`'s id, and no vector of its own.
pub fn merged(b: &WriteBatch, alias: &str, into: &str) -> WriteBatch {
    let (from, to) = (entity_id(alias), entity_id(into));
    let map = |id: &mut String| {
        if *id == from {
            *id = to.clone();
        }
    };
    let mut b = b.clone();
    b.mentions.iter_mut().for_each(|m| map(&mut m.entity_id));
    for r in &mut b.relations {
        map(&mut r.relation.source_id);
        map(&mut r.relation.target_id);
        r.relation.id = relation_id(&r.relation.source_id, &r.relation.rel_type, &r.relation.target_id);
    }
    for f in &mut b.facts {
        map(&mut f.fact.subject_id);
        map(&mut f.fact.object_id);
    }
    b.vectors.retain(|(k, id, _)| !(*k == VectorKind::Entity && *id == from));
    b
}

pub fn contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
    let tmp = tempfile::tempdir().unwrap();
    let a = batch("alpha", &["Aage Bohr won the Nobel Prize", "Copenhagen physics"], &["Aage Bohr", "Nobel Prize"]);
    let b = batch("beta", &["微软向OpenAI投资", "Sam Altman领导OpenAI"], &["OpenAI", "Aage Bohr", "Microsoft"]);

    // A alone.
    let only_a = tmp.path().join("a");
    let mut s = open(&only_a);
    s.set_embedding_model("m", 3).unwrap();
    s.write_batch(&a).unwrap();
    s.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();
    let stats_a = s.stats().unwrap();
    assert_eq!(stats_a.nodes["Document"], 1);
    assert_eq!(stats_a.nodes["Chunk"], 2);
    assert_eq!(stats_a.nodes["Entity"], 2);
    assert_eq!(stats_a.nodes["Fact"], 1);
    assert_eq!(stats_a.edges["PART_OF"], 2);
    assert_eq!(stats_a.edges["NEXT_CHUNK"], 1);
    assert_eq!(stats_a.edges["MENTIONED_IN"], 4);
    assert_eq!(stats_a.edges["RELATED"], 1);
    assert_eq!(stats_a.edges["SIMILAR_TO"], 1);
    assert_eq!(stats_a.edges["SYNONYM"], 1);
    let q = "Who won the Nobel Prize?";
    let bm_a = s.bm25(q, 5).unwrap();
    assert_eq!(bm_a.len(), 1);
    let v = unit(&[1.0, 0.0, 5.0]);
    let vs_a = s.vector_search(VectorKind::Chunk, &v, 5).unwrap();
    let many = s.vector_search_many(VectorKind::Chunk, &[v.clone(), vec![1.0]], 5).unwrap();
    assert_eq!(many, vec![vs_a.clone(), vec![]], "batched search = one at a time; bad dims: none");
    let graph_a = s.graph_data().unwrap();
    assert_eq!((graph_a.entities.len(), graph_a.chunks.len(), graph_a.relations.len()), (2, 2, 1));
    assert_eq!((graph_a.mentions.len(), graph_a.similar.len(), graph_a.synonyms.len()), (4, 1, 1));
    assert_eq!(graph_a.facts.len(), 1);
    assert_eq!(graph_a.facts[0].chunk_id.as_deref(), Some(a.chunks[0].id.as_str()));
    // Paging: an offset past the end is an empty page, however large.
    assert_eq!(s.documents(None, 0, 10).unwrap().len(), 1);
    for offset in [1, 1 << 40, i64::MAX as usize, usize::MAX] {
        assert!(s.documents(None, offset, 10).unwrap().is_empty(), "offset {offset}");
    }
    drop(s);

    // A and B, then delete B.
    let ab = tmp.path().join("ab");
    let mut s = open(&ab);
    s.set_embedding_model("m", 3).unwrap();
    s.write_batch(&a).unwrap();
    s.write_batch(&b).unwrap();
    // Writing the same batch again changes nothing.
    s.write_batch(&b).unwrap();
    assert!(s.synonyms_dirty().unwrap());
    s.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();
    let st = s.stats().unwrap();
    assert_eq!(st.nodes["Document"], 2);
    assert_eq!(st.nodes["Entity"], 4, "Aage Bohr is shared");
    let zh = s.bm25("OpenAI投资", 5).unwrap();
    assert_eq!(s.chunks(&[zh[0].id.clone()]).unwrap()[0].doc_title, "beta");
    let bohr = s.entities(&[entity_id("aage bohr")]).unwrap();
    assert_eq!(bohr[0].name, "Aage Bohr");
    assert_eq!(s.relations_of(&[entity_id("OpenAI")]).unwrap().len(), 1);
    assert!(s.set_embedding_model("other", 3).unwrap_err().to_string().contains("never mixed"));

    // Summaries: Aage Bohr is described in both documents.
    let tasks = s.summary_tasks(2).unwrap();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0].name, "Aage Bohr");
    let mut d = tasks[0].descriptions.clone();
    d.sort();
    assert_eq!(d, ["Aage Bohr in alpha", "Aage Bohr in beta"]);
    s.set_entity_summary(&tasks[0].entity_id, &tasks[0].fingerprint, "A physicist.").unwrap();
    assert_eq!(s.entities(&[entity_id("aage bohr")]).unwrap()[0].description, "A physicist.");
    assert!(s.summary_tasks(2).unwrap().is_empty(), "done once");

    // Extraction failures: recorded, counted again, resolved; a document's go with it.
    let v0 = s.graph_version().unwrap();
    let fail = |c: &Chunk| ExtractionFailure {
        chunk_id: c.id.clone(),
        doc_id: c.doc_id.clone(),
        error: "HTTP 500".into(),
        attempts: 1,
    };
    let mut f = WriteBatch { failures: vec![fail(&a.chunks[1]), fail(&b.chunks[0])], ..WriteBatch::default() };
    s.write_batch(&f).unwrap();
    assert!(s.graph_version().unwrap() > v0, "a write moves the graph version");
    s.write_batch(&f).unwrap();
    let got = s.extraction_failures().unwrap();
    assert_eq!(got.iter().map(|x| x.attempts).collect::<Vec<_>>(), [2, 2]);
    f.failures.clear();
    f.resolved_failures.push(a.chunks[1].id.clone());
    s.write_batch(&f).unwrap();
    assert_eq!(s.extraction_failures().unwrap().len(), 1);

    let beta = s.find_document("beta.txt").unwrap().unwrap();
    let rep = s.delete_document(&beta.id, &mut unnamed).unwrap();
    assert!(s.extraction_failures().unwrap().is_empty(), "deleted with its document");
    assert_eq!((rep.documents, rep.chunks, rep.entities, rep.facts), (1, 2, 2, 1));
    s.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();
    assert_eq!(s.stats().unwrap(), stats_a);
    assert_eq!(s.bm25(q, 5).unwrap(), bm_a);
    assert_eq!(s.vector_search(VectorKind::Chunk, &v, 5).unwrap(), vs_a);
    assert!(s.bm25("OpenAI投资", 5).unwrap().is_empty());
    assert_eq!(s.entities(&[entity_id("aage bohr")]).unwrap()[0].description, "Aage Bohr in alpha");
    // Sentence vectors go with their chunks; the other document's stay.
    let sentence_ids = |b: &WriteBatch| -> Vec<String> {
        b.vectors.iter().filter(|v| v.0 == VectorKind::Sentence).map(|v| v.1.clone()).collect()
    };
    assert!(s.vectors(VectorKind::Sentence, &sentence_ids(&b)).unwrap().is_empty(), "deleted with their chunks");
    assert_eq!(s.vectors(VectorKind::Sentence, &sentence_ids(&a)).unwrap().len(), 4);
    drop(s);

    // Reopening keeps everything.
    let s = open(&ab);
    assert_eq!(s.stats().unwrap(), stats_a);
}

/// Reading every document back as its batch and writing the batches into an empty store
/// rebuilds the same index (what `rhizome copy` does between any two backends).
pub fn copy_contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
    let tmp = tempfile::tempdir().unwrap();
    let a = batch("alpha", &["Aage Bohr won the Nobel Prize", "Copenhagen physics"], &["Aage Bohr", "Nobel Prize"]);
    let mut b = batch("beta", &["微软向OpenAI投资", "Sam Altman领导OpenAI"], &["OpenAI", "Aage Bohr", "Microsoft"]);
    b.mentions[0].importance = Some(0.5);
    let chunk = b.chunks[1].id.clone();
    b.failures.push(ExtractionFailure {
        chunk_id: chunk,
        doc_id: b.documents[0].id.clone(),
        error: "HTTP 500".into(),
        attempts: 1,
    });
    let mut src = open(&tmp.path().join("src"));
    src.set_embedding_model("m", 3).unwrap();
    src.write_batch(&a).unwrap();
    src.write_batch(&b).unwrap();
    src.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();
    let task = src.summary_tasks(2).unwrap().remove(0);
    src.set_entity_summary(&task.entity_id, &task.fingerprint, "A physicist.").unwrap();
    assert!(src.document_batch("doc_missing").unwrap().is_none());

    let mut dst = open(&tmp.path().join("dst"));
    dst.set_embedding_model("m", 3).unwrap();
    let docs = src.documents(None, 0, usize::MAX).unwrap();
    assert_eq!(docs.len(), 2);
    for d in &docs {
        let batch = src.document_batch(&d.id).unwrap().unwrap();
        assert_eq!(batch.documents.len(), 1);
        dst.write_batch(&batch).unwrap();
    }
    for (id, fp, summary) in src.entity_summaries().unwrap() {
        dst.set_entity_summary(&id, &fp, &summary).unwrap();
    }
    dst.set_synonyms(&src.graph_data().unwrap().synonyms).unwrap();
    assert!(!dst.synonyms_dirty().unwrap());
    assert_eq!(dst.stats().unwrap(), src.stats().unwrap());
    let sentences = |b: &WriteBatch| b.vectors.iter().filter(|v| v.0 == VectorKind::Sentence).count();
    assert_eq!(sentences(&src.document_batch(&a.documents[0].id).unwrap().unwrap()), 4, "sentence vectors are copied");
    assert_eq!(dst.graph_data().unwrap(), src.graph_data().unwrap());
    assert_eq!(dst.entity_summaries().unwrap(), src.entity_summaries().unwrap());
    assert_eq!(dst.extraction_failures().unwrap(), src.extraction_failures().unwrap());
    for d in &docs {
        let (x, y) = (src.document_batch(&d.id).unwrap().unwrap(), dst.document_batch(&d.id).unwrap().unwrap());
        assert_eq!(format!("{x:?}"), format!("{y:?}"), "document {} reads back the same", d.title);
    }
    let ids: Vec<String> = src.graph_data().unwrap().entities.into_iter().map(|e| e.id).collect();
    assert_eq!(dst.entities(&ids).unwrap(), src.entities(&ids).unwrap());
    let q = unit(&[1.0, 0.0, 5.0]);
    assert_eq!(
        dst.vector_search(VectorKind::Chunk, &q, 5).unwrap(),
        src.vector_search(VectorKind::Chunk, &q, 5).unwrap()
    );
    assert_eq!(dst.bm25("OpenAI投资", 5).unwrap(), src.bm25("OpenAI投资", 5).unwrap());
}

/// What documents support, read by document: entities, relations and facts with a
/// support row from one of them (an entity two documents mention is supported by each);
/// nothing after the document is deleted.
pub fn supported_by_contract<S: StoreWrite>(mut s: S) {
    s.set_embedding_model("test", 3).unwrap();
    let a = batch("alpha", &["Ada met Babbage"], &["Ada", "Babbage"]);
    let b = batch("beta", &["Ada met Menabrea"], &["Ada", "Menabrea"]);
    s.write_batch(&a).unwrap();
    s.write_batch(&b).unwrap();
    let (da, db) = (a.documents[0].id.clone(), b.documents[0].id.clone());
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let beta = s.supported_by(std::slice::from_ref(&db)).unwrap();
    assert_eq!(beta.entities, sorted(vec![entity_id("Ada"), entity_id("Menabrea")]));
    assert_eq!(beta.relations, vec![b.relations[0].relation.id.clone()]);
    assert_eq!(beta.facts, vec![b.facts[0].fact.id.clone()]);
    let both = s.supported_by(&[da.clone(), db.clone()]).unwrap();
    assert_eq!(both.entities, sorted(vec![entity_id("Ada"), entity_id("Babbage"), entity_id("Menabrea")]));
    assert_eq!(both.relations.len(), 2);
    assert_eq!(s.supported_by(&["doc_unknown".into()]).unwrap(), DocSupport::default());
    s.delete_document(&db, &mut unnamed).unwrap();
    assert_eq!(s.supported_by(&[db]).unwrap(), DocSupport::default());
    assert_eq!(s.supported_by(&[da]).unwrap().entities, sorted(vec![entity_id("Ada"), entity_id("Babbage")]));
}

/// An entity's importance is the mean of the judgements of the chunks that made one (else
/// made from its mentions), and follows its support when a document goes.
pub fn importance_contract<S: StoreWrite>(mut s: S) {
    s.set_embedding_model("test", 3).unwrap();
    let judged = |title: &str, x: Option<f32>| {
        let mut b = batch(title, &[&format!("Ada wrote in {title}.")], &["Ada"]);
        for m in &mut b.mentions {
            m.importance = x;
        }
        b
    };
    let (a, b, c) = (judged("a", Some(0.2)), judged("b", Some(0.6)), judged("c", None));
    for x in [&a, &b, &c] {
        s.write_batch(x).unwrap();
    }
    let get = |s: &S| s.entities(&[entity_id("Ada")]).unwrap()[0].importance;
    assert!((get(&s).unwrap() - 0.4).abs() < 1e-6);
    s.delete_document(&b.documents[0].id, &mut unnamed).unwrap();
    assert!((get(&s).unwrap() - 0.2).abs() < 1e-6);
    s.delete_document(&a.documents[0].id, &mut unnamed).unwrap();
    // Only an unjudged mention is left: its importance is made from one mention in one
    // document.
    assert!((get(&s).unwrap() - 0.1876).abs() < 1e-3, "{:?}", get(&s));
}

/// An entity keyed by one document's name that absorbed another document's name as an
/// alias ("US Congress" merged into "United States Congress"): deleting the first document
/// re-keys the entity by the second's name, with its relations, facts and vector, so the
/// store equals one where the first was never written.
pub fn rekey_contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
    let tmp = tempfile::tempdir().unwrap();
    let a =
        batch("alpha", &["The United States Congress passed the act"], &["United States Congress", "Clean Air Act"]);
    let b = batch("beta", &["The US Congress met in Washington", "It met again"], &["US Congress", "Washington"]);
    let congress = |s: &S| s.entities(&[entity_id("US Congress"), entity_id("United States Congress")]).unwrap();

    let mut s = open(&tmp.path().join("ab"));
    s.set_embedding_model("m", 3).unwrap();
    s.write_batch(&a).unwrap();
    s.write_batch(&merged(&b, "US Congress", "United States Congress")).unwrap();
    assert_eq!(congress(&s).len(), 1, "one entity, under the first name's id");
    let mut embedded = Vec::new();
    let rep = s
        .delete_document(&a.documents[0].id, &mut |names: &[String]| {
            embedded.extend(names.iter().cloned());
            // `batch` gives the first entity of a document this vector.
            Ok(names.iter().map(|_| unit(&[1.0, 0.0, 0.0])).collect())
        })
        .unwrap();
    assert_eq!(embedded, ["us congress"], "the new key's name, embedded once");
    assert_eq!((rep.documents, rep.entities), (1, 2), "Clean Air Act and the old key go");
    assert!(s.synonyms_dirty().unwrap());
    s.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();

    let mut only_b = open(&tmp.path().join("b"));
    only_b.set_embedding_model("m", 3).unwrap();
    only_b.write_batch(&b).unwrap();
    only_b.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();
    assert_eq!(congress(&s), congress(&only_b));
    assert_eq!(congress(&s)[0].id, entity_id("US Congress"));
    assert_eq!(s.graph_data().unwrap(), only_b.graph_data().unwrap());
    assert_eq!(s.stats().unwrap(), only_b.stats().unwrap());
    let doc = &b.documents[0].id;
    assert_eq!(format!("{:?}", s.document_batch(doc).unwrap()), format!("{:?}", only_b.document_batch(doc).unwrap()));
    let ids = [entity_id("US Congress"), entity_id("United States Congress"), entity_id("Washington")];
    assert_eq!(s.vectors(VectorKind::Entity, &ids).unwrap(), only_b.vectors(VectorKind::Entity, &ids).unwrap());
    assert_eq!(s.relations_of(&ids).unwrap(), only_b.relations_of(&ids).unwrap());

    // The re-keyed entity goes with the last document that supports it.
    s.delete_document(doc, &mut unnamed).unwrap();
    assert!(s.graph_data().unwrap().entities.is_empty());
    assert!(s.vectors(VectorKind::Entity, &ids).unwrap().is_empty());
}

/// A paged document keeps its pages, and its chunks their character ranges and pages,
/// through writing, reading, citing and copying.
pub fn provenance_contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
    let tmp = tempfile::tempdir().unwrap();
    let pages = ["First page text.", "Trang hai: Đại học.", "第三页。"];
    let text = pages.join("\n\n");
    let mut doc = Document::new("report.pdf", "Report", text.clone());
    let mut spans = Vec::new();
    let mut at = 0u32;
    for (i, p) in pages.iter().enumerate() {
        let n = p.chars().count() as u32;
        spans.push(PageSpan { number: i as u32 + 1, label: None, start: at, end: at + n });
        at += n + 2;
    }
    doc.pages = Some(Pagination { unit: "page".into(), pages: spans.clone() });
    let mut b = WriteBatch::default();
    for (i, p) in pages.iter().enumerate() {
        let c = Chunk {
            id: chunk_id(&doc.id, i as u32, p),
            doc_id: doc.id.clone(),
            ordinal: i as u32,
            text: p.to_string(),
            tokens: 3,
            start: spans[i].start,
            end: spans[i].end,
            pages: Some(PageRange { first: i as u32 + 1, last: i as u32 + 1 }),
        };
        b.vectors.push((VectorKind::Chunk, c.id.clone(), unit(&[1.0, i as f32, 1.0])));
        b.chunks.push(c);
    }
    b.documents.push(doc.clone());
    let mut s = open(&tmp.path().join("paged"));
    s.set_embedding_model("m", 3).unwrap();
    s.write_batch(&b).unwrap();
    let found = s.find_document("report.pdf").unwrap().expect("the document by its source");
    assert_eq!(found.pages, doc.pages, "pages round-trip");
    let ids: Vec<String> = b.chunks.iter().map(|c| c.id.clone()).collect();
    let read = s.chunks(&ids).unwrap();
    assert_eq!(read.len(), 3);
    for (r, c) in read.iter().zip(&b.chunks) {
        assert_eq!(&r.chunk, c, "a chunk's range and pages round-trip");
        assert_eq!(r.doc_page_unit, "page");
        assert_eq!(r.page_ref().map(|p| p.cite()), Some(format!("p. {}", c.ordinal + 1)));
    }
    let copied = s.document_batch(&doc.id).unwrap().expect("the document's batch");
    assert_eq!(copied.documents, vec![doc.clone()], "copy keeps the pages");
    assert_eq!(copied.chunks, b.chunks, "copy keeps ranges and pages");
    // A document without pages: no unit, no page reference.
    let plain = batch("plain", &["Plain text here"], &["Plain"]);
    s.write_batch(&plain).unwrap();
    let r = s.chunks(&[plain.chunks[0].id.clone()]).unwrap();
    assert_eq!((r[0].doc_page_unit.as_str(), r[0].page_ref()), ("", None));
}
