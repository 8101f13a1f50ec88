//! The parts of the replicas test: `rhizome serve` replicas on fixed ports (killed and
//! started again by PID), HAProxy in front of them, and each request's record.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::blocking::{Client, RequestBuilder};
use serde_json::Value;

use crate::support::{rz, shared};

/// One `rhizome serve` over the shared database, with a spool (`--index DIR`) of its own.
pub struct Replica {
    pub name: String,
    pub port: u16,
    dir: PathBuf,
    store: String,
    /// Variables set for this replica only.
    env: Vec<(String, String)>,
    child: Option<(Child, BufReader<ChildStdout>)>,
}

impl Replica {
    /// Start `rNAME` with its files in `dir` (the last component names it).
    pub fn start(dir: &Path, store: &str) -> Replica {
        Replica::start_with(dir, store, &[])
    }

    /// [`Replica::start`] with variables of its own.
    pub fn start_with(dir: &Path, store: &str, env: &[(&str, &str)]) -> Replica {
        std::fs::create_dir_all(dir).unwrap();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut r = Replica { name, port: fixed_port(), dir: dir.to_path_buf(), store: store.into(), env, child: None };
        r.restart();
        r
    }

    /// Start (again) on the same port and spool; returns once it listens.
    pub fn restart(&mut self) {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join("serve.log")).unwrap();
        let mut c = rz(&self.dir);
        c.env("RHIZOME_STORE_URL", &self.store)
            .env_remove("RHIZOME_API_KEYS")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .args(["serve", "--addr", &format!("127.0.0.1:{}", self.port)])
            .stdout(Stdio::piped())
            .stderr(log);
        let mut child = c.spawn().expect("start rhizome serve");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        if !line.starts_with("listening on") {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} did not start: {line:?}; its log:\n{}", self.name, self.log());
        }
        self.child = Some((child, out));
    }

    /// SIGTERM (a stop); returns when it has exited.
    pub fn stop(&mut self) {
        let (mut child, _) = self.child.take().expect("running");
        // SAFETY: kill(2) on the PID of our own child, not yet waited for.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let _ = child.wait();
    }

    /// SIGKILL; returns when it died.
    pub fn kill(&mut self) -> Instant {
        let (mut child, _) = self.child.take().expect("running");
        // SAFETY: kill(2) on the PID of our own child, not yet waited for.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let at = Instant::now();
        let _ = child.wait();
        at
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("serve.log")).unwrap_or_default()
    }
}

