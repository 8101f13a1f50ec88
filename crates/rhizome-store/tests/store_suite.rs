//! One contract suite, run against every store backend (SQLite, PostgreSQL + pgvector,
//! FalkorDB). `contract` and `copy_contract` are written against the traits only; the
//! PostgreSQL and FalkorDB tests run on servers of their own (rhizome-testdb), a fresh
//! database or graph per store.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use rhizome_core::ids::{chunk_id, document_id, entity_id, fact_id, relation_id};
use rhizome_core::*;
use rhizome_store::{FalkorStore, FalkorUrl, PgStore, SqliteStore};

fn unit(v: &[f32]) -> Vec<f32> {
    let mut v = v.to_vec();
    l2_normalize(&mut v);
    v
}

/// A document with one chunk per text, entities named in `ents`, a relation and a fact
/// between the first two entities, and vectors for all of them.
fn batch(title: &str, texts: &[&str], ents: &[&str]) -> WriteBatch {
    let body = texts.join(" ");
    let doc = Document { id: document_id(title, &body), source: format!("{title}.txt"), title: title.into(), text: body };
    let mut b = WriteBatch::default();
    for (i, t) in texts.iter().enumerate() {
        let c = Chunk { id: chunk_id(&doc.id, i as u32, t), doc_id: doc.id.clone(), ordinal: i as u32, text: t.to_string(), tokens: 3 };
        b.vectors.push((VectorKind::Chunk, c.id.clone(), unit(&[1.0, i as f32, title.len() as f32])));
        for e in ents {
            b.mentions.push(MentionRecord {
                entity_id: entity_id(e), name: e.to_string(), entity_type: "ENTITY".into(),
                description: format!("{e} in {title}"), doc_id: doc.id.clone(), chunk_id: Some(c.id.clone()), count: 1,
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
            relation: Relation { id: relation_id(&s, "CO_OCCURS", &o), source_id: s.clone(), target_id: o.clone(),
                rel_type: "CO_OCCURS".into(), description: title.into(), weight: 1.0 },
            doc_id: doc.id.clone(), chunk_id: Some(b.chunks[0].id.clone()),
        });
        let f = Fact { id: fact_id(ents[0], "knows", ents[1]), subject: ents[0].into(), predicate: "knows".into(),
            object: ents[1].into(), subject_id: s, object_id: o };
        b.vectors.push((VectorKind::Fact, f.id.clone(), unit(&[0.0, 1.0, 0.0])));
        b.facts.push(FactRecord { fact: f, doc_id: doc.id.clone(), chunk_id: Some(b.chunks[0].id.clone()) });
    }
    if b.chunks.len() >= 2 {
        b.similar.push((b.chunks[0].id.clone(), b.chunks[1].id.clone(), 0.9));
    }
    b.documents.push(doc);
    b
}

fn contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
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
    let fail = |c: &Chunk| ExtractionFailure { chunk_id: c.id.clone(), doc_id: c.doc_id.clone(), error: "HTTP 500".into(), attempts: 1 };
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
    let rep = s.delete_document(&beta.id).unwrap();
    assert!(s.extraction_failures().unwrap().is_empty(), "deleted with its document");
    assert_eq!((rep.documents, rep.chunks, rep.entities, rep.facts), (1, 2, 2, 1));
    s.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();
    assert_eq!(s.stats().unwrap(), stats_a);
    assert_eq!(s.bm25(q, 5).unwrap(), bm_a);
    assert_eq!(s.vector_search(VectorKind::Chunk, &v, 5).unwrap(), vs_a);
    assert!(s.bm25("OpenAI投资", 5).unwrap().is_empty());
    assert_eq!(s.entities(&[entity_id("aage bohr")]).unwrap()[0].description, "Aage Bohr in alpha");
    drop(s);

    // Reopening keeps everything.
    let s = open(&ab);
    assert_eq!(s.stats().unwrap(), stats_a);
}

