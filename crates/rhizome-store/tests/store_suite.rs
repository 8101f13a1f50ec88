//! The store contract (tests/contract) on the embedded SQLite index, and what only SQLite
//! has (damaged files, term-rule versions). PostgreSQL: store_postgres.rs; FalkorDB:
//! store_falkordb.rs.

mod contract;

use std::path::Path;

use contract::*;
use rhizome_core::*;
use rhizome_store::SqliteStore;

#[test]
fn sqlite_store_meets_the_contract() {
    contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
}

#[test]
fn sqlite_store_copies_document_by_document() {
    copy_contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
}

#[test]
fn sqlite_store_keeps_pages_and_chunk_ranges() {
    provenance_contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
}

#[test]
fn sqlite_store_keeps_other_names_of_the_same_content() {
    aliases_contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
}

#[test]
fn sqlite_store_keeps_what_is_known_of_a_document() {
    meta_contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
}

#[test]
fn sqlite_store_reads_the_graph_around_entities() {
    neighbourhood_contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
}

#[test]
fn sqlite_store_reads_one_community() {
    community_contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
}

#[test]
fn sqlite_store_rekeys_an_entity_whose_name_went() {
    rekey_contract(&|p: &Path| SqliteStore::open(p, true).unwrap());
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
    conn.execute_batch(
        "UPDATE meta SET value = '1' WHERE key = 'bm25_terms';
        UPDATE bm25_postings SET term = 'stale-' || term;",
    )
    .unwrap();
    drop(conn);
    let s = SqliteStore::open(tmp.path(), false).unwrap();
    assert_eq!(s.bm25("OpenAI投资", 5).unwrap(), before, "rebuilt from the stored chunks");
}

#[test]
fn an_index_made_before_the_document_index_gets_it_on_open() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = SqliteStore::open(tmp.path(), true).unwrap();
    s.set_embedding_model("m", 3).unwrap();
    let mut b = batch("beta", &["Ada met Babbage"], &["Ada", "Babbage"]);
    b.documents[0].meta.doc_type = Some("manual".into());
    s.write_batch(&b).unwrap();
    drop(s);
    let conn = rusqlite::Connection::open(tmp.path().join("rhizome.sqlite")).unwrap();
    conn.execute_batch("DROP TABLE document_tags; DELETE FROM meta WHERE key = 'document_tags';").unwrap();
    drop(conn);
    let s = SqliteStore::open(tmp.path(), false).unwrap();
    let (from, to) = filter::exact_range("manual");
    assert_eq!(s.tagged_documents("type", &from, Some(&to)).unwrap(), vec![b.documents[0].id.clone()]);
}

#[test]
fn entity_importance_is_the_mean_of_its_support() {
    let tmp = tempfile::tempdir().unwrap();
    importance_contract(rhizome_store::SqliteStore::open(tmp.path(), true).unwrap());
}

#[test]
fn documents_are_indexed_by_type_tag_language_and_date() {
    let tmp = tempfile::tempdir().unwrap();
    document_index_contract(rhizome_store::SqliteStore::open(tmp.path(), true).unwrap());
}

#[test]
fn support_is_read_by_document() {
    let tmp = tempfile::tempdir().unwrap();
    supported_by_contract(rhizome_store::SqliteStore::open(tmp.path(), true).unwrap());
}
