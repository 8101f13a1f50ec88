//! The real `rhizome serve` for end-to-end tests: started on a free loopback port, killed
//! by its PID when the guard is dropped (also when the test fails), with helpers to talk
//! to it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::blocking::{Client, RequestBuilder, Response};
use serde_json::Value;

/// A running server; dropping it kills the process.
pub struct Server {
    child: Child,
    /// Kept open: the server's stdout is not closed under it.
    _stdout: BufReader<std::process::ChildStdout>,
    pub base: String,
    pub http: Client,
    /// Sent as `Authorization: Bearer` by [`Server::get`] and [`Server::post_json`].
    pub key: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `rhizome serve` on `index` (MiniLM) with `args` and `env`, on 127.0.0.1:0; returns
/// once it answers /health.
pub fn start(index: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
    start_cmd(serve_cmd(index, args, env))
}

/// The command [`start`] runs, to adjust (stderr, limits) before [`start_cmd`].
pub fn serve_cmd(index: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = super::rz(index);
    c.args(["serve", "--addr", "127.0.0.1:0"]).args(args).env_remove("RHIZOME_API_KEYS");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Start a `rhizome serve` command (stderr as the command has it: inherited by default).
pub fn start_cmd(mut c: Command) -> Server {
    let mut child = c.stdout(Stdio::piped()).spawn().expect("start rhizome serve");
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut line).unwrap();
    let base = line.trim().strip_prefix("listening on ").unwrap_or_else(|| {
        let _ = child.kill();
        panic!("rhizome serve did not start: {line:?} (its stderr is above)")
    });
    let server = Server {
        base: base.to_string(),
        child,
        _stdout: stdout,
        http: Client::builder().timeout(Duration::from_secs(600)).build().unwrap(),
        key: None,
    };
    let t = Instant::now();
    while server.http.get(server.url("/health")).send().map(|r| r.status().as_u16()).ok() != Some(200) {
        assert!(t.elapsed() < Duration::from_secs(60), "no /health within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

/// `rhizome serve` on `index` with a loopback OpenAI-compatible LLM that answers every
/// prompt with `reply`; keep the mock alive as long as the server.
pub fn start_with_llm(index: &Path, reply: &'static str) -> (rhizome_llm_testing::MockOpenAi, Server) {
    start_with_responder(index, &[], Box::new(move |_req: &Value| reply.to_string()))
}

/// `rhizome serve` with `args`, its LLM the loopback OpenAI-compatible server answering
/// with `responder`.
pub fn start_with_responder(
    index: &Path,
    args: &[&str],
    responder: Box<rhizome_llm_testing::Responder>,
) -> (rhizome_llm_testing::MockOpenAi, Server) {
    let llm = rhizome_llm_testing::MockOpenAi::with_responder(responder).unwrap();
    let base = llm.base_url();
    let mut all = vec!["--llm-provider", "openai", "--llm-model", "mock-model", "--llm-base-url", &base];
    all.extend_from_slice(args);
    let s = start(index, &all, &[("RHIZOME_LLM_API_KEY", "sk-loopback")]);
    (llm, s)
}

impl Server {
    /// Send SIGTERM and wait for the process to exit (at most `within`).
    pub fn terminate(&mut self, within: Duration) -> std::process::ExitStatus {
        // SAFETY: kill(2) on the PID of our own child, which has not been waited for.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let t = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(t.elapsed() < within, "rhizome serve still running {within:?} after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn auth(&self, r: RequestBuilder) -> RequestBuilder {
        match &self.key {
            Some(k) => r.bearer_auth(k),
            None => r,
        }
    }

    pub fn get(&self, path: &str) -> Response {
        self.auth(self.http.get(self.url(path))).send().unwrap()
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Response {
        self.auth(self.http.post(self.url(path)).json(body)).send().unwrap()
    }

    pub fn delete(&self, path: &str) -> Response {
        self.auth(self.http.delete(self.url(path))).send().unwrap()
    }

    /// GET, expecting 200 and JSON.
    pub fn get_json(&self, path: &str) -> Value {
        ok_json(self.get(path))
    }

    /// Upload files (multipart; each with its own name) and return the job id.
    pub fn upload(&self, files: &[(String, Vec<u8>)]) -> u64 {
        let r = self.auth(self.http.post(self.url("/documents")).multipart(form(files))).send().unwrap();
        let v = expect(r, 202);
        v["job_id"].as_u64().unwrap()
    }

    /// Poll a job until it is done (panics when it failed or takes over 10 minutes).
    pub fn wait_job(&self, id: u64) -> Value {
        let t = Instant::now();
        loop {
            let v = self.get_json(&format!("/jobs/{id}"));
            match v["state"].as_str() {
                Some("done") => return v,
                Some("failed") => panic!("job {id} failed: {v:#}"),
                _ => {}
            }
            assert!(t.elapsed() < Duration::from_secs(600), "job {id} not done in 10 minutes: {v:#}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

pub fn form(files: &[(String, Vec<u8>)]) -> reqwest::blocking::multipart::Form {
    let mut form = reqwest::blocking::multipart::Form::new();
    for (i, (name, bytes)) in files.iter().enumerate() {
        form = form
            .part(format!("file{i}"), reqwest::blocking::multipart::Part::bytes(bytes.clone()).file_name(name.clone()));
    }
    form
}

/// Every file of `dir`, sorted by name, as (name, bytes).
pub fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths.iter().map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(p).unwrap())).collect()
}

/// The response's JSON, after checking its status.
pub fn expect(r: Response, status: u16) -> Value {
    let got = r.status().as_u16();
    let text = r.text().unwrap();
    assert_eq!(got, status, "expected {status}, got {got}: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

pub fn ok_json(r: Response) -> Value {
    expect(r, 200)
}

/// An error response: status, and `{error, hint}` both non-empty; returns `error`.
pub fn expect_error(r: Response, status: u16) -> String {
    let v = expect(r, status);
    let (e, h) = (v["error"].as_str().unwrap_or(""), v["hint"].as_str().unwrap_or(""));
    assert!(!e.is_empty() && !h.is_empty(), "not an {{error, hint}} body: {v}");
    e.to_string()
}

/// Server-sent events of a response, as (event, data as JSON or string), until it ends.
pub fn sse(r: Response) -> Vec<(String, Value)> {
    assert_eq!(r.status().as_u16(), 200);
    let mut out = Vec::new();
    let (mut event, mut data) = (String::new(), String::new());
    for line in BufReader::new(r).lines() {
        let line = line.unwrap();
        if line.is_empty() {
            if !data.is_empty() {
                let v = serde_json::from_str(&data).unwrap_or(Value::String(data.clone()));
                out.push((std::mem::take(&mut event), v));
            }
            data.clear();
            event.clear();
        } else if let Some(e) = line.strip_prefix("event: ") {
            event = e.to_string();
        } else if let Some(d) = line.strip_prefix("data: ").or_else(|| line.strip_prefix("data:")) {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(d);
        }
    }
    out
}
