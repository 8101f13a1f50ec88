//! The index served from Python: over HTTP (`serve`, as `rhizome serve`, on threads of
//! its own until stopped) and over MCP on stdio (`mcp`, as `rhizome mcp`, until the client
//! closes stdin). Each is in a wheel built with its feature (`full`; `mcp`); without it,
//! the call says how to build one that has it.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use rhizome_core::Error;
use rhizome_engine::Engine;

/// `rhizome serve` over an open index, on threads of its own: the HTTP API, the chat
/// endpoints, the web UI and `/mcp`, until [`Serving::stop`] (only in a wheel built with
/// the server, feature `full`).
#[pyclass(frozen, module = "rhizome._native")]
pub(crate) struct Serving {
    url: String,
    stop: Mutex<Option<std::sync::mpsc::Sender<()>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

#[pymethods]
impl Serving {
    /// `http://HOST:PORT`.
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// Stop taking requests, let a write in progress stop at its next batch boundary, and
    /// wait for the server to end.
    fn stop(&self, py: Python<'_>) {
        if let Some(tx) = self.stop.lock().ok().and_then(|mut s| s.take()) {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            py.detach(|| {
                let _ = t.join();
            });
        }
    }
}

#[cfg(feature = "full")]
pub(crate) fn serve(engine: Arc<Engine>, addr: &str, api_keys: &[String]) -> rhizome_core::Result<Serving> {
    let bad = |why: String| Error::bad_input(format!("addr {addr:?}"), why);
    let addr: std::net::SocketAddr =
        addr.parse().map_err(|e| bad(format!("{e}; write HOST:PORT, e.g. 127.0.0.1:8400")))?;
    let mut opts = rhizome_server::ServerOptions::new(addr);
    opts.keys = rhizome_server::parse_keys(api_keys, None)?;
    // The server's warnings and errors on stderr (RHIZOME_LOG=info adds a line per
    // request), unless the process has set up its logging already.
    let filter = std::env::var("RHIZOME_LOG").unwrap_or_else(|_| "warn".into());
    let _ = rhizome_server::telemetry::init(rhizome_server::telemetry::LogFormat::Text, Some(&filter), None);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<rhizome_core::Result<std::net::SocketAddr>>();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => {
                let _ = ready_tx.send(Err(Error::Config(format!("no async runtime: {e}"))));
                return;
            }
        };
        rt.block_on(async move {
            let server = match rhizome_server::Server::bind(engine, opts).await {
                Ok(s) => s,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            let _ = ready_tx.send(server.local_addr());
            let stopped = async move {
                let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
            };
            let _ = server.run(stopped).await;
        });
    });
    let bound = ready_rx.recv().map_err(|_| Error::Config("the server thread ended before listening".into()))??;
    Ok(Serving { url: format!("http://{bound}"), stop: Mutex::new(Some(stop_tx)), thread: Mutex::new(Some(thread)) })
}

#[cfg(not(feature = "full"))]
pub(crate) fn serve(_engine: Arc<Engine>, _addr: &str, _api_keys: &[String]) -> rhizome_core::Result<Serving> {
    Err(Error::Config(
        "this wheel was built without the server: build it with `maturin build --release --features full`".into(),
    ))
}

/// MCP on this process's stdin and stdout, on a thread of its own; the calling thread
/// waits with the GIL released and looks for Ctrl-C, which ends the session.
#[cfg(feature = "mcp")]
pub(crate) fn mcp(py: Python<'_>, engine: Arc<Engine>, read_only: bool) -> PyResult<()> {
    use std::time::Duration;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let worker = std::thread::spawn(move || -> rhizome_core::Result<()> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Config(format!("no async runtime: {e}")))?;
        let writer = Arc::new(rhizome_mcp::DirectWriter(engine.clone()));
        let server = rhizome_mcp::RhizomeMcp::new(engine, writer, read_only);
        let out = rt.block_on(async move {
            tokio::select! {
                r = rhizome_mcp::serve_stdio(server) => r,
                _ = stop_rx => Ok(()),
            }
        });
        // Stopped by Ctrl-C, stdin's reader may still wait for a line: not waited for.
        rt.shutdown_background();
        out
    });
    let mut stop = Some(stop_tx);
    while !worker.is_finished() {
        py.detach(|| std::thread::sleep(Duration::from_millis(50)));
        if let Err(interrupt) = py.check_signals() {
            if let Some(tx) = stop.take() {
                let _ = tx.send(());
            }
            py.detach(|| {
                let _ = worker.join();
            });
            return Err(interrupt);
        }
    }
    match worker.join() {
        Ok(out) => out.map_err(super::to_py),
        Err(_) => Err(super::RhizomeError::new_err("the MCP server stopped on an internal error")),
    }
}

#[cfg(not(feature = "mcp"))]
pub(crate) fn mcp(_py: Python<'_>, _engine: Arc<Engine>, _read_only: bool) -> PyResult<()> {
    Err(super::to_py(Error::Config(
        "this wheel was built without the MCP server: build it with `maturin build --release --features mcp` \
         (or `--features full`)"
            .into(),
    )))
}