/// Reading every document back as its batch and writing the batches into an empty store
/// rebuilds the same index (what `rhizome copy` does between any two backends).
fn copy_contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
    let tmp = tempfile::tempdir().unwrap();
    let a = batch("alpha", &["Aage Bohr won the Nobel Prize", "Copenhagen physics"], &["Aage Bohr", "Nobel Prize"]);
    let mut b = batch("beta", &["微软向OpenAI投资", "Sam Altman领导OpenAI"], &["OpenAI", "Aage Bohr", "Microsoft"]);
    b.mentions[0].importance = Some(0.5);
    let chunk = b.chunks[1].id.clone();
    b.failures.push(ExtractionFailure { chunk_id: chunk, doc_id: b.documents[0].id.clone(), error: "HTTP 500".into(), attempts: 1 });
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
    assert_eq!(dst.vector_search(VectorKind::Chunk, &q, 5).unwrap(), src.vector_search(VectorKind::Chunk, &q, 5).unwrap());
    assert_eq!(dst.bm25("OpenAI投资", 5).unwrap(), src.bm25("OpenAI投资", 5).unwrap());
}

#[test]
fn sqlite_store_meets_the_contract() {
    contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
}

#[test]
fn sqlite_store_copies_document_by_document() {
    copy_contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
}

#[test]
fn missing_and_corrupt_indexes_give_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let err = SqliteStore::open(&tmp.path().join("none"), false).err().unwrap().to_string();
    assert!(err.contains("no Rhizome index here"), "{err}");
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join(rhizome_store::DB_FILE), vec![7u8; 4096]).unwrap();
    let err = SqliteStore::open(&bad, false).err().unwrap().to_string();
    assert!(err.contains("damaged or not a Rhizome index") && err.contains("backup"), "{err}");
    // A 0-byte database is refused, not taken for an empty index, and stays untouched.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join(rhizome_store::DB_FILE), b"").unwrap();
    for create in [false, true] {
        let err = SqliteStore::open(&empty, create).err().unwrap().to_string();
        assert!(err.contains("is empty (0 bytes)") && err.contains("remove it"), "{err}");
    }
    assert_eq!(std::fs::metadata(empty.join(rhizome_store::DB_FILE)).unwrap().len(), 0);
    // A plain file where the index directory should be.
    let file = tmp.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let err = SqliteStore::open(&file, true).err().unwrap().to_string();
    assert!(err.contains("is a file, not an index directory"), "{err}");
}

#[test]
fn postings_made_with_older_term_rules_are_rebuilt_on_open() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = SqliteStore::open(tmp.path(), true).unwrap();
    s.set_embedding_model("m", 3).unwrap();
    s.write_batch(&batch("beta", &["微软向OpenAI投资", "Sam Altman领导OpenAI"], &["OpenAI"])).unwrap();
    let before = s.bm25("OpenAI投资", 5).unwrap();
    assert!(!before.is_empty());
    drop(s);
    // Simulate an index written by an older release: other rules, stale postings.
    let conn = rusqlite::Connection::open(tmp.path().join("rhizome.sqlite")).unwrap();
    conn.execute_batch("UPDATE meta SET value = '1' WHERE key = 'bm25_terms';
        UPDATE bm25_postings SET term = 'stale-' || term;").unwrap();
    drop(conn);
    let s = SqliteStore::open(tmp.path(), false).unwrap();
    assert_eq!(s.bm25("OpenAI投资", 5).unwrap(), before, "rebuilt from the stored chunks");
}

/// An entity's importance is the mean of the judgements of the chunks that made one, and
/// follows its support when a document goes.
fn importance_contract<S: StoreWrite>(mut s: S) {
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
    s.delete_document(&b.documents[0].id).unwrap();
    assert!((get(&s).unwrap() - 0.2).abs() < 1e-6);
    s.delete_document(&a.documents[0].id).unwrap();
    assert_eq!(get(&s), None, "only an unjudged mention is left");
}

