//! One writer at a time per database: a session advisory lock, held on a connection of
//! its own for the writer's life (it goes with the session, so a killed writer leaves
//! none). The holder writes who it is (pid, host, command, start) into `writer_lock`, so
//! that a second writer can say whom it waits for; the messages are those of
//! crates/rhizome-store/src/lock.rs.

use std::time::{Duration, Instant};

use postgres::Client;
use rhizome_core::{Error, Result};

use super::{pg_err, pool, PgUrl};
use crate::lock::{Holder, LockWait};

/// The lock's two keys (`pg_advisory_lock(int, int)`: pg_locks shows them as classid, objid).
const KEY1: i32 = 0x7268_697a;
const KEY2: i32 = 2;

const HOLDER_TABLE: &str = "CREATE TABLE IF NOT EXISTS writer_lock(id INT PRIMARY KEY, backend_pid INT NOT NULL,
    pid BIGINT NOT NULL, host TEXT COLLATE \"C\" NOT NULL, command TEXT COLLATE \"C\" NOT NULL, since BIGINT NOT NULL)";

/// The held writer lock; released when dropped (or when the process dies).
pub struct PgWriterLock {
    client: Client,
}

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default()
}

fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).take(200).collect()
}

/// Who holds the lock, as its row says (pid 0: unknown yet, or the row is stale).
fn read_holder(c: &mut Client) -> std::result::Result<Holder, postgres::Error> {
    let row = c.query_opt(
        &format!(
            "SELECT w.pid, w.host, w.command, w.since FROM writer_lock w WHERE w.id = 1 AND w.backend_pid IN
             (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = {KEY1}
              AND objid = {KEY2} AND objsubid = 2 AND database =
              (SELECT oid FROM pg_database WHERE datname = current_database()))"
        ),
        &[],
    )?;
    Ok(row
        .map(|r| Holder {
            pid: r.get::<_, i64>(0) as u32,
            host: r.get(1),
            command: r.get(2),
            since: r.get::<_, i64>(3) as u64,
        })
        .unwrap_or_default())
}

fn try_lock(c: &mut Client) -> std::result::Result<bool, postgres::Error> {
    Ok(c.query_one("SELECT pg_try_advisory_lock($1, $2)", &[&KEY1, &KEY2])?.get(0))
}

impl PgWriterLock {
    /// Take the writer lock of the database at `url`; see [`crate::lock::WriterLock::acquire`].
    pub fn acquire(url: &PgUrl, command: &str, wait: LockWait, on_wait: &mut dyn FnMut(&Holder))
        -> Result<PgWriterLock> {
        let e = |x| pg_err(url, x);
        let mut client = pool::connect(url)?;
        let there: bool = client.query_one("SELECT to_regclass('writer_lock') IS NOT NULL", &[]).map_err(e)?.get(0);
        if !there {
            let mut tx = client.transaction().map_err(e)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&super::schema::SCHEMA_LOCK]).map_err(e)?;
            tx.batch_execute(HOLDER_TABLE).map_err(e)?;
            tx.commit().map_err(e)?;
        }
        if !try_lock(&mut client).map_err(e)? {
            // The holder writes who it is just after it takes the lock: give it a moment.
            let mut holder = read_holder(&mut client).map_err(e)?;
            for _ in 0..40 {
                if holder.pid != 0 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(25));
                holder = read_holder(&mut client).map_err(e)?;
            }
            let busy = |holder: &Holder| Error::Busy {
                path: url.display().into(),
                msg: format!(
                    "{holder} is writing it; wait for it to finish (or run again without \
                     --no-wait to wait), then run this command again"
                ),
            };
            match wait {
                LockWait::No => return Err(busy(&holder)),
                LockWait::Up(None) => {
                    on_wait(&holder);
                    client.execute("SELECT pg_advisory_lock($1, $2)", &[&KEY1, &KEY2]).map_err(e)?;
                }
                LockWait::Up(Some(limit)) => {
                    on_wait(&holder);
                    let start = Instant::now();
                    while !try_lock(&mut client).map_err(e)? {
                        if start.elapsed() >= limit {
                            return Err(busy(&read_holder(&mut client).map_err(e)?));
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
            }
        }
        client
            .execute(
                "INSERT INTO writer_lock(id, backend_pid, pid, host, command, since)
                 VALUES (1, pg_backend_pid(), $1, $2, $3, $4)
                 ON CONFLICT (id) DO UPDATE SET backend_pid = excluded.backend_pid, pid = excluded.pid,
                 host = excluded.host, command = excluded.command, since = excluded.since",
                &[&(std::process::id() as i64), &hostname(), &one_line(command), &(now_secs() as i64)],
            )
            .map_err(e)?;
        Ok(PgWriterLock { client })
    }
}

impl Drop for PgWriterLock {
    fn drop(&mut self) {
        let _ = self.client.batch_execute(&format!(
            "DELETE FROM writer_lock WHERE backend_pid = pg_backend_pid(); SELECT pg_advisory_unlock({KEY1}, {KEY2})"
        ));
    }
}
