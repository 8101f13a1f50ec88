//! The store contract (tests/contract) on FalkorDB, on a server of this test binary
//! (rhizome-testdb; a fresh graph per store), and what FalkorDB adds: the SDK schema,
//! batches with a bad item, the Redis writer lock, crash clean-up.

mod contract;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use contract::*;
use rhizome_core::ids::entity_id;
use rhizome_core::*;
use rhizome_store::{FalkorStore, FalkorUrl};

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
fn falkordb_store_keeps_pages_and_chunk_ranges() {
    provenance_contract(&falkor_opener());
}

#[test]
fn falkordb_store_keeps_other_names_of_the_same_content() {
    aliases_contract(&falkor_opener());
}

#[test]
fn falkordb_store_keeps_what_is_known_of_a_document() {
    meta_contract(&falkor_opener());
}

#[test]
fn falkordb_store_reads_the_graph_around_entities() {
    neighbourhood_contract(&falkor_opener());
}

#[test]
fn falkordb_store_rekeys_an_entity_whose_name_went() {
    rekey_contract(&falkor_opener());
}

#[test]
fn falkordb_store_reads_one_community() {
    community_contract(&falkor_opener());
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
    s.write_batch(&batch(
        "alpha",
        &["Aage Bohr won the Nobel Prize", "Copenhagen physics"],
        &["Aage Bohr", "Nobel Prize"],
    ))
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
        assert!(
            idx.iter().any(|r| r[0].str() == label && format!("{:?}", r[2]).contains("VECTOR")),
            "vector index on {label}: {text}"
        );
    }
    assert!(
        idx.iter().any(|r| r[0].str() == "Chunk" && format!("{:?}", r[2]).contains("FULLTEXT")),
        "full-text index: {text}"
    );
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
    let err =
        FalkorStore::open_writer(&url, true, "rhizome delete x", LockWait::No, &mut |_| {}).err().unwrap().to_string();
    assert!(
        err.contains("is busy") && err.contains("rhizome index docs") && err.contains(&std::process::id().to_string()),
        "{err}"
    );
    let mut waited = None;
    let err = FalkorStore::open_writer(
        &url,
        true,
        "b",
        LockWait::Up(Some(std::time::Duration::from_millis(300))),
        &mut |h| waited = Some(h.clone()),
    )
    .err()
    .unwrap()
    .to_string();
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
    w.delete_document(&a.documents[0].id, &mut unnamed).unwrap();
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
    assert!(
        err.contains(&format!("cannot connect to falkordb://127.0.0.1:{port}/g"))
            && err.contains("is FalkorDB running"),
        "{err}"
    );
    let err = FalkorStore::open(&falkor_url("missing"), false).err().unwrap().to_string();
    assert!(err.contains("no Rhizome index in this graph"), "{err}");
    let plain = rhizome_testdb::falkordb::start_without_module();
    let url = FalkorUrl::parse(&format!("falkordb://127.0.0.1:{}/g", plain.port)).unwrap();
    let err = FalkorStore::open(&url, true).err().unwrap().to_string();
    assert!(err.contains("has no GRAPH module") && err.contains("--loadmodule"), "{err}");
    assert!(!rhizome_store::StoreUrl::parse(&url.display()).unwrap().exists());
}

#[test]
fn falkordb_documents_are_indexed_by_type_tag_language_and_date() {
    document_index_contract(FalkorStore::open(&falkor_url("doctags"), true).unwrap());
}

#[test]
fn falkordb_support_is_read_by_document() {
    supported_by_contract(FalkorStore::open(&falkor_url("supported"), true).unwrap());
}
