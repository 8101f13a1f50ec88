//! One writer at a time per database: a session advisory lock, held on a connection of
//! its own for the writer's life (it goes with the session, so a killed writer leaves
//! none). The holder writes who it is (pid, host, command, start) into `writer_lock`, so
//! that a second writer can say whom it waits for; the waiting and the messages are
//! [`crate::lock`]'s.

use postgres::Client;
use rhizome_core::Result;

use super::{pg_err, pool, PgUrl};
use crate::lock::{self, hostname, Contended, Holder, LockWait};

/// The lock's two keys (`pg_advisory_lock(int, int)`: pg_locks shows them as classid, objid).
const KEY1: i32 = 0x7268_697a;
const KEY2: i32 = 2;

const HOLDER_TABLE: &str = "CREATE TABLE IF NOT EXISTS writer_lock(id INT PRIMARY KEY, backend_pid INT NOT NULL,
    pid BIGINT NOT NULL, host TEXT COLLATE \"C\" NOT NULL, command TEXT COLLATE \"C\" NOT NULL, since BIGINT NOT NULL)";

/// The held writer lock; released when dropped (or when the process dies).
pub struct PgWriterLock {
    client: Client,
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
    pub fn acquire(
        url: &PgUrl,
        command: &str,
        wait: LockWait,
        on_wait: &mut dyn FnMut(&Holder),
    ) -> Result<PgWriterLock> {
        let e = |x| pg_err(url, x);
        let mut client = pool::connect(url)?;
        let there: bool = client.query_one("SELECT to_regclass('writer_lock') IS NOT NULL", &[]).map_err(e)?.get(0);
        if !there {
            let mut tx = client.transaction().map_err(e)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&super::schema::SCHEMA_LOCK]).map_err(e)?;
            tx.batch_execute(HOLDER_TABLE).map_err(e)?;
            tx.commit().map_err(e)?;
        }
        let mut contended = Advisory { client, url };
        lock::acquire(&mut contended, url.display().into(), wait, on_wait)?;
        let mut client = contended.client;
        let me = Holder::me(command, hostname());
        client
            .execute(
                "INSERT INTO writer_lock(id, backend_pid, pid, host, command, since)
                 VALUES (1, pg_backend_pid(), $1, $2, $3, $4)
                 ON CONFLICT (id) DO UPDATE SET backend_pid = excluded.backend_pid, pid = excluded.pid,
                 host = excluded.host, command = excluded.command, since = excluded.since",
                &[&(me.pid as i64), &me.host, &me.command, &(me.since as i64)],
            )
            .map_err(e)?;
        Ok(PgWriterLock { client })
    }
}

/// The advisory lock on the connection that will hold it.
struct Advisory<'a> {
    client: Client,
    url: &'a PgUrl,
}

impl Contended for Advisory<'_> {
    fn try_take(&mut self) -> Result<Option<Holder>> {
        let e = |x| pg_err(self.url, x);
        if try_lock(&mut self.client).map_err(e)? {
            return Ok(None);
        }
        read_holder(&mut self.client).map(Some).map_err(e)
    }

    fn take(&mut self) -> Result<()> {
        self.client.execute("SELECT pg_advisory_lock($1, $2)", &[&KEY1, &KEY2]).map_err(|x| pg_err(self.url, x))?;
        Ok(())
    }
}

impl Drop for PgWriterLock {
    fn drop(&mut self) {
        let _ = self.client.batch_execute(&format!(
            "DELETE FROM writer_lock WHERE backend_pid = pg_backend_pid(); SELECT pg_advisory_unlock({KEY1}, {KEY2})"
        ));
    }
}
