//! One writer at a time on a FalkorDB store: the key `rhizome:{graph}:lock`, taken with
//! `SET NX PX` and holding `pid`, start time and `command @ host`. A thread renews it
//! every few seconds while it is held; when the holder dies it expires after
//! [`TTL_MS`] (at once for a writer on the same machine, whose process is seen gone), so a
//! killed writer blocks the next one for at most that long. A second
//! writer reads the key to say whom it waits for (the waiting and the messages are [`crate::lock`]'s).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rhizome_core::Result;

use super::{Conn, FalkorUrl, Value};
use crate::lock::{self, hostname, Contended, Holder, LockWait};

/// The lock's time to live; renewed every third of it.
pub const TTL_MS: u64 = 30_000;

const RENEW: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/// The held lock; released when dropped.
pub struct FalkorLock {
    stop: Arc<AtomicBool>,
    renewer: Option<JoinHandle<()>>,
    conn: Conn,
    key: Vec<u8>,
    value: Vec<u8>,
}

fn parse_holder(v: &Value) -> Holder {
    Holder::from_text(&v.as_str().unwrap_or_default())
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
    pub fn acquire(
        url: &FalkorUrl,
        command: &str,
        wait: LockWait,
        on_wait: &mut dyn FnMut(&Holder),
    ) -> Result<FalkorLock> {
        let conn = url.connect()?;
        let key = key_of(url);
        let me = Holder::me(command, hostname());
        // The holder's text, made unique to this taking by a last line of nanoseconds.
        let value = format!(
            "{}{}",
            me.to_text(),
            SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
        )
        .into_bytes();
        let mut contended = Key { conn, key: &key, value: &value, host: me.host };
        lock::acquire(&mut contended, url.display().into(), wait, on_wait)?;
        let conn = contended.conn;
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
                            let _ =
                                c.cmd(&[b"EVAL", RENEW.as_bytes(), b"1", &key, &value, TTL_MS.to_string().as_bytes()]);
                        }
                    }
                })
                .ok()
        };
        Ok(FalkorLock { stop, renewer, conn, key, value })
    }
}

/// The lock key, as a writer about to take it sees it.
struct Key<'a> {
    conn: Conn,
    key: &'a [u8],
    value: &'a [u8],
    host: String,
}

impl Key<'_> {
    fn set(&mut self) -> Result<bool> {
        let ttl = TTL_MS.to_string();
        Ok(!matches!(self.conn.ok(&[b"SET", self.key, self.value, b"NX", b"PX", ttl.as_bytes()])?, Value::Nil))
    }
}

impl Contended for Key<'_> {
    fn try_take(&mut self) -> Result<Option<Holder>> {
        if self.set()? {
            return Ok(None);
        }
        let raw = self.conn.ok(&[b"GET", self.key])?;
        let h = parse_holder(&raw);
        // A holder on this machine whose process is gone (killed): its lock need not
        // wait for the expiry.
        let here = !self.host.is_empty() && h.host == self.host;
        if here && h.pid != 0 && !std::path::Path::new(&format!("/proc/{}", h.pid)).exists() {
            if let Value::Bytes(b) = &raw {
                self.conn.ok(&[b"EVAL", RELEASE.as_bytes(), b"1", self.key, b])?;
            }
            if self.set()? {
                return Ok(None);
            }
        }
        Ok(Some(h))
    }

    fn poll(&self) -> Duration {
        Duration::from_millis(100)
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
