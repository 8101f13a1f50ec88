//! Raw HTTP/1.1 over TCP for the hostile-client tests: requests no well-behaved client
//! library would send (huge heads, endless bodies, half-sent headers), the server's
//! resident memory read from /proc, and the file-descriptor limit raised.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// `host:port` of a base URL `http://host:port`.
pub fn host_port(base: &str) -> String {
    base.trim_start_matches("http://").trim_end_matches('/').to_string()
}

/// Resident memory of a process, in MiB (VmRSS of /proc/PID/status).
pub fn rss_mib(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = s
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok());
    kb.unwrap_or(f64::NAN) / 1024.0
}

/// The largest RSS of `pid` seen while the guard lives, sampled every 10 ms.
pub struct PeakRss {
    stop: Arc<AtomicBool>,
    peak_kb: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PeakRss {
    pub fn watch(pid: u32) -> PeakRss {
        let (stop, peak_kb) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
        let thread = {
            let (stop, peak_kb) = (stop.clone(), peak_kb.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let kb = (rss_mib(pid) * 1024.0) as u64;
                    peak_kb.fetch_max(kb, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        };
        PeakRss { stop, peak_kb, thread: Some(thread) }
    }

    /// Stop sampling; the peak in MiB.
    pub fn peak_mib(mut self) -> f64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        self.peak_kb.load(Ordering::Relaxed) as f64 / 1024.0
    }
}

/// Raise this process's soft limit on open files to its hard limit; returns the limit.
pub fn raise_nofile() -> u64 {
    // SAFETY: getrlimit/setrlimit on a struct owned here.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut r);
        r.rlim_cur = r.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut r);
        r.rlim_cur as u64
    }
}

/// What came back on a raw connection.
#[derive(Debug)]
pub struct Reply {
    /// The status of the response, if one came before the connection ended.
    pub status: Option<u16>,
    /// Head and body as text.
    pub text: String,
    /// Bytes of the request body written before the answer (or the end).
    pub written: u64,
}

impl Reply {
    /// The JSON body, if the response had one.
    pub fn json(&self) -> Option<serde_json::Value> {
        let body = self.text.split_once("\r\n\r\n")?.1;
        let body = if self.text.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            // One chunk is all an error body takes: "<hex>\r\n<data>\r\n0\r\n\r\n".
            body.split_once("\r\n").map(|(_, rest)| rest).unwrap_or(body)
        } else {
            body
        };
        let end = body.rfind('}')?;
        serde_json::from_str(&body[..=end]).ok()
    }

    /// 4xx with an `{error, hint}` body.
    pub fn is_client_error_json(&self) -> bool {
        let v = self.json();
        matches!(self.status, Some(400..=499))
            && v.as_ref().is_some_and(|v| {
                v["error"].as_str().is_some_and(|s| !s.is_empty()) && v["hint"].as_str().is_some_and(|s| !s.is_empty())
            })
    }
}

fn read_reply(mut s: &TcpStream) -> (Option<u16>, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 << 10];
    loop {
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                // A whole error response is small: stop once its body has arrived.
                if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&buf[..p]).to_ascii_lowercase();
                    let len = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok());
                    let body = buf.len() - p - 4;
                    if len.is_some_and(|n| body >= n) || (head.contains("chunked") && buf.ends_with(b"0\r\n\r\n")) {
                        break;
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text.strip_prefix("HTTP/1.1 ").and_then(|r| r.get(..3)).and_then(|c| c.parse().ok());
    (status, text)
}

/// Send `request` whole (as far as the server reads it), then read the answer.
pub fn send(addr: &str, request: &[u8]) -> Reply {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let r = {
        let w = s.try_clone().unwrap();
        let request = request.to_vec();
        std::thread::spawn(move || {
            let mut w = &w;
            let mut done = 0;
            for piece in request.chunks(64 << 10) {
                if w.write_all(piece).is_err() {
                    break;
                }
                done += piece.len() as u64;
            }
            done
        })
    };
    let (status, text) = read_reply(&s);
    let _ = s.shutdown(std::net::Shutdown::Both);
    Reply { status, text, written: r.join().unwrap() }
}

/// Send `head` (which ends with a blank line), then a body of `total` bytes made by
/// `fill` — as chunks of the chunked encoding when `chunked` — until the server answers
/// or closes; nothing of it is kept in memory. The reply and how much was written.
pub fn stream(
    addr: &str,
    head: &str,
    total: u64,
    chunked: bool,
    fill: impl Fn(u64, &mut [u8]) + Send + 'static,
) -> Reply {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let answered = Arc::new(AtomicBool::new(false));
    let writer = {
        let (w, answered, head) = (s.try_clone().unwrap(), answered.clone(), head.to_string());
        std::thread::spawn(move || {
            let mut w = &w;
            if w.write_all(head.as_bytes()).is_err() {
                return 0;
            }
            // As curl does: with Expect: 100-continue, wait a moment for the server's word.
            if head.to_ascii_lowercase().contains("expect: 100-continue") {
                let t = std::time::Instant::now();
                while !answered.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(1) {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            let mut buf = vec![0u8; 256 << 10];
            let mut sent = 0u64;
            while sent < total && !answered.load(Ordering::Relaxed) {
                let n = (total - sent).min(buf.len() as u64) as usize;
                fill(sent, &mut buf[..n]);
                let ok = if chunked {
                    w.write_all(format!("{n:x}\r\n").as_bytes()).is_ok()
                        && w.write_all(&buf[..n]).is_ok()
                        && w.write_all(b"\r\n").is_ok()
                } else {
                    w.write_all(&buf[..n]).is_ok()
                };
                if !ok {
                    break;
                }
                sent += n as u64;
            }
            if chunked && sent == total {
                let _ = w.write_all(b"0\r\n\r\n");
            }
            sent
        })
    };
    let (status, text) = read_reply(&s);
    answered.store(true, Ordering::Relaxed);
    let _ = s.shutdown(std::net::Shutdown::Both);
    Reply { status, text, written: writer.join().unwrap() }
}
