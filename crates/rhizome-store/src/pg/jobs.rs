//! The job board of a PostgreSQL store ([`crate::jobs`]): a table `serve_jobs` of the
//! index's schema, made on first use, whose identity column numbers the jobs of every
//! replica. Finished or not, a job is forgotten a week after its last write. Beside it,
//! `serve_uploads` keeps each accepted upload until it is indexed, leased to one replica
//! (`lease_until`, seconds since 1970), claimed with `FOR UPDATE SKIP LOCKED` once the
//! lease has run out.

use rhizome_core::Result;

use super::{pool, PgUrl};
use crate::jobs::{JobBoard, PendingUpload, SharedJob};

const TABLE: &str = "CREATE TABLE IF NOT EXISTS serve_jobs(id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    replica TEXT NOT NULL, view TEXT, updated BIGINT NOT NULL);
    CREATE TABLE IF NOT EXISTS serve_uploads(id BIGINT PRIMARY KEY, replica TEXT NOT NULL,
    lease_until BIGINT NOT NULL, claims INT NOT NULL, size BIGINT NOT NULL, payload BYTEA NOT NULL)";

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
        pool::ensure(&board.url, "serve_uploads", TABLE)?;
        Ok(board)
    }

    fn run<T>(&self, f: impl FnOnce(&mut postgres::Client) -> std::result::Result<T, postgres::Error>) -> Result<T> {
        pool::run(&self.url, f)
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

    fn keep_upload(&self, id: u64, replica: &str, payload: &[u8], lease_secs: u64, max_bytes: u64) -> Result<bool> {
        let (id, lease, max, size) = (id as i64, lease_secs as i64, max_bytes as i64, payload.len() as i64);
        self.run(|c| {
            let mut tx = c.transaction()?;
            // One insert at a time, so that the sum checked is the sum kept.
            tx.execute("LOCK TABLE serve_uploads IN SHARE ROW EXCLUSIVE MODE", &[])?;
            let kept: i64 = tx.query_one("SELECT COALESCE(sum(size), 0)::bigint FROM serve_uploads", &[])?.get(0);
            if kept + size > max {
                return Ok(false);
            }
            tx.execute(
                &format!(
                    "INSERT INTO serve_uploads(id, replica, lease_until, claims, size, payload)
                     VALUES ($1, $2, {NOW} + $3, 0, $4, $5)"
                ),
                &[&id, &replica, &lease, &size, &payload],
            )?;
            tx.commit()?;
            Ok(true)
        })
    }

    fn renew(&self, replica: &str, lease_secs: u64) -> Result<()> {
        self.run(|c| {
            c.execute(
                &format!("UPDATE serve_uploads SET lease_until = {NOW} + $2 WHERE replica = $1"),
                &[&replica, &(lease_secs as i64)],
            )
            .map(|_| ())
        })
    }

    fn claim(&self, replica: &str, lease_secs: u64) -> Result<Option<PendingUpload>> {
        self.run(|c| {
            let mut tx = c.transaction()?;
            let row = tx.query_opt(
                &format!(
                    "SELECT id FROM serve_uploads WHERE lease_until < {NOW} ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"
                ),
                &[],
            )?;
            let Some(row) = row else { return Ok(None) };
            let id: i64 = row.get(0);
            let r = tx.query_one(
                &format!(
                    "UPDATE serve_uploads SET replica = $2, lease_until = {NOW} + $3, claims = claims + 1
                     WHERE id = $1 RETURNING payload, claims"
                ),
                &[&id, &replica, &(lease_secs as i64)],
            )?;
            tx.execute(
                &format!("UPDATE serve_jobs SET replica = $2, updated = {NOW} WHERE id = $1"),
                &[&id, &replica],
            )?;
            tx.commit()?;
            Ok(Some(PendingUpload { id: id as u64, payload: r.get(0), claims: r.get::<_, i32>(1).max(0) as u32 }))
        })
    }

    fn forget_upload(&self, id: u64) -> Result<()> {
        self.run(|c| c.execute("DELETE FROM serve_uploads WHERE id = $1", &[&(id as i64)]).map(|_| ()))
    }

    fn release(&self, replica: &str) -> Result<()> {
        self.run(|c| c.execute("UPDATE serve_uploads SET lease_until = 0 WHERE replica = $1", &[&replica]).map(|_| ()))
    }

    fn pending_uploads(&self) -> Result<u64> {
        self.run(|c| Ok(c.query_one("SELECT count(*) FROM serve_uploads", &[])?.get::<_, i64>(0) as u64))
    }
}
