//! The job board of a PostgreSQL store ([`crate::jobs`]): a table `serve_jobs` of the
//! index's schema, made on first use, whose identity column numbers the jobs of every
//! replica. Finished or not, a job is forgotten a week after its last write.

use rhizome_core::Result;

use super::{pg_err, pool, PgUrl};
use crate::jobs::{JobBoard, SharedJob};

const TABLE: &str = "CREATE TABLE IF NOT EXISTS serve_jobs(id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    replica TEXT NOT NULL, view TEXT, updated BIGINT NOT NULL)";

const NOW: &str = "extract(epoch FROM clock_timestamp())::bigint";

/// Jobs older than this (seconds since their last write) are removed.
const KEEP_SECS: i64 = 7 * 24 * 3600;

pub struct PgJobBoard {
    url: PgUrl,
}

impl PgJobBoard {
    /// The board of the store at `url` (its table made when missing).
    pub fn open(url: &str) -> Result<PgJobBoard> {
        let board = PgJobBoard { url: PgUrl::new(url) };
        board.run(|c| {
            let there: bool = c.query_one("SELECT to_regclass('serve_jobs') IS NOT NULL", &[])?.get(0);
            if !there {
                let mut tx = c.transaction()?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&super::schema::SCHEMA_LOCK])?;
                tx.batch_execute(TABLE)?;
                tx.commit()?;
            }
            Ok(())
        })?;
        Ok(board)
    }

    fn run<T>(&self, f: impl FnOnce(&mut postgres::Client) -> std::result::Result<T, postgres::Error>) -> Result<T> {
        let mut conn = pool::take(&self.url)?;
        let r = f(&mut conn.client).map_err(|e| pg_err(&self.url, e));
        pool::give(&self.url, conn);
        r
    }
}

impl JobBoard for PgJobBoard {
    fn create(&self, replica: &str) -> Result<u64> {
        self.run(|c| {
            let id: i64 = c
                .query_one(
                    &format!("INSERT INTO serve_jobs(replica, updated) VALUES ($1, {NOW}) RETURNING id"),
                    &[&replica],
                )?
                .get(0);
            if id % 1000 == 0 {
                c.execute(&format!("DELETE FROM serve_jobs WHERE updated < {NOW} - $1"), &[&KEEP_SECS])?;
            }
            Ok(id as u64)
        })
    }

    fn update(&self, id: u64, view: &str) -> Result<()> {
        self.run(|c| {
            c.execute(
                &format!("UPDATE serve_jobs SET view = $2, updated = {NOW} WHERE id = $1"),
                &[&(id as i64), &view],
            )
            .map(|_| ())
        })
    }

    fn get(&self, id: u64) -> Result<Option<SharedJob>> {
        let Ok(id) = i64::try_from(id) else { return Ok(None) };
        self.run(|c| {
            let row =
                c.query_opt(&format!("SELECT replica, view, {NOW} - updated FROM serve_jobs WHERE id = $1"), &[&id])?;
            Ok(row.map(|r| SharedJob { replica: r.get(0), view: r.get(1), age_secs: r.get::<_, i64>(2).max(0) as u64 }))
        })
    }
}