// ---- PostgreSQL + pgvector ----

/// An opener for the contract: each path is a database of its own (the same path, the
/// same database: reopening is tested).
fn pg_opener() -> impl Fn(&Path) -> PgStore {
    let dbs = std::sync::Mutex::new(std::collections::HashMap::<std::path::PathBuf, String>::new());
    move |p: &Path| {
        let url = dbs
            .lock()
            .unwrap()
            .entry(p.to_path_buf())
            .or_insert_with(|| rhizome_testdb::postgres::fresh_database(&p.file_name().unwrap().to_string_lossy()))
            .clone();
        PgStore::open(&url, true).unwrap()
    }
}

#[test]
fn postgres_store_meets_the_contract() {
    contract(&pg_opener());
}

#[test]
fn postgres_store_copies_document_by_document() {
    copy_contract(&pg_opener());
}

/// Reads on SQLite and PostgreSQL of the same writes give the same answers (scores,
/// ties, orders).
#[test]
fn postgres_answers_as_sqlite_does() {
    let tmp = tempfile::tempdir().unwrap();
    let mut lite = SqliteStore::open(tmp.path(), true).unwrap();
    let mut pg = PgStore::open(&rhizome_testdb::postgres::fresh_database("same"), true).unwrap();
    let docs = [
        batch("alpha", &["Aage Bohr won the Nobel Prize", "Copenhagen physics"], &["Aage Bohr", "Nobel Prize"]),
        batch("beta", &["微软向OpenAI投资", "Sam Altman领导OpenAI"], &["OpenAI", "Aage Bohr", "Microsoft"]),
        batch("gamma", &["Niels Bohr and Aage Bohr", "Nobel Prize in Physics 1975", "Ben Mottelson"],
            &["Niels Bohr", "Aage Bohr", "Ben Mottelson"]),
    ];
    for s in [&mut lite as &mut dyn StoreWrite, &mut pg] {
        s.set_embedding_model("m", 3).unwrap();
        for d in &docs {
            s.write_batch(d).unwrap();
        }
        s.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();
    }
    for q in ["Who won the Nobel Prize?", "Aage Bohr physics", "OpenAI投资", "Bohr"] {
        assert_eq!(pg.bm25(q, 10).unwrap(), lite.bm25(q, 10).unwrap(), "{q}");
    }
    for kind in [VectorKind::Chunk, VectorKind::Entity, VectorKind::Fact] {
        let q = unit(&[1.0, 0.3, 2.0]);
        assert_eq!(pg.vector_search(kind, &q, 10).unwrap(), lite.vector_search(kind, &q, 10).unwrap());
        let many = [q.clone(), unit(&[0.0, 1.0, 0.0])];
        assert_eq!(pg.vector_search_many(kind, &many, 3).unwrap(), lite.vector_search_many(kind, &many, 3).unwrap());
    }
    assert_eq!(pg.graph_data().unwrap(), lite.graph_data().unwrap());
    assert_eq!(pg.stats().unwrap(), lite.stats().unwrap());
    let ids: Vec<String> = lite.graph_data().unwrap().entities.into_iter().map(|e| e.id).collect();
    assert_eq!(pg.entities(&ids).unwrap(), lite.entities(&ids).unwrap());
    assert_eq!(pg.relations_of(&ids).unwrap(), lite.relations_of(&ids).unwrap());
    assert_eq!(pg.summary_tasks(2).unwrap(), lite.summary_tasks(2).unwrap());
    // Communities and reports: replaced as a set, reports only for stored communities.
    let bohr = rhizome_core::ids::entity_id("Aage Bohr");
    let com = |id: &str, level: u32, members: &[String]| Community {
        id: id.into(), level, parent: None, children: vec![], title: format!("c {id}"),
        entity_ids: members.to_vec(), fingerprint: format!("fp {id}"),
    };
    let rep = |id: &str, rating: f32| CommunityReport {
        community_id: id.into(), level: 0, title: format!("r {id}"), summary: "s".into(),
        findings: vec![Finding { summary: "f".into(), explanation: "e".into() }], rating,
        rating_explanation: "x".into(), fingerprint: format!("fp {id}"), kind: ReportKind::Extractive,
    };
    let v0 = lite.graph_version().unwrap();
    for s in [&mut lite as &mut dyn StoreWrite, &mut pg] {
        s.replace_communities(&[com("com_b", 0, &ids[..2]), com("com_a", 1, &[bohr.clone()]), com("com_c", 0, &ids[2..])], v0).unwrap();
        s.put_reports(&[rep("com_a", 1.0), rep("com_b", 2.0), rep("com_x", 3.0), rep("com_a", 4.0)],
            &[("com_a".into(), unit(&[1.0, 0.0, 0.0])), ("com_b".into(), unit(&[0.0, 1.0, 0.0])),
              ("com_x".into(), unit(&[0.0, 0.0, 1.0])), ("com_c".into(), unit(&[1.0, 1.0, 1.0]))]).unwrap();
        s.set_reports_version(v0).unwrap();
        s.replace_communities(&[com("com_a", 1, &[bohr.clone()]), com("com_c", 0, &ids[2..])], v0).unwrap();
    }
    assert_eq!(pg.communities().unwrap(), lite.communities().unwrap());
    assert_eq!(pg.community_reports().unwrap(), lite.community_reports().unwrap());
    assert_eq!(pg.community_report_count().unwrap(), 1);
    assert_eq!(pg.communities_of(&[bohr.clone()]).unwrap(), lite.communities_of(&[bohr.clone()]).unwrap());
    let all = ["com_a".to_string(), "com_b".into(), "com_c".into()];
    assert_eq!(pg.community_reports_of(&all).unwrap(), lite.community_reports_of(&all).unwrap());
    assert_eq!((pg.communities_version().unwrap(), pg.reports_version().unwrap()), (Some(v0), Some(v0)));
    let q = unit(&[1.0, 0.2, 0.1]);
    assert_eq!(pg.vector_search(VectorKind::Report, &q, 5).unwrap(), lite.vector_search(VectorKind::Report, &q, 5).unwrap());
    assert_eq!(pg.vector_search(VectorKind::Report, &q, 5).unwrap().len(), 1);
    assert_eq!(pg.stats().unwrap(), lite.stats().unwrap());
    assert_eq!(pg.documents(Some("ALP"), 0, 10).unwrap().len(), 1);
    assert_eq!(pg.documents(None, 0, 10).unwrap().iter().map(|d| &d.id).collect::<Vec<_>>(),
        lite.documents(None, 0, 10).unwrap().iter().map(|d| &d.id).collect::<Vec<_>>());
}

