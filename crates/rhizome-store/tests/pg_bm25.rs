//! BM25 on PostgreSQL through the pruned search (rare terms read whole, frequent ones
//! probed), on small data: a test binary of its own, since it lowers the per-process
//! threshold from which searches prune. Rankings equal SQLite's (which reads every
//! posting), after writes and deletes; the term counts follow both; an index made before
//! the counts were kept gets them when opened.

use rhizome_core::ids::{chunk_id, document_id};
use rhizome_core::*;
use rhizome_store::{PgStore, SqliteStore};

const WORDS: &[&str] = &[
    "river", "bridge", "city", "north", "king", "battle", "album", "band", "film", "actor", "born", "died", "war",
    "island", "church", "museum", "railway", "station", "football", "club", "season", "league", "novel", "poet",
];

/// Passage `i`: words drawn with Zipf-like frequencies, some passages repeated.
fn doc(i: usize) -> WriteBatch {
    let mut x = (i as u64 % 37).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let n = 2 + (x % 13) as usize;
    let text: Vec<&str> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            WORDS[((WORDS.len() as f64 + 1.0).powf(u) as usize - 1).min(WORDS.len() - 1)]
        })
        .collect();
    let text = text.join(" ");
    let d = Document {
        id: document_id(&format!("d{i}"), &text),
        source: format!("d{i}.txt"),
        title: String::new(),
        text: text.clone(),
        pages: None,
        meta: Default::default(),
    };
    let c = Chunk {
        id: chunk_id(&d.id, 0, &text),
        doc_id: d.id.clone(),
        ordinal: 0,
        text,
        tokens: n as u32,
        start: 0,
        end: 0,
        pages: None,
    };
    WriteBatch { chunks: vec![c], documents: vec![d], ..Default::default() }
}

fn same_rankings(pg: &PgStore, lite: &SqliteStore) {
    for q in ["river bridge", "king battle war", "album band film actor", "poet novel city north", "river", "zzz"] {
        for k in [1, 3, 10, 50, 1000] {
            assert_eq!(pg.bm25(q, k).unwrap(), lite.bm25(q, k).unwrap(), "{q} at {k}");
        }
    }
}

fn counts_match(url: &str) {
    let diff = rhizome_testdb::postgres::psql(
        url,
        "SELECT count(*) FROM (SELECT term, count(*) AS df FROM bm25_postings GROUP BY term) p
         FULL JOIN bm25_terms t USING (term) WHERE p.df IS DISTINCT FROM t.df",
    )
    .unwrap();
    assert_eq!(diff, "0", "bm25_terms holds each term's chunk count");
}

#[test]
fn pruned_bm25_ranks_as_sqlite_after_writes_and_deletes() {
    rhizome_store::pg::set_bm25_read_all_max(0);
    let tmp = tempfile::tempdir().unwrap();
    let url = rhizome_testdb::postgres::fresh_database("bm25");
    let mut pg = PgStore::open(&url, true).unwrap();
    let mut lite = SqliteStore::open(tmp.path(), true).unwrap();
    let batches: Vec<WriteBatch> = (0..400).map(doc).collect();
    let mut all = WriteBatch::default();
    for b in &batches {
        all.documents.extend(b.documents.iter().cloned());
        all.chunks.extend(b.chunks.iter().cloned());
    }
    for s in [&mut pg as &mut dyn StoreWrite, &mut lite] {
        s.write_batch(&all).unwrap();
    }
    counts_match(&url);
    same_rankings(&pg, &lite);
    let mut unnamed = |_: &[String]| Ok(Vec::new());
    for b in batches.iter().step_by(3) {
        for s in [&mut pg as &mut dyn StoreWrite, &mut lite] {
            s.delete_document(&b.documents[0].id, &mut unnamed).unwrap();
        }
    }
    counts_match(&url);
    same_rankings(&pg, &lite);

    // An index made before the counts: reopened, it has them, and the (term, chunk) index.
    rhizome_testdb::postgres::psql(
        &url,
        "DROP TABLE bm25_terms; DROP INDEX bm25_postings_term_chunk; DELETE FROM meta WHERE key = 'bm25_terms';
         CREATE INDEX bm25_postings_term ON bm25_postings(term)",
    )
    .unwrap();
    drop(pg);
    let pg = PgStore::open(&url, true).unwrap();
    counts_match(&url);
    let indexes = rhizome_testdb::postgres::psql(
        &url,
        "SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'bm25_postings'",
    )
    .unwrap();
    assert_eq!(indexes, "bm25_postings_chunk,bm25_postings_term_chunk");
    same_rankings(&pg, &lite);
}

/// An index in a schema of its own (`search_path=rz_x,public`) migrates its own tables,
/// never the older index in `public` its search path reaches behind it.
#[test]
fn the_migration_stays_in_the_connections_schema() {
    let url = rhizome_testdb::postgres::fresh_database("bm25_ws");
    drop(PgStore::open(&url, true).unwrap());
    rhizome_testdb::postgres::psql(
        &url,
        "DROP INDEX bm25_postings_term_chunk; CREATE INDEX bm25_postings_term ON bm25_postings(term);
         CREATE SCHEMA rz_x",
    )
    .unwrap();
    let mut ws = PgStore::open(&format!("{url}?options=-csearch_path%3Drz_x,public"), true).unwrap();
    ws.write_batch(&doc(1)).unwrap();
    let indexes = rhizome_testdb::postgres::psql(
        &url,
        "SELECT string_agg(schemaname || '.' || indexname, ',' ORDER BY schemaname, indexname) FROM pg_indexes
         WHERE tablename = 'bm25_postings'",
    )
    .unwrap();
    assert_eq!(
        indexes,
        "public.bm25_postings_chunk,public.bm25_postings_term,rz_x.bm25_postings_chunk,rz_x.bm25_postings_term_chunk"
    );
}
