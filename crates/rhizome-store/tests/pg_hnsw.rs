//! The HNSW path of the PostgreSQL store, on small data: a test binary of its own, since
//! it lowers the per-process threshold from which searches go through the index.

use rhizome_core::ids::{chunk_id, document_id};
use rhizome_core::*;
use rhizome_store::{PgStore, SqliteStore};

fn doc(i: usize) -> WriteBatch {
    let text = format!("passage number {i}");
    let d = Document {
        id: document_id(&format!("d{i}"), &text),
        source: format!("d{i}.txt"),
        title: format!("d{i}"),
        text: text.clone(),
        pages: None,
        meta: Default::default(),
    };
    let c = Chunk {
        id: chunk_id(&d.id, 0, &text),
        doc_id: d.id.clone(),
        ordinal: 0,
        text,
        tokens: 3,
        start: 0,
        end: 0,
        pages: None,
    };
    let x = i as f32;
    let mut v = vec![x.sin(), x.cos(), (x * 0.37).sin(), 1.0];
    l2_normalize(&mut v);
    WriteBatch {
        vectors: vec![(VectorKind::Chunk, c.id.clone(), v)],
        chunks: vec![c],
        documents: vec![d],
        ..Default::default()
    }
}

#[test]
fn postgres_hnsw_search_matches_exact_search() {
    rhizome_store::pg::set_hnsw_min(50);
    let tmp = tempfile::tempdir().unwrap();
    let url = rhizome_testdb::postgres::fresh_database("hnsw");
    let mut pg = PgStore::open(&url, true).unwrap();
    let mut lite = SqliteStore::open(tmp.path(), true).unwrap();
    for s in [&mut pg as &mut dyn StoreWrite, &mut lite] {
        s.set_embedding_model("m", 4).unwrap();
        for i in 0..120 {
            s.write_batch(&doc(i)).unwrap();
        }
    }
    let built = rhizome_testdb::postgres::psql(&url, "SELECT to_regclass('vectors_hnsw_chunk') IS NOT NULL").unwrap();
    assert_eq!(built, "t", "the index is built once a kind passes the threshold");
    // The search's query can use it (at this size the planner would rather sort, so ask it not to).
    let plan = rhizome_testdb::postgres::psql(&url, "SET enable_seqscan = off; EXPLAIN SELECT id FROM vectors \
        WHERE kind = 'chunk' AND vector_dims(vec) = 4 ORDER BY vec::vector(4) <=> '{1,0,0,0}'::real[]::vector(4) LIMIT 5").unwrap();
    assert!(plan.contains("vectors_hnsw_chunk"), "{plan}");
    for q in [[1.0f32, 0.0, 0.0, 0.0], [0.2, 0.9, 0.1, 0.3], [0.0, 0.0, 1.0, 1.0]] {
        let mut q = q.to_vec();
        l2_normalize(&mut q);
        assert_eq!(
            pg.vector_search(VectorKind::Chunk, &q, 10).unwrap(),
            lite.vector_search(VectorKind::Chunk, &q, 10).unwrap()
        );
    }
    assert_eq!(
        pg.vector_search(VectorKind::Chunk, &[1.0], 10).unwrap(),
        vec![],
        "a query of the wrong size finds nothing"
    );
}

#[test]
fn a_bulk_load_sets_the_index_aside_and_builds_it_at_its_end() {
    rhizome_store::pg::set_hnsw_min(50);
    let url = rhizome_testdb::postgres::fresh_database("hnsw_bulk");
    let built =
        || rhizome_testdb::postgres::psql(&url, "SELECT to_regclass('vectors_hnsw_chunk') IS NOT NULL").unwrap();
    let mut pg = PgStore::open(&url, true).unwrap();
    pg.set_embedding_model("m", 4).unwrap();
    for i in 0..60 {
        pg.write_batch(&doc(i)).unwrap();
    }
    assert_eq!(built(), "t");
    let q = {
        let mut q = vec![0.2f32, 0.9, 0.1, 0.3];
        l2_normalize(&mut q);
        q
    };
    pg.bulk_load(true).unwrap();
    assert_eq!(built(), "f", "a bulk load drops the index");
    for i in 60..140 {
        pg.write_batch(&doc(i)).unwrap();
    }
    assert_eq!(built(), "f", "and writes do not build it again while the load lasts");
    let exact = pg.vector_search(VectorKind::Chunk, &q, 10).unwrap();
    assert_eq!(exact.len(), 10);
    pg.bulk_load(false).unwrap();
    assert_eq!(built(), "t", "its end builds it");
    assert_eq!(pg.vector_search(VectorKind::Chunk, &q, 10).unwrap(), exact, "through the index, the same passages");

    // A load that never ends: the next write after it builds what is missing.
    pg.bulk_load(true).unwrap();
    drop(pg);
    let mut pg = PgStore::open(&url, true).unwrap();
    pg.write_batch(&doc(140)).unwrap();
    assert_eq!(built(), "t");
}
