//! A small RESP2 client over one TCP connection ([`Conn`]): commands, pipelines and
//! `GRAPH.QUERY` in FalkorDB's compact form, read into [`super::reply`]'s values and cells.
//!
//! Our own client rather than the `redis` crate: we need only a handful of commands,
//! pipelining and binary-safe values, and a reply parser that never panics on odd input
//! (lengths are checked, nesting is bounded); ~250 lines build in a second, where the
//! crate and its dependencies cost build time on every cold build.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use rhizome_core::{Error, Result};

use super::reply::{cell, Cell, Value};

/// A connection to one Redis server; `url` (the store URL) names it in errors.
pub struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    pub url: String,
}

const MAX_DEPTH: usize = 64;

impl Conn {
    pub fn connect(host: &str, port: u16, url: &str) -> Result<Conn> {
        let refused = |e: std::io::Error| {
            Error::Store(format!(
                "cannot connect to {url}: {e}; is FalkorDB running? Start it with `redis-server --port {port} \
                 --loadmodule /path/to/falkordb.so` (or `docker run -p {port}:6379 falkordb/falkordb`), or fix \
                 --store / RHIZOME_STORE_URL"
            ))
        };
        let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(refused)?.collect();
        let mut last = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, Duration::from_secs(5)) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    let writer = s.try_clone().map_err(refused)?;
                    return Ok(Conn { reader: BufReader::with_capacity(1 << 16, s), writer, url: url.to_string() });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(refused(last.unwrap_or_else(|| std::io::Error::other("no address"))))
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::Store(format!("{}: connection lost ({e}); is the FalkorDB server still running?", self.url))
    }

    fn encode(buf: &mut Vec<u8>, args: &[&[u8]]) {
        buf.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a);
            buf.extend_from_slice(b"\r\n");
        }
    }

    /// Send commands in one write and read their replies (a pipeline).
    pub fn pipeline(&mut self, cmds: &[Vec<Vec<u8>>]) -> Result<Vec<Value>> {
        let mut buf = Vec::new();
        for c in cmds {
            let args: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            Self::encode(&mut buf, &args);
        }
        self.writer.write_all(&buf).map_err(|e| self.io(e))?;
        let mut out = Vec::with_capacity(cmds.len());
        for _ in cmds {
            out.push(self.read(0)?);
        }
        Ok(out)
    }

    /// One command; an error reply is returned as [`Value::Error`].
    pub fn cmd(&mut self, args: &[&[u8]]) -> Result<Value> {
        let mut buf = Vec::new();
        Self::encode(&mut buf, args);
        self.writer.write_all(&buf).map_err(|e| self.io(e))?;
        self.read(0)
    }

    /// One command whose error reply is an [`Error`].
    pub fn ok(&mut self, args: &[&[u8]]) -> Result<Value> {
        match self.cmd(args)? {
            Value::Error(e) => Err(self.server_error(&e)),
            v => Ok(v),
        }
    }

    pub fn server_error(&self, e: &str) -> Error {
        if e.contains("unknown command") && e.to_ascii_lowercase().contains("graph.") {
            return Error::Store(format!(
                "the server at {} has no GRAPH module: start redis-server with --loadmodule falkordb.so \
                 (or run the falkordb/falkordb image)",
                self.url
            ));
        }
        if e.starts_with("NOAUTH") {
            return Error::Store(format!(
                "{}: the server wants a password ({e}); this rhizome connects without one",
                self.url
            ));
        }
        Error::Store(format!("{}: {e}", self.url))
    }

    fn line(&mut self) -> Result<Vec<u8>> {
        let mut l = Vec::new();
        self.reader.read_until(b'\n', &mut l).map_err(|e| self.io(e))?;
        if l.is_empty() {
            return Err(self.io(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed by the server")));
        }
        while matches!(l.last(), Some(b'\n' | b'\r')) {
            l.pop();
        }
        Ok(l)
    }

    fn read(&mut self, depth: usize) -> Result<Value> {
        let l = self.line()?;
        let odd =
            |what: &str| Error::Store(format!("{}: unexpected reply ({what}); is this a Redis server?", self.url));
        if depth > MAX_DEPTH {
            return Err(odd("nested too deep"));
        }
        let (&t, rest) = l.split_first().ok_or_else(|| odd("empty line"))?;
        let text = String::from_utf8_lossy(rest).into_owned();
        let num = || text.trim().parse::<i64>().map_err(|_| odd(&format!("bad length {text:?}")));
        match t {
            b'+' => Ok(Value::Bytes(rest.to_vec())),
            b'-' => Ok(Value::Error(text)),
            b':' => Ok(Value::Int(num()?)),
            b',' => Ok(Value::Bytes(rest.to_vec())),
            b'_' => Ok(Value::Nil),
            b'$' => {
                let n = num()?;
                if n < 0 {
                    return Ok(Value::Nil);
                }
                if n > 1 << 31 {
                    return Err(odd("bulk string too long"));
                }
                let mut b = vec![0u8; n as usize + 2];
                self.reader.read_exact(&mut b).map_err(|e| self.io(e))?;
                b.truncate(n as usize);
                Ok(Value::Bytes(b))
            }
            b'*' | b'%' => {
                let n = num()?;
                if n < 0 {
                    return Ok(Value::Nil);
                }
                let n = if t == b'%' { n * 2 } else { n } as usize;
                let mut v = Vec::with_capacity(n.min(4096));
                for _ in 0..n {
                    v.push(self.read(depth + 1)?);
                }
                Ok(Value::Array(v))
            }
            _ => Err(odd(&format!("type byte {:?}", t as char))),
        }
    }

    /// `GRAPH.QUERY` (or `GRAPH.RO_QUERY` when `read_only`) in compact form: the rows.
    pub fn query(&mut self, graph: &str, q: &str, read_only: bool) -> Result<Vec<Vec<Cell>>> {
        let cmd: &[u8] = if read_only { b"GRAPH.RO_QUERY" } else { b"GRAPH.QUERY" };
        let reply = self.cmd(&[cmd, graph.as_bytes(), q.as_bytes(), b"--compact"])?;
        self.rows(reply, q)
    }

    /// Rows of a compact `GRAPH.QUERY` reply.
    pub fn rows(&self, reply: Value, q: &str) -> Result<Vec<Vec<Cell>>> {
        let short = || q.chars().take(160).collect::<String>();
        match reply {
            Value::Error(e) => {
                if e.contains("unknown command") {
                    return Err(self.server_error(&e));
                }
                Err(Error::Store(format!("{}: query failed: {e} (query: {}…)", self.url, short())))
            }
            Value::Array(parts) => {
                if let Some(Value::Error(e)) = parts.last() {
                    return Err(Error::Store(format!("{}: query failed: {e} (query: {}…)", self.url, short())));
                }
                if parts.len() < 3 {
                    return Ok(Vec::new());
                }
                let rows = match &parts[1] {
                    Value::Array(rows) => rows,
                    _ => return Ok(Vec::new()),
                };
                // Every row has exactly as many cells as the header has columns (missing
                // ones are null), so callers may index the columns they asked for.
                let ncols = match &parts[0] {
                    Value::Array(h) => h.len(),
                    _ => 0,
                };
                Ok(rows
                    .iter()
                    .map(|r| {
                        let mut cells: Vec<Cell> = match r {
                            Value::Array(cells) => cells.iter().take(ncols).map(|c| cell(c, 0)).collect(),
                            _ => Vec::new(),
                        };
                        cells.resize(ncols, Cell::Null);
                        cells
                    })
                    .collect())
            }
            _ => Err(Error::Store(format!("{}: unexpected reply to GRAPH.QUERY", self.url))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that answers each command with the next canned reply.
    fn fake(replies: &'static [&'static [u8]]) -> Conn {
        use std::io::Read as _;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            for r in replies {
                let _ = s.read(&mut buf);
                let _ = s.write_all(r);
            }
        });
        Conn::connect("127.0.0.1", port, "falkordb://fake/g").unwrap()
    }

    #[test]
    fn odd_replies_are_errors_not_panics() {
        let mut c = fake(&[b"$-1\r\n", b"*2\r\n:1\r\n?x\r\n"]);
        assert_eq!(c.cmd(&[b"GET", b"k"]).unwrap(), Value::Nil);
        assert!(c.cmd(&[b"GET", b"k"]).unwrap_err().to_string().contains("unexpected reply"));
        let mut c = fake(&[b"$99999999999\r\n"]);
        assert!(c.cmd(&[b"GET", b"k"]).is_err());
        let mut c = fake(&[b":abc\r\n"]);
        assert!(c.cmd(&[b"GET", b"k"]).is_err());
        let mut c = fake(&[b"*3\r\n*1\r\n*2\r\n:1\r\n$1\r\na\r\n*1\r\n*2\r\n:1\r\n$1\r\nb\r\n*0\r\n"]);
        // A compact reply whose rows are short of the header's columns: padded with nulls;
        // a row that is not a typed pair reads as `Other`.
        let rows = c.query("g", "RETURN 1", true).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].len(), 1);
        let mut c = fake(&[b"-ERR unknown command 'GRAPH.QUERY'\r\n"]);
        assert!(c.query("g", "RETURN 1", false).unwrap_err().to_string().contains("no GRAPH module"));
        let mut c = fake(&[]);
        assert!(c.cmd(&[b"PING"]).unwrap_err().to_string().contains("connection lost"));
    }
}
