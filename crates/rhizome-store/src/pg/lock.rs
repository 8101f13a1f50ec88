//! One writer at a time per index: a session advisory lock, held on a connection of its
//! own for the writer's life (it goes with the session, so a killed writer leaves none).
//! An index is the Rhizome schema the connection's `search_path` puts first
//! (`current_schema()`), so indexes in two schemas of one database have two locks. The holder writes who it is (pid, host, command, start) into `writer_lock`, so
//! that a second writer can say whom it waits for; the waiting and the messages are
//! [`crate::lock`]'s.

use postgres::Client;
use rhizome_core::Result;

use super::{pg_err, pool, PgUrl};
use crate::lock::{self, hostname, Contended, Holder, LockWait};

/// The lock's two keys (`pg_advisory_lock(int, int)`: pg_locks shows them as classid,
/// objid): a constant, and the schema's key ([`schema_key`]).
const KEY1: i32 = 0x7268_697a;
/// The second key of the schema `public` (every index made before keys named schemas:
/// an older process writing `public` and a newer one still exclude each other).
const PUBLIC_KEY: i32 = 2;

/// The second key for the index in `schema`: `public` keeps [`PUBLIC_KEY`]; any other
/// schema a 31-bit FNV-1a hash of its name, above 2 (a collision of two schemas' keys only
/// makes their writers take turns, never lets two write one index at once).
pub fn schema_key(schema: &str) -> i32 {
    if schema == "public" {
        return PUBLIC_KEY;
    }
    let mut h: u32 = 0x811c_9dc5;
    for b in schema.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    ((h & 0x7fff_ffff) as i32).max(PUBLIC_KEY + 1)
}

/// The schema the connection writes (the first of its `search_path` that exists).
fn current_schema(c: &mut Client) -> std::result::Result<String, postgres::Error> {
    let s: Option<String> = c.query_one("SELECT current_schema()::text", &[])?.get(0);
    Ok(s.unwrap_or_else(|| "public".into()))
}

const HOLDER_TABLE: &str = "CREATE TABLE IF NOT EXISTS writer_lock(id INT PRIMARY KEY, backend_pid INT NOT NULL,
    pid BIGINT NOT NULL, host TEXT COLLATE \"C\" NOT NULL, command TEXT COLLATE \"C\" NOT NULL, since BIGINT NOT NULL)";

/// The held writer lock; released when dropped (or when the process dies).
pub struct PgWriterLock {
    client: Client,
    key: i32,
}

/// Who holds the lock, as its row says (pid 0: unknown yet, or the row is stale).
fn read_holder(c: &mut Client, key: i32) -> std::result::Result<Holder, postgres::Error> {
    let row = c.query_opt(
        &format!(
            "SELECT w.pid, w.host, w.command, w.since FROM writer_lock w WHERE w.id = 1 AND w.backend_pid IN
             (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = {KEY1}
              AND objid = {key} AND objsubid = 2 AND database =
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

fn try_lock(c: &mut Client, key: i32) -> std::result::Result<bool, postgres::Error> {
    Ok(c.query_one("SELECT pg_try_advisory_lock($1, $2)", &[&KEY1, &key])?.get(0))
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
        let key = schema_key(&current_schema(&mut client).map_err(e)?);
        let mut contended = Advisory { client, url, key };
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
        Ok(PgWriterLock { client, key })
    }
}

/// The advisory lock on the connection that will hold it.
struct Advisory<'a> {
    client: Client,
    url: &'a PgUrl,
    key: i32,
}

impl Contended for Advisory<'_> {
    fn try_take(&mut self) -> Result<Option<Holder>> {
        let e = |x| pg_err(self.url, x);
        if try_lock(&mut self.client, self.key).map_err(e)? {
            return Ok(None);
        }
        read_holder(&mut self.client, self.key).map(Some).map_err(e)
    }

    fn take(&mut self) -> Result<()> {
        self.client.execute("SELECT pg_advisory_lock($1, $2)", &[&KEY1, &self.key]).map_err(|x| pg_err(self.url, x))?;
        Ok(())
    }
}

impl Drop for PgWriterLock {
    fn drop(&mut self) {
        let key = self.key;
        let _ = self.client.batch_execute(&format!(
            "DELETE FROM writer_lock WHERE backend_pid = pg_backend_pid(); SELECT pg_advisory_unlock({KEY1}, {key})"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::schema_key;

    #[test]
    fn each_schema_has_its_key_and_public_keeps_the_old_one() {
        assert_eq!(schema_key("public"), 2);
        let (a, b) = (schema_key("w_docs"), schema_key("w_mail"));
        assert!(a > 2 && b > 2 && a != b, "{a} {b}");
        assert_eq!(a, schema_key("w_docs"), "stable");
    }
}
