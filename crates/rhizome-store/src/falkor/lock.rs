//! One writer at a time on a FalkorDB store: the key `rhizome:{graph}:lock`, taken with
//! `SET NX PX` and holding `pid`, start time and `command @ host`. A thread renews it
//! every few seconds while it is held; when the holder dies it expires after
//! [`TTL_MS`] (at once for a writer on the same machine, whose process is seen gone), so a
//! killed writer blocks the next one for at most that long. A second
//! writer reads the key to say whom it waits for (the messages of [`crate::lock`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rhizome_core::{Error, Result};

use super::{Conn, FalkorUrl, Value};
use crate::lock::{Holder, LockWait};

/// The lock's time to live; renewed every third of it.
pub const TTL_MS: u64 = 30_000;

const RENEW: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/// The held lock; released when dropped.
pub struct FalkorLock {
    stop: Arc<AtomicBool>,
    renewer: Option<JoinHandle<()>>,
    conn: Conn,
    key: Vec<u8>,
    value: Vec<u8>,
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn parse_holder(v: &Value) -> Holder {
    let text = v.as_str().unwrap_or_default();
    let mut lines = text.lines();
    let pid = lines.next().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
    let since = lines.next().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
    let line = lines.next().unwrap_or("");
    // The third line is "COMMAND @ HOST".
    let (command, host) = match line.rsplit_once(" @ ") {
        Some((c, h)) => (c.to_string(), h.to_string()),
        None => (line.to_string(), String::new()),
    };
    Holder { pid, host, command, since }
}

fn key_of(url: &FalkorUrl) -> Vec<u8> {
    format!("rhizome:{}:lock", url.graph).into_bytes()
}

/// Who holds the writer lock of `url`, if anybody.
pub fn holder(url: &FalkorUrl) -> Result<Option<Holder>> {
    let mut c = url.connect()?;
    Ok(match c.ok(&[b"GET", &key_of(url)])? {
        Value::Nil => None,
        v => Some(parse_holder(&v)),
    })
}

impl FalkorLock {
    pub fn acquire(url: &FalkorUrl, command: &str, wait: LockWait, on_wait: &mut dyn FnMut(&Holder)) -> Result<FalkorLock> {
        let mut conn = url.connect()?;
        let key = key_of(url);
        let one_line: String = command.chars().map(|c| if c.is_control() { ' ' } else { c }).take(200).collect();
        let value = format!("{}\n{}\n{} @ {}\n{}", std::process::id(), now_secs(), one_line, hostname(),
            SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)).into_bytes();
        let ttl = TTL_MS.to_string();
        let host = hostname();
        let try_take = |conn: &mut Conn| -> Result<Option<Holder>> {
            if !matches!(conn.ok(&[b"SET", &key, &value, b"NX", b"PX", ttl.as_bytes()])?, Value::Nil) {
                return Ok(None);
            }
            let raw = conn.ok(&[b"GET", &key])?;
            let h = parse_holder(&raw);
            // A holder on this machine whose process is gone (killed): its lock need not
            // wait for the expiry.
            let here = !host.is_empty() && h.host == host;
            if here && h.pid != 0 && !std::path::Path::new(&format!("/proc/{}", h.pid)).exists() {
                if let Value::Bytes(b) = &raw {
                    conn.ok(&[b"EVAL", RELEASE.as_bytes(), b"1", &key, b])?;
                }
                if !matches!(conn.ok(&[b"SET", &key, &value, b"NX", b"PX", ttl.as_bytes()])?, Value::Nil) {
                    return Ok(None);
                }
            }
            Ok(Some(h))
        };
        let busy = |h: &Holder| Error::Busy {
            path: url.display().into(),
            msg: format!("{h} is writing it; wait for it to finish (or run again without --no-wait to wait), then run this command again"),
        };
        if let Some(h) = try_take(&mut conn)? {
            match wait {
                LockWait::No => return Err(busy(&h)),
                LockWait::Up(limit) => {
                    on_wait(&h);
                    let start = Instant::now();
                    let mut last;
                    loop {
                        std::thread::sleep(Duration::from_millis(100));
                        match try_take(&mut conn)? {
                            None => break,
                            Some(h) => last = h,
                        }
                        if limit.is_some_and(|l| start.elapsed() >= l) {
                            return Err(busy(&last));
                        }
                    }
                }
            }
        }
        // Renew while held, on a connection of its own.
        let stop = Arc::new(AtomicBool::new(false));
        let renewer = {
            let (stop, url, key, value) = (stop.clone(), url.clone(), key.clone(), value.clone());
            std::thread::Builder::new()
                .name("falkordb-lock".into())
                .spawn(move || {
                    let Ok(mut c) = url.connect() else { return };
                    let step = Duration::from_millis(100);
                    let mut since = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(step);
                        if since.elapsed() >= Duration::from_millis(TTL_MS / 3) {
                            since = Instant::now();
                            let _ = c.cmd(&[b"EVAL", RENEW.as_bytes(), b"1", &key, &value, TTL_MS.to_string().as_bytes()]);
                        }
                    }
                })
                .ok()
        };
        Ok(FalkorLock { stop, renewer, conn, key, value })
    }
}

impl Drop for FalkorLock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.renewer.take() {
            let _ = h.join();
        }
        let _ = self.conn.cmd(&[b"EVAL", RELEASE.as_bytes(), b"1", &self.key, &self.value]);
    }
}