/// A free port below the ephemeral range (Linux's starts at 32768), for a replica that is
/// killed and started again on it. An ephemeral port may be taken as the source port of an
/// outgoing connection while its replica is down, and a connection from HAProxy to a port
/// nobody listens on can then connect to itself (TCP simultaneous open) and read its own
/// request back as a bad answer.
fn fixed_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = 20_000 + (std::process::id() % 1000) as u16 * 12;
    loop {
        let port = base + NEXT.fetch_add(1, Ordering::Relaxed) % 12_000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Some((mut c, _)) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// HAProxy in front of the replicas: round robin, health checks on /health every 0.3 s, a
/// replica taken out at its first failed connection (`observe layer4`), a request retried on
/// another replica only when it could not be sent (HAProxy's default `retry-on
/// conn-failure`, with `option redispatch`: a request that reached a replica is never sent
/// twice), and each answer naming its replica in `X-Replica`.
pub struct Balancer {
    pub port: u16,
    child: Child,
}

fn haproxy() -> PathBuf {
    let found = ["/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    found.unwrap_or_else(|| panic!("no haproxy: scripts/install-test-deps installs Debian's (apt-get install haproxy)"))
}

impl Balancer {
    pub fn start(dir: &Path, replicas: &[Replica]) -> Balancer {
        std::fs::create_dir_all(dir).unwrap();
        let port = rhizome_testdb::free_port();
        let servers: String =
            replicas.iter().map(|r| format!("    server {} 127.0.0.1:{} check\n", r.name, r.port)).collect();
        let cfg = format!(
            "global\n    maxconn 2000\n    log stderr format raw local0\n\
             defaults\n    mode http\n    log global\n    option httplog\n    timeout connect 2s\n    timeout client 600s\n    timeout server 600s\n\
             \x20   timeout queue 30s\n    retries 3\n    option redispatch 1\n\
             \x20   http-reuse never\n\
             frontend api\n    bind 127.0.0.1:{port}\n    default_backend replicas\n\
             backend replicas\n    balance roundrobin\n    option httpchk GET /health\n\
             \x20   http-check expect status 200\n    default-server inter 300ms fall 2 rise 2 observe layer4 error-limit 1 on-error mark-down\n\
             \x20   http-response set-header X-Replica %[srv_name]\n{servers}"
        );
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, cfg).unwrap();
        let log = std::fs::File::create(dir.join("haproxy.log")).unwrap();
        let mut child = Command::new(haproxy())
            .arg("-f")
            .arg(&path)
            .arg("-db")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start haproxy");
        rhizome_testdb::wait_for_port(port, Some(&mut child), Duration::from_secs(30), "haproxy");
        let lb = Balancer { port, child };
        // Until every replica has answered through it (health checks passed).
        let http = Client::new();
        let want: BTreeSet<String> = replicas.iter().map(|r| r.name.clone()).collect();
        let mut seen = BTreeSet::new();
        let t = Instant::now();
        while seen != want {
            if let Ok(r) = http.get(lb.url("/health")).send() {
                if let Some(n) = r.headers().get("x-replica").and_then(|v| v.to_str().ok()) {
                    seen.insert(n.to_string());
                }
            }
            assert!(t.elapsed() < Duration::from_secs(30), "replicas seen through haproxy: {seen:?} of {want:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        lb
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Send a request made by `make`, recording it.
    pub fn send(
        &self,
        _http: &Client,
        kind: &'static str,
        doc: Option<String>,
        make: impl FnOnce() -> RequestBuilder,
    ) -> Record {
        let start = Instant::now();
        let r = make().send();
        let mut rec = Record { kind, doc, start, end: start, status: None, error: None, replica: None, body: None };
        match r {
            Ok(r) => {
                rec.status = Some(r.status().as_u16());
                rec.replica = r.headers().get("x-replica").and_then(|v| v.to_str().ok()).map(str::to_string);
                match r.text() {
                    Ok(t) => rec.body = serde_json::from_str(&t).ok().or(Some(Value::String(t))),
                    Err(e) => rec.error = Some(format!("reading the body: {e}")),
                }
            }
            Err(e) => {
                let mut msg = e.to_string();
                let mut src = std::error::Error::source(&e);
                while let Some(x) = src {
                    msg.push_str(&format!(": {x}"));
                    src = x.source();
                }
                rec.error = Some(msg);
            }
        }
        rec.end = Instant::now();
        rec
    }

    /// Every document source in the index, through the balancer.
    pub fn sources(&self, http: &Client) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        loop {
            let v: Value = http
                .get(self.url(&format!("/documents?limit=1000&offset={}", out.len())))
                .send()
                .unwrap()
                .json()
                .unwrap();
            let docs = v["documents"].as_array().cloned().unwrap_or_default();
            if docs.is_empty() {
                return out;
            }
            out.extend(docs.iter().filter_map(|d| d["source"].as_str().map(str::to_string)));
        }
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One request as a client saw it.
#[derive(Debug, Clone)]
pub struct Record {
    pub kind: &'static str,
    /// The uploaded file's name.
    pub doc: Option<String>,
    pub start: Instant,
    pub end: Instant,
    pub status: Option<u16>,
    /// A transport error (no answer).
    pub error: Option<String>,
    /// The replica that answered, as HAProxy named it.
    pub replica: Option<String>,
    pub body: Option<Value>,
}

impl Record {
    pub fn ok(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s)) && self.error.is_none()
    }

    /// The answer a request gets when its replica dies under it: HAProxy's 502 (or 504),
    /// or no answer.
    pub fn lost_connection(&self) -> bool {
        self.error.is_some() || matches!(self.status, Some(502 | 504))
    }

    pub fn describe(&self, t0: Instant) -> String {
        format!(
            "{} {:?} from {:.2} s to {:.2} s via {:?}: {:?} {:?} {}",
            self.kind,
            self.doc,
            self.start.duration_since(t0).as_secs_f64(),
            self.end.duration_since(t0).as_secs_f64(),
            self.replica,
            self.status,
            self.error,
            self.body.as_ref().map(|b| b.to_string()).unwrap_or_default().chars().take(300).collect::<String>()
        )
    }
}

/// `n` MuSiQue passages after the first `skip`, each text once, as (file name, text).
pub fn passages(skip: usize, n: usize) -> Vec<(String, String)> {
    let corpus: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(shared().join("musique/musique_train_corpus.json")).unwrap())
            .unwrap();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, p) in corpus.iter().enumerate() {
        let text = format!("{}\n\n{}\n", p["title"].as_str().unwrap(), p["text"].as_str().unwrap());
        if !seen.insert(text.clone()) || i < skip {
            continue;
        }
        out.push((format!("p{i:04}.txt"), text));
        if out.len() == n {
            break;
        }
    }
    assert_eq!(out.len(), n, "the corpus has fewer than {n} distinct passages after {skip}");
    out
}

/// Run `c` to its end, killed (and the test failed) if it takes longer than `within`.
pub fn output_within(mut c: Command, within: Duration) -> std::process::Output {
    let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start rhizome");
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let t = Instant::now();
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                if t.elapsed() > within {
                    // SAFETY: kill(2) on the PID of our own child, not yet reaped.
                    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        })
    };
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(!watchdog.join().unwrap(), "still running after {within:?}");
    out
}