#[test]
fn postgres_second_writer_waits_or_is_refused_with_the_holder_named() {
    use rhizome_store::LockWait;
    use std::time::Duration;
    let url = rhizome_testdb::postgres::fresh_database("lock");
    let first = PgStore::open_writer(&url, true, "rhizome index docs", LockWait::No, &mut |_| {}).unwrap();
    let err = PgStore::open_writer(&url, true, "rhizome delete x", LockWait::No, &mut |_| {}).err().unwrap().to_string();
    assert!(err.contains("is busy") && err.contains("rhizome index docs") && err.contains(&std::process::id().to_string()),
        "{err}");
    assert!(err.contains("postgres://postgres@127.0.0.1"), "names the database: {err}");
    let mut waited = None;
    let err = PgStore::open_writer(&url, true, "b", LockWait::Up(Some(Duration::from_millis(300))),
        &mut |h| waited = Some(h.clone()))
        .err()
        .unwrap();
    assert!(err.to_string().contains("is busy"), "{err}");
    assert_eq!(waited.unwrap().command, "rhizome index docs");
    let t = std::thread::spawn({
        let url = url.clone();
        move || PgStore::open_writer(&url, true, "waiter", LockWait::Up(None), &mut |_| {}).map(|_| ())
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!t.is_finished(), "the second writer waits");
    drop(first);
    t.join().unwrap().unwrap();
}

#[test]
fn postgres_reader_sees_another_connections_writes() {
    let url = rhizome_testdb::postgres::fresh_database("versions");
    let mut w = PgStore::open(&url, true).unwrap();
    w.set_embedding_model("m", 3).unwrap();
    w.write_batch(&batch("alpha", &["Aage Bohr won the Nobel Prize"], &["Aage Bohr", "Nobel Prize"])).unwrap();
    let r = PgStore::open(&url, false).unwrap();
    let v0 = r.graph_version().unwrap();
    let q = unit(&[1.0, 0.0, 4.0]);
    assert_eq!(r.vector_search(VectorKind::Chunk, &q, 5).unwrap().len(), 1);
    assert_eq!(r.bm25("Nobel", 5).unwrap().len(), 1);
    w.write_batch(&batch("beta", &["Niels Bohr, Nobel laureate"], &["Niels Bohr"])).unwrap();
    assert!(r.graph_version().unwrap() > v0, "the version lives in the database");
    assert_eq!(r.vector_search(VectorKind::Chunk, &q, 5).unwrap().len(), 2, "cached vectors follow the version");
    assert_eq!(r.bm25("Nobel", 5).unwrap().len(), 2, "cached lengths follow the version");
    assert_eq!(r.stats().unwrap().nodes["Document"], 2);
}

#[test]
fn postgres_batch_failing_midway_leaves_nothing() {
    let url = rhizome_testdb::postgres::fresh_database("atomic");
    let mut s = PgStore::open(&url, true).unwrap();
    s.set_embedding_model("m", 3).unwrap();
    let v0 = s.graph_version().unwrap();
    let mut bad = batch("alpha", &["Aage Bohr won the Nobel Prize", "Copenhagen"], &["Aage Bohr", "Nobel Prize"]);
    // Documents and chunks go in first; a NUL byte in a mention (PostgreSQL text refuses it) fails the batch later.
    bad.mentions[1].description = "bad \0 byte".into();
    let err = s.write_batch(&bad).unwrap_err().to_string();
    assert!(err.contains("postgres://postgres@127.0.0.1"), "{err}");
    assert_eq!(s.graph_version().unwrap(), v0);
    let st = s.stats().unwrap();
    assert!(st.nodes.values().all(|&n| n == 0) && st.edges.values().all(|&n| n == 0), "{st:?}");
    assert!(!s.has_document(&bad.documents[0].id).unwrap());
    assert!(s.bm25("Nobel", 5).unwrap().is_empty());
    // The connection is still good: the fixed batch goes in whole.
    bad.mentions[1].description = "fine".into();
    s.write_batch(&bad).unwrap();
    assert_eq!(s.stats().unwrap().nodes["Chunk"], 2);
}

#[test]
fn postgres_errors_name_the_database_and_the_fix() {
    let port = rhizome_testdb::free_port();
    let url = format!("postgres://u:secret@127.0.0.1:{port}/db");
    let err = PgStore::open(&url, false).err().unwrap().to_string();
    assert!(err.contains(&format!("cannot connect to postgres://u@127.0.0.1:{port}/db")), "{err}");
    assert!(err.contains("is the server running") && !err.contains("secret"), "{err}");
    let empty = rhizome_testdb::postgres::fresh_database("empty");
    let err = PgStore::open(&empty, false).err().unwrap().to_string();
    assert!(err.contains("no Rhizome index in this database"), "{err}");
    assert!(!rhizome_store::StoreUrl::parse(&empty).unwrap().exists());
}

/// The LLM cache lives in a table of the index's database, shared by every process.
#[test]
fn postgres_llm_cache_is_a_table_of_the_index() {
    use rhizome_core::llm::ChatResponse;
    let url = rhizome_testdb::postgres::fresh_database("llmcache");
    let store = rhizome_store::StoreUrl::parse(&url).unwrap();
    let a = store.llm_cache().unwrap();
    assert!(a.get("k").unwrap().is_none());
    let r = ChatResponse { text: "Ben Mottelson".into(), usage: Default::default(), cached: false };
    a.put("k", "openai", &r).unwrap();
    a.put("k", "openai", &r).unwrap();
    let b = store.llm_cache().unwrap();
    assert_eq!(b.get("k").unwrap().unwrap().text, "Ben Mottelson", "another connection sees it");
    assert!(store.exists(), "opening the cache made the index's tables");
}

/// Processes starting together on an empty database all get the schema (it is made once,
/// under a transaction advisory lock).
#[test]
fn postgres_schema_is_made_once_by_concurrent_openers() {
    let url = rhizome_testdb::postgres::fresh_database("race");
    let openers: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PgStore::open(&url, true).map(|s| s.stats().unwrap()))
        })
        .collect();
    for t in openers {
        let stats = t.join().unwrap().unwrap();
        assert_eq!(stats.nodes["Document"], 0);
    }

