//! The store contract (tests/contract) on PostgreSQL + pgvector, on a server of this test
//! binary (rhizome-testdb; a fresh database per store), and what PostgreSQL adds: locks
//! across processes, transactions, answers equal to SQLite's.

mod contract;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use contract::*;
use rhizome_core::*;
use rhizome_store::{PgStore, SqliteStore};

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

#[test]
fn postgres_store_keeps_pages_and_chunk_ranges() {
    provenance_contract(&pg_opener());
}

#[test]
fn postgres_store_keeps_other_names_of_the_same_content() {
    aliases_contract(&pg_opener());
}

#[test]
fn postgres_store_keeps_what_is_known_of_a_document() {
    meta_contract(&pg_opener());
}

#[test]
fn postgres_store_reads_the_graph_around_entities() {
    neighbourhood_contract(&pg_opener());
}

#[test]
fn postgres_store_rekeys_an_entity_whose_name_went() {
    rekey_contract(&pg_opener());
}

#[test]
fn postgres_store_reads_one_community() {
    community_contract(&pg_opener());
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
        batch(
            "gamma",
            &["Niels Bohr and Aage Bohr", "Nobel Prize in Physics 1975", "Ben Mottelson"],
            &["Niels Bohr", "Aage Bohr", "Ben Mottelson"],
        ),
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
        id: id.into(),
        level,
        parent: None,
        children: vec![],
        title: format!("c {id}"),
        entity_ids: members.to_vec(),
        fingerprint: format!("fp {id}"),
    };
    let rep = |id: &str, rating: f32| CommunityReport {
        community_id: id.into(),
        level: 0,
        title: format!("r {id}"),
        summary: "s".into(),
        findings: vec![Finding { summary: "f".into(), explanation: "e".into() }],
        rating,
        rating_explanation: "x".into(),
        fingerprint: format!("fp {id}"),
        kind: ReportKind::Extractive,
    };
    let v0 = lite.graph_version().unwrap();
    for s in [&mut lite as &mut dyn StoreWrite, &mut pg] {
        s.replace_communities(
            &[com("com_b", 0, &ids[..2]), com("com_a", 1, std::slice::from_ref(&bohr)), com("com_c", 0, &ids[2..])],
            v0,
        )
        .unwrap();
        s.put_reports(
            &[rep("com_a", 1.0), rep("com_b", 2.0), rep("com_x", 3.0), rep("com_a", 4.0)],
            &[
                ("com_a".into(), unit(&[1.0, 0.0, 0.0])),
                ("com_b".into(), unit(&[0.0, 1.0, 0.0])),
                ("com_x".into(), unit(&[0.0, 0.0, 1.0])),
                ("com_c".into(), unit(&[1.0, 1.0, 1.0])),
            ],
        )
        .unwrap();
        s.set_reports_version(v0).unwrap();
        s.replace_communities(&[com("com_a", 1, std::slice::from_ref(&bohr)), com("com_c", 0, &ids[2..])], v0).unwrap();
    }
    assert_eq!(pg.communities().unwrap(), lite.communities().unwrap());
    assert_eq!(pg.community_reports().unwrap(), lite.community_reports().unwrap());
    assert_eq!(pg.community_report_count().unwrap(), 1);
    assert_eq!(
        pg.communities_of(std::slice::from_ref(&bohr)).unwrap(),
        lite.communities_of(std::slice::from_ref(&bohr)).unwrap()
    );
    let all = ["com_a".to_string(), "com_b".into(), "com_c".into()];
    assert_eq!(pg.community_reports_of(&all).unwrap(), lite.community_reports_of(&all).unwrap());
    assert_eq!((pg.communities_version().unwrap(), pg.reports_version().unwrap()), (Some(v0), Some(v0)));
    let q = unit(&[1.0, 0.2, 0.1]);
    assert_eq!(
        pg.vector_search(VectorKind::Report, &q, 5).unwrap(),
        lite.vector_search(VectorKind::Report, &q, 5).unwrap()
    );
    assert_eq!(pg.vector_search(VectorKind::Report, &q, 5).unwrap().len(), 1);
    assert_eq!(pg.stats().unwrap(), lite.stats().unwrap());
    assert_eq!(pg.documents(Some("ALP"), 0, 10).unwrap().len(), 1);
    assert_eq!(
        pg.documents(None, 0, 10).unwrap().iter().map(|d| &d.id).collect::<Vec<_>>(),
        lite.documents(None, 0, 10).unwrap().iter().map(|d| &d.id).collect::<Vec<_>>()
    );
}

#[test]
fn postgres_second_writer_waits_or_is_refused_with_the_holder_named() {
    use rhizome_store::LockWait;
    use std::time::Duration;
    let url = rhizome_testdb::postgres::fresh_database("lock");
    let first = PgStore::open_writer(&url, true, "rhizome index docs", LockWait::No, &mut |_| {}).unwrap();
    let err =
        PgStore::open_writer(&url, true, "rhizome delete x", LockWait::No, &mut |_| {}).err().unwrap().to_string();
    assert!(
        err.contains("is busy") && err.contains("rhizome index docs") && err.contains(&std::process::id().to_string()),
        "{err}"
    );
    assert!(err.contains("postgres://postgres@127.0.0.1"), "names the database: {err}");
    let mut waited = None;
    let err = PgStore::open_writer(&url, true, "b", LockWait::Up(Some(Duration::from_millis(300))), &mut |h| {
        waited = Some(h.clone())
    })
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

/// Indexes in two schemas of one database (`search_path` in the URL) have a writer lock
/// each: a writer of one never waits for a writer of the other.
#[test]
fn postgres_writer_lock_is_per_schema() {
    use rhizome_store::LockWait;
    let url = rhizome_testdb::postgres::fresh_database("schemas");
    rhizome_testdb::postgres::psql(&url, "CREATE EXTENSION IF NOT EXISTS vector; CREATE SCHEMA w_a; CREATE SCHEMA w_b")
        .unwrap();
    let in_schema = |s: &str| format!("{url}?options=-csearch_path%3D{s},public");
    let a = PgStore::open_writer(&in_schema("w_a"), true, "writer a", LockWait::No, &mut |_| {}).unwrap();
    let b = PgStore::open_writer(&in_schema("w_b"), true, "writer b", LockWait::No, &mut |_| {});
    assert!(b.is_ok(), "schema w_b is another index: {:?}", b.err());
    let err = PgStore::open_writer(&in_schema("w_a"), true, "second a", LockWait::No, &mut |_| {}).err().unwrap();
    assert!(err.to_string().contains("writer a"), "the same schema is refused, its holder named: {err}");
    let tables = rhizome_testdb::postgres::psql(
        &url,
        "SELECT string_agg(table_schema, ',' ORDER BY table_schema) FROM information_schema.tables WHERE table_name = 'meta'",
    )
    .unwrap();
    assert_eq!(tables, "w_a,w_b", "each index in its own schema");
    drop(a);
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
}

#[test]
fn postgres_documents_are_indexed_by_type_tag_language_and_date() {
    document_index_contract(PgStore::open(&rhizome_testdb::postgres::fresh_database("doctags"), true).unwrap());
}

#[test]
fn postgres_support_is_read_by_document() {
    supported_by_contract(PgStore::open(&rhizome_testdb::postgres::fresh_database("supported"), true).unwrap());
}
