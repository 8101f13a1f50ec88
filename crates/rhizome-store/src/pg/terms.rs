//! How many chunks hold each BM25 term (`bm25_terms`), kept in the transaction that
//! writes or deletes the postings, so that a search knows each term's weight without
//! reading its postings ([`crate::bm25::top_k`]); and the postings' (term, chunk) index
//! the search probes.

use std::collections::BTreeMap;

use postgres::GenericClient;

use super::refresh::PgResult;

/// The table and index (made by the schema too; this is for an index made before them,
/// whose `(term)` index the new one replaces: the one in the connection's own schema, never
/// one a workspace's search path reaches behind it) and the meta key saying the table is
/// filled.
pub const MIGRATION: &str = r#"
CREATE TABLE IF NOT EXISTS bm25_terms(term TEXT COLLATE "C" PRIMARY KEY, df BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS bm25_postings_term_chunk ON bm25_postings(term, chunk_rowid) INCLUDE (tf);
DO $$ BEGIN EXECUTE format('DROP INDEX IF EXISTS %I.bm25_postings_term', current_schema()); END $$;
"#;
pub const FILLED: &str = "bm25_terms";

/// Count every term's postings (once, for an index made before the table).
pub fn fill(c: &mut impl GenericClient) -> PgResult<()> {
    c.batch_execute(
        "DELETE FROM bm25_terms;
         INSERT INTO bm25_terms(term, df) SELECT term, count(*) FROM bm25_postings GROUP BY term;",
    )?;
    super::schema::set_meta(c, FILLED, "1")
}

/// Postings (term, ..) were written: count them.
pub fn added<'a>(c: &mut impl GenericClient, terms: impl Iterator<Item = &'a str>) -> PgResult<()> {
    let mut n: BTreeMap<&str, i64> = BTreeMap::new();
    for t in terms {
        *n.entry(t).or_default() += 1;
    }
    if n.is_empty() {
        return Ok(());
    }
    let (terms, counts): (Vec<&str>, Vec<i64>) = n.into_iter().unzip();
    c.execute(
        "INSERT INTO bm25_terms(term, df) SELECT * FROM unnest($1::text[], $2::bigint[])
         ON CONFLICT (term) DO UPDATE SET df = bm25_terms.df + excluded.df",
        &[&terms, &counts],
    )?;
    Ok(())
}

/// The postings of the chunks of `doc_id` are about to be deleted: uncount them (a term
/// no chunk holds any more goes).
pub fn removing_document(c: &mut impl GenericClient, doc_id: &str) -> PgResult<()> {
    c.execute(
        "WITH gone AS (SELECT term, count(*) AS n FROM bm25_postings
             WHERE chunk_rowid IN (SELECT rowid FROM chunks WHERE doc_id = $1) GROUP BY term),
         fewer AS (UPDATE bm25_terms t SET df = t.df - gone.n FROM gone
             WHERE t.term = gone.term AND t.df > gone.n RETURNING t.term)
         DELETE FROM bm25_terms t USING gone WHERE t.term = gone.term AND t.df <= gone.n",
        &[&doc_id],
    )?;
    Ok(())
}