#[test]
fn entity_importance_is_the_mean_of_its_support() {
    let tmp = tempfile::tempdir().unwrap();
    importance_contract(rhizome_store::SqliteStore::open(tmp.path(), true).unwrap());
}

// ---- FalkorDB: the same contract on a graph of a FalkorDB server (one server per test
// binary, a fresh graph per test; RHIZOME_TEST_FALKORDB_URL points at a running one).

/// Opens each path as a graph of its own: the same path reopens the same graph.
fn falkor_opener() -> impl Fn(&Path) -> FalkorStore {
    let graphs = std::sync::Mutex::new(std::collections::HashMap::<std::path::PathBuf, String>::new());
    move |p: &Path| {
        let url = graphs
            .lock()
            .unwrap()
            .entry(p.to_path_buf())
            .or_insert_with(|| rhizome_testdb::falkordb::fresh_graph("contract"))
            .clone();
        FalkorStore::open(&FalkorUrl::parse(&url).unwrap(), true).unwrap()
    }
}

fn falkor_url(name: &str) -> FalkorUrl {
    FalkorUrl::parse(&rhizome_testdb::falkordb::fresh_graph(name)).unwrap()
}

#[test]
fn falkordb_store_meets_the_contract() {
    contract(&falkor_opener());
}

#[test]
fn falkordb_store_copies_document_by_document() {
    copy_contract(&falkor_opener());
}

