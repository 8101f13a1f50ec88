//! Connections, pooled per URL. Readers are opened and dropped often (the engine lends
//! one per query, a server many at once), and a PostgreSQL connection costs a process
//! fork on the server plus a few round trips: a returned connection is kept for the next
//! opener. A `Vec` behind a mutex is all this needs (no pool crate:
//! connections are taken and given back synchronously, by the thread that uses them;
//! r2d2 would add a dependency and a reaper thread for nothing here).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use postgres::{Client, NoTls, Statement};
use rhizome_core::Error;

type Result<T, E = Error> = std::result::Result<T, E>;

use super::PgUrl;

/// Idle connections kept per URL.
const IDLE: usize = 16;

/// A connection.
pub struct Conn {
    pub client: Client,
    /// The staging tables of writes exist on this connection.
    pub staged: bool,
    /// Statements prepared on this connection, by their text. A query by text costs two
    /// round trips (parse and describe, then bind and execute); a prepared one costs one,
    /// and a reader's queries are few and short enough that round trips are their time.
    stmts: HashMap<&'static str, Statement>,
}

impl Conn {
    fn new(client: Client) -> Conn {
        Conn { client, staged: false, stmts: HashMap::new() }
    }

    /// `sql` prepared on this connection (once; kept with the connection in the pool).
    /// The statements are fixed texts of this crate, so the cache stays small.
    pub fn prepared(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.stmts.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.stmts.insert(sql, s.clone());
        Ok(s)
    }

    /// Run the prepared `sql`.
    pub fn query(
        &mut self,
        sql: &'static str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>, postgres::Error> {
        let s = self.prepared(sql)?;
        self.client.query(&s, params)
    }
}

fn idle() -> &'static Mutex<HashMap<String, Vec<Conn>>> {
    static POOL: OnceLock<Mutex<HashMap<String, Vec<Conn>>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A connection to `url`: an idle one, or a new one.
pub fn take(url: &PgUrl) -> Result<Conn> {
    loop {
        let pooled = idle().lock().unwrap_or_else(|p| p.into_inner()).get_mut(&url.full).and_then(Vec::pop);
        match pooled {
            Some(c) if !c.client.is_closed() => return Ok(c),
            Some(_) => continue,
            None => break,
        }
    }
    Ok(Conn::new(connect(url)?))
}

/// Give a connection back for the next opener (a closed one is dropped).
pub fn give(url: &PgUrl, conn: Conn) {
    if conn.client.is_closed() {
        return;
    }
    let mut pool = idle().lock().unwrap_or_else(|p| p.into_inner());
    let list = pool.entry(url.full.clone()).or_default();
    if list.len() < IDLE {
        list.push(conn);
    }
}

/// Run `f` on a pooled connection to `url`, its error named with the URL.
pub fn run<T>(url: &PgUrl, f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>) -> Result<T> {
    let mut conn = take(url)?;
    let r = f(&mut conn.client).map_err(|e| super::pg_err(url, e));
    give(url, conn);
    r
}

/// Make the tables of `ddl` (statements `IF NOT EXISTS`) unless `table` exists, under the
/// schema lock so that two processes starting at once do not race.
pub fn ensure(url: &PgUrl, table: &str, ddl: &str) -> Result<()> {
    run(url, |c| {
        let there: bool = c.query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])?.get(0);
        if !there {
            let mut tx = c.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&super::schema::SCHEMA_LOCK])?;
            tx.batch_execute(ddl)?;
            tx.commit()?;
        }
        Ok(())
    })
}

/// A new connection, not pooled (the writer lock holds one for a writer's life).
pub fn connect(url: &PgUrl) -> Result<Client> {
    let mut config: postgres::Config = url.full.parse().map_err(|e| {
        Error::Config(format!(
            "store.url {}: not a valid PostgreSQL URL ({e}); write postgres://USER@HOST:PORT/DATABASE",
            url.display()
        ))
    })?;
    // As libpq: a password not in the URL comes from PGPASSWORD (kept out of URLs and configs).
    if config.get_password().is_none() {
        if let Some(p) = std::env::var_os("PGPASSWORD") {
            config.password(p.as_encoded_bytes());
        }
    }
    config.connect(NoTls).map_err(|e| {
        let cause = match e.as_db_error() {
            Some(db) => db.message().to_string(),
            None => {
                let mut s = e.to_string();
                let mut src = std::error::Error::source(&e);
                while let Some(x) = src {
                    s = x.to_string();
                    src = x.source();
                }
                s
            }
        };
        let hint = if cause.contains("does not exist") && cause.contains("database") {
            "create it first (createdb, or CREATE DATABASE as an administrator)"
        } else if cause.contains("password") || cause.contains("authentication") {
            "check the user and password (PGPASSWORD or the URL), and pg_hba.conf"
        } else {
            "is the server running and listening there? check host, port, user and database in store.url"
        };
        Error::Store(format!("cannot connect to {}: {cause}; {hint}", url.display()))
    })
}