#[test]
fn falkordb_entity_importance_is_the_mean_of_its_support() {
    importance_contract(FalkorStore::open(&falkor_url("importance"), true).unwrap());
}

fn strings(s: &FalkorStore, q: &str) -> Vec<String> {
    s.cypher(q).unwrap().iter().map(|r| r[0].str()).collect()
}

#[test]
fn falkordb_graph_has_the_sdk_schema() {
    let mut s = FalkorStore::open(&falkor_url("schema"), true).unwrap();
    s.set_embedding_model("m", 3).unwrap();
    s.write_batch(&batch("alpha", &["Aage Bohr won the Nobel Prize", "Copenhagen physics"], &["Aage Bohr", "Nobel Prize"]))
        .unwrap();
    s.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();
    let labels = strings(&s, "CALL db.labels()");
    for l in ["Document", "Chunk", "Fact", "__Entity__", "ENTITY"] {
        assert!(labels.iter().any(|x| x == l), "label {l} in {labels:?}");
    }
    let types = strings(&s, "CALL db.relationshipTypes()");
    for t in ["PART_OF", "NEXT_CHUNK", "MENTIONED_IN", "SYNONYM", "SIMILAR_TO", "CO_OCCURS"] {
        assert!(types.iter().any(|x| x == t), "edge type {t} in {types:?}");
    }
    let idx = s.cypher("CALL db.indexes() YIELD label, properties, types RETURN label, properties, types").unwrap();
    let text = format!("{idx:?}");
    for label in ["Chunk", "__Entity__", "Fact"] {
        assert!(idx.iter().any(|r| r[0].str() == label && format!("{:?}", r[2]).contains("VECTOR")), "vector index on {label}: {text}");
    }
    assert!(idx.iter().any(|r| r[0].str() == "Chunk" && format!("{:?}", r[2]).contains("FULLTEXT")), "full-text index: {text}");
    // An entity carries its type as a label, a relation its type as the edge type.
    let bohr = strings(&s, "MATCH (e:__Entity__:ENTITY {name: 'Aage Bohr'}) RETURN e.id");
    assert_eq!(bohr, [entity_id("Aage Bohr")]);
    assert_eq!(strings(&s, "MATCH (:__Entity__)-[r:CO_OCCURS]->(:__Entity__) RETURN r.rel_type"), ["CO_OCCURS"]);
}

#[test]
fn falkordb_batch_with_one_bad_item_writes_the_rest_and_names_it() {
    let mut s = FalkorStore::open(&falkor_url("bad"), true).unwrap();
    s.set_embedding_model("m", 3).unwrap();
    let mut b = batch("alpha", &["Aage Bohr won the Nobel Prize", "Copenhagen physics", "Niels Bohr"], &["Aage Bohr"]);
    let bad = b.chunks[1].id.clone();
    for (kind, id, v) in &mut b.vectors {
        if *kind == VectorKind::Chunk && *id == bad {
            *v = vec![1.0];
        }
    }
    let err = s.write_batch(&b).unwrap_err().to_string();
    assert!(err.contains(&bad) && err.contains("dimension 1"), "{err}");
    assert!(s.has_document(&b.documents[0].id).unwrap(), "the batch is complete");
    let ids: Vec<String> = b.chunks.iter().map(|c| c.id.clone()).collect();
    let have: Vec<String> = s.vectors(VectorKind::Chunk, &ids).unwrap().into_iter().map(|x| x.0).collect();
    assert_eq!(have, [ids[0].clone(), ids[2].clone()], "the good vectors are written");
    assert_eq!(s.stats().unwrap().nodes["Chunk"], 3);
}

#[test]
fn falkordb_second_writer_waits_or_is_refused_with_the_holder_named() {
    use rhizome_store::LockWait;
    let url = falkor_url("lock");
    let first = FalkorStore::open_writer(&url, true, "rhizome index docs", LockWait::No, &mut |_| {}).unwrap();
    let err = FalkorStore::open_writer(&url, true, "rhizome delete x", LockWait::No, &mut |_| {}).err().unwrap().to_string();
    assert!(err.contains("is busy") && err.contains("rhizome index docs") && err.contains(&std::process::id().to_string()), "{err}");
    let mut waited = None;
    let err = FalkorStore::open_writer(&url, true, "b", LockWait::Up(Some(std::time::Duration::from_millis(300))),
        &mut |h| waited = Some(h.clone())).err().unwrap().to_string();
    assert!(err.contains("is busy"), "{err}");
    assert!(waited.unwrap().command.starts_with("rhizome index docs"));
    let t = std::thread::spawn({
        let url = url.clone();
        move || FalkorStore::open_writer(&url, true, "waiter", LockWait::Up(None), &mut |_| {}).map(|_| ())
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(first);
    t.join().unwrap().unwrap();
    assert!(rhizome_store::falkor::lock::holder(&url).unwrap().is_none(), "released on drop");
    // A lock left by a process of this machine that is gone is taken over at once.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let mut c = rhizome_store::falkor::Conn::connect(&url.host, url.port, &url.display()).unwrap();
    let dead = format!("999999999\n0\nrhizome index x @ {}\n1", host.trim());
    c.ok(&[b"SET", format!("rhizome:{}:lock", url.graph).as_bytes(), dead.as_bytes(), b"PX", b"30000"]).unwrap();
    FalkorStore::open_writer(&url, true, "after", LockWait::No, &mut |_| {}).unwrap();
}

#[test]
fn falkordb_graph_version_is_shared_between_connections() {
    let url = falkor_url("version");
    let mut w = FalkorStore::open(&url, true).unwrap();
    w.set_embedding_model("m", 3).unwrap();
    let r = FalkorStore::open(&url, false).unwrap();
    let v0 = r.graph_version().unwrap();
    let a = batch("alpha", &["Aage Bohr won the Nobel Prize"], &["Aage Bohr"]);
    w.write_batch(&a).unwrap();
    let v1 = r.graph_version().unwrap();
    assert!(v1 > v0, "the reader sees the writer's batch");
    assert_eq!(r.stats().unwrap().nodes["Document"], 1);
    assert_eq!(r.bm25("Nobel Prize", 5).unwrap().len(), 1, "caches follow the version");
    w.delete_document(&a.documents[0].id).unwrap();
    assert!(r.graph_version().unwrap() > v1);
    assert!(r.bm25("Nobel Prize", 5).unwrap().is_empty());
}

#[test]
fn falkordb_a_batch_cut_short_is_cleaned_up_by_the_next_writer() {
    use rhizome_store::LockWait;
    let url = falkor_url("crash");
    let mut s = FalkorStore::open_writer(&url, true, "t", LockWait::No, &mut |_| {}).unwrap();
    s.set_embedding_model("m", 3).unwrap();
    let a = batch("alpha", &["Aage Bohr won the Nobel Prize"], &["Aage Bohr", "Nobel Prize"]);
    s.write_batch(&a).unwrap();
    let before = s.stats().unwrap();
    let b = batch("beta", &["Sam Altman led OpenAI"], &["OpenAI", "Aage Bohr"]);
    s.write_batch(&b).unwrap();
    // Pretend the writer died before its last step: the document is still pending.
    s.cypher("RETURN 1").unwrap();
    let mut c = rhizome_store::falkor::Conn::connect(&url.host, url.port, &url.display()).unwrap();
    c.ok(&[b"SADD", format!("rhizome:{}:pending", url.graph).as_bytes(), b.documents[0].id.as_bytes()]).unwrap();
    assert!(!s.has_document(&b.documents[0].id).unwrap(), "a pending document is not there yet");
    drop(s);
    let s = FalkorStore::open_writer(&url, false, "t", LockWait::No, &mut |_| {}).unwrap();
    assert_eq!(s.stats().unwrap(), before, "the half-written batch is gone");
}

#[test]
fn falkordb_errors_name_the_url_and_the_fix() {
    let port = rhizome_testdb::free_port();
    let url = FalkorUrl::parse(&format!("falkordb://127.0.0.1:{port}/g")).unwrap();
    let err = FalkorStore::open(&url, true).err().unwrap().to_string();
    assert!(err.contains(&format!("cannot connect to falkordb://127.0.0.1:{port}/g")) && err.contains("is FalkorDB running"), "{err}");
    let err = FalkorStore::open(&falkor_url("missing"), false).err().unwrap().to_string();
    assert!(err.contains("no Rhizome index in this graph"), "{err}");
    let plain = rhizome_testdb::falkordb::start_without_module();
    let url = FalkorUrl::parse(&format!("falkordb://127.0.0.1:{}/g", plain.port)).unwrap();
    let err = FalkorStore::open(&url, true).err().unwrap().to_string();
    assert!(err.contains("has no GRAPH module") && err.contains("--loadmodule"), "{err}");
    assert!(!rhizome_store::StoreUrl::parse(&url.display()).unwrap().exists());
}
