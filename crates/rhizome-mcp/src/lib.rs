//! Rhizome as a Model Context Protocol server: agents reach one [`Engine`] through tools
//! (search by method family, answer with citations, look up an entity, list and read
//! documents, add a text or a file, delete a document, index status) and resources (the
//! documents and the community reports). Glue only: every tool is an engine call on a
//! blocking thread, every write goes through the index's one [`Writer`].
//!
//! Two transports: stdio ([`serve_stdio`], `rhizome mcp`) and streamable HTTP (feature
//! `http`, [`http_service`], mounted at `/mcp` by `rhizome serve` behind its API keys). A
//! read-only server, or a request whose HTTP extensions carry [`ReadOnlyKey`], neither
//! lists nor runs the tools that write.
//!
//! Files: `tools.rs` (the table: names, descriptions, schemas), `render.rs` (results as
//! text), `resources.rs`, `write.rs` (the writer), `progress.rs` (a write's progress as
//! MCP progress notifications).

mod progress;
mod render;
mod resources;
pub mod tools;
mod write;

use std::sync::Arc;

use base64::Engine as _;
use rhizome_core::{DocFilter, Error};
use rhizome_engine::{text_document, upload_base_name, upload_extension, Engine, QueryRequest, Upload};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

pub use progress::{Step, Tracker};
pub use write::{Add, DirectWriter, WriteFuture, Writer};

/// Marks an HTTP request made with a read-only API key (the server's auth puts it in the
/// request's extensions): write tools are neither listed nor run for it.
#[derive(Debug, Clone, Copy)]
pub struct ReadOnlyKey;

/// Largest file `add_file` takes, decoded.
pub const MAX_FILE_BYTES: usize = 64 << 20;

/// The MCP server over one engine.
#[derive(Clone)]
pub struct RhizomeMcp {
    engine: Arc<Engine>,
    writer: Arc<dyn Writer>,
    read_only: bool,
}

/// A tool's failure, as the model reads it.
type ToolResult = Result<(String, Option<Value>), String>;

impl RhizomeMcp {
    /// `read_only`: no write tool, whoever asks.
    pub fn new(engine: Arc<Engine>, writer: Arc<dyn Writer>, read_only: bool) -> Self {
        RhizomeMcp { engine, writer, read_only }
    }

    fn read_only_for(&self, ctx: &RequestContext<RoleServer>) -> bool {
        if self.read_only {
            return true;
        }
        #[cfg(feature = "http")]
        if let Some(parts) = ctx.extensions.get::<http::request::Parts>() {
            return parts.extensions.get::<ReadOnlyKey>().is_some();
        }
        let _ = ctx;
        false
    }

    /// Run an engine call on a blocking thread; its error becomes the tool's message.
    async fn engine<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Engine) -> rhizome_core::Result<T> + Send + 'static,
    ) -> Result<T, String> {
        let engine = self.engine.clone();
        // The caller's span (an HTTP request's) goes with the call.
        let span = tracing::Span::current();
        match tokio::task::spawn_blocking(move || span.in_scope(|| f(&engine))).await {
            Ok(r) => r.map_err(|e| message(&e)),
            Err(e) => Err(format!("the call stopped: {e}")),
        }
    }

    /// Run tool `name`; a write tells `progress` how far it is.
    async fn run(&self, name: &str, a: Args, progress: Tracker) -> ToolResult {
        match name {
            "search_passages" | "search_graph" | "search_themes" => {
                let method = tools::family_method(name, a.opt_str("method").as_deref())?;
                let mut req = a.query_request(method)?;
                req.retrieve_only = true;
                let out = self.engine(move |e| e.query(&req, None)).await?;
                Ok((render::search(&out), serde_json::to_value(&out).ok()))
            }
            "answer" => {
                let method = a.opt_str("method").unwrap_or_else(|| "auto".into()).parse().map_err(|e: String| e)?;
                let req = a.query_request(method)?;
                let out = self.engine(move |e| e.query(&req, None)).await?;
                Ok((render::answer(&out), serde_json::to_value(&out).ok()))
            }
            "find_entity" => {
                let name = a.str("name")?;
                let depth = a.int("depth", 1, 1, 3)?;
                let max = a.int("max_neighbours", 30, 1, 200)?;
                let (detail, graph) = self
                    .engine(move |e| {
                        let detail = e.entity_named(&name, 10)?;
                        let graph = e.neighbourhood(&detail.entity.id, depth, max + 1)?;
                        Ok((detail, graph))
                    })
                    .await?;
                let json = serde_json::json!({"entity": detail, "neighbourhood": graph});
                Ok((render::entity(&detail, &graph), Some(json)))
            }
            "list_documents" => {
                let search = a.opt_str("search");
                let offset = a.int("offset", 0, 0, usize::MAX)?;
                let limit = a.int("limit", 50, 1, 200)?;
                let page = self.engine(move |e| e.documents(search.as_deref(), offset, limit)).await?;
                Ok((render::documents(&page), serde_json::to_value(&page).ok()))
            }
            "read_document" => {
                let id = a.str("document")?;
                let offset = a.int("offset", 0, 0, usize::MAX)?;
                let max = a.int("max_chars", 20_000, 100, 200_000)?;
                let d = self.engine(move |e| e.document(&id)).await?;
                Ok((render::document(&d, offset, max), None))
            }
            "index_status" if !self.engine.exists() => {
                let s = format!(
                    "Index {}: nothing is indexed yet. add_text or add_file creates it (the server's operator can \
                     also run `rhizome index PATH`).",
                    self.engine.url().display()
                );
                Ok((s, Some(serde_json::json!({"documents": 0, "exists": false}))))
            }
            "index_status" => {
                let (stats, docs, methods, model, llm) = self
                    .engine(|e| {
                        let stats = e.stats()?;
                        let docs = e.documents(None, 0, 1)?.total;
                        let model = e.reader()?.embedding_model()?;
                        Ok((stats, docs, e.methods(), model, e.config().llm.provider.clone()))
                    })
                    .await?;
                let mut s = format!("Index {}: {docs} documents.\n", self.engine.url().display());
                let counts = |m: &std::collections::BTreeMap<String, u64>| {
                    m.iter().filter(|(_, v)| **v > 0).map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
                };
                s.push_str(&format!("Nodes: {}.\nEdges: {}.\n", counts(&stats.nodes), counts(&stats.edges)));
                s.push_str(&format!(
                    "Embedding model: {}. LLM: {llm}.\n\nMethods:\n",
                    model.as_deref().unwrap_or("none yet")
                ));
                for m in &methods {
                    s.push_str(&format!("- {}: {}\n", m.name, m.description));
                }
                let json = serde_json::json!({"documents": docs, "exists": true, "stats": stats, "embedding_model": model,
                    "llm": llm, "methods": methods.iter().map(|m| m.name).collect::<Vec<_>>()});
                Ok((s, Some(json)))
            }
            "add_text" => {
                let title = a.str("title")?;
                let text = a.str("text")?;
                let source = format!("upload:{}", title.trim());
                let doc = text_document(&title, &text, &source, "text").map_err(|e| message(&e))?;
                let out = self.writer.add(Add::Texts(vec![doc]), progress).await.map_err(|e| message(&e))?;
                Ok((render::indexed(&out), Some(out)))
            }
            "add_file" => {
                let add = a.file()?;
                let out = self.writer.add(add, progress).await.map_err(|e| message(&e))?;
                Ok((render::indexed(&out), Some(out)))
            }
            "delete_document" => {
                let doc = a.str("document")?;
                let out = self.writer.delete(doc).await.map_err(|e| message(&e))?;
                Ok((render::deleted(&out), Some(out)))
            }
            other => Err(format!("no tool {other:?}")),
        }
    }
}

/// An engine error as a tool's message: what went wrong and how to fix it.
fn message(e: &Error) -> String {
    e.to_string()
}

/// A tool's arguments, read with messages that name the argument.
struct Args(JsonObject);

impl Args {
    fn opt_str(&self, key: &str) -> Option<String> {
        match self.0.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            _ => None,
        }
    }

    fn str(&self, key: &str) -> Result<String, String> {
        match self.0.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::String(_)) => Err(format!("`{key}` is empty; give it a value")),
            Some(other) => Err(format!("`{key}` must be a string, not {other}")),
            None => Err(format!("`{key}` is missing; it is required")),
        }
    }

    fn int(&self, key: &str, default: usize, min: usize, max: usize) -> Result<usize, String> {
        let v = match self.0.get(key) {
            None | Some(Value::Null) => return Ok(default),
            Some(Value::Number(n)) => n.as_u64().map(|n| n as usize),
            Some(Value::String(s)) => s.trim().parse().ok(),
            _ => None,
        };
        match v {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(format!("`{key}` must be a whole number from {min} to {max}")),
        }
    }

    /// `filter`: a list of KEY=VALUE, or one string of them separated by spaces or commas.
    fn filter(&self) -> Result<DocFilter, String> {
        let specs: Vec<String> = match self.0.get("filter") {
            None | Some(Value::Null) => return Ok(DocFilter::default()),
            Some(Value::String(s)) => rhizome_core::filter::split_list(s),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string).ok_or("`filter` items are strings"))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("`filter` is a list of KEY=VALUE strings, e.g. [\"type=report\"]".into()),
        };
        DocFilter::parse(&specs).map_err(|e| message(&e))
    }

    fn query_request(&self, method: rhizome_engine::Method) -> Result<QueryRequest, String> {
        let mut req = QueryRequest::new(&self.str("query").or_else(|_| self.str("question"))?, method);
        if self.0.contains_key("top_k") {
            req.top_k = Some(self.int("top_k", 5, 1, 100)?);
        }
        req.filter = self.filter()?;
        Ok(req)
    }

    /// `add_file`'s file, saved under its name's extension in a folder of its own.
    fn file(&self) -> Result<Add, String> {
        let name = self.str("name")?;
        let base = upload_base_name(&name).to_string();
        let ext = upload_extension(&base).map_err(|e| message(&e))?;
        let data = self.str("content_base64")?;
        if data.len() > MAX_FILE_BYTES / 3 * 4 + 4 {
            return Err(format!("the file is larger than {} MB; index it with `rhizome index`", MAX_FILE_BYTES >> 20));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| format!("`content_base64` is not base64 ({e}); encode the file's bytes"))?;
        let dir = tempfile::tempdir().map_err(|e| format!("cannot save the file: {e}"))?;
        let path = dir.path().join(format!("upload.{ext}"));
        std::fs::write(&path, bytes).map_err(|e| format!("cannot save the file: {e}"))?;
        Ok(Add::Files { uploads: vec![Upload { name: base, path }], dir })
    }
}

impl ServerHandler for RhizomeMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("rhizome", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Rhizome holds a knowledge graph built from a collection of documents. Search with \
                 search_passages (facts stated in one place), search_graph (questions that join facts, \
                 an entity's connections) or search_themes (the collection as a whole); answer writes a \
                 cited answer. Cite the sources the results give (document, page).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let read_only = self.read_only_for(&context);
        let tools = tools::TOOLS.iter().filter(|t| !(read_only && t.writes)).map(|t| t.tool()).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(spec) = tools::spec(&request.name) else {
            return Err(ErrorData::invalid_params(format!("no tool named {:?}", request.name), None));
        };
        if spec.writes && self.read_only_for(&context) {
            let msg = format!("{} changes the index, and this connection is read-only", spec.name);
            return Ok(CallToolResult::error(vec![ContentBlock::text(msg)]).into());
        }
        let args = Args(request.arguments.unwrap_or_default());
        // A write's progress, when the client asked for it with a progress token.
        let (tracker, notifier) = match context.meta.get_progress_token() {
            Some(token) if spec.writes => {
                let (t, task) = progress::notifier(token, context.peer.clone());
                (t, Some(task))
            }
            _ => (Tracker::none(), None),
        };
        let result = self.run(spec.name, args, tracker).await;
        // The last notification goes before the result.
        if let Some(task) = notifier {
            let _ = task.await;
        }
        Ok(match result {
            Ok((text, json)) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = json;
                r
            }
            Err(msg) => CallToolResult::error(vec![ContentBlock::text(msg)]),
        }
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let list = self.engine(resources::list).await.map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(ListResourcesResult::with_all_items(list))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let result =
            self.engine(move |e| resources::read(e, &uri)).await.map_err(|e| ErrorData::resource_not_found(e, None))?;
        Ok(result.into())
    }
}

/// Serve MCP over stdin and stdout until the client closes them.
pub async fn serve_stdio(server: RhizomeMcp) -> rhizome_core::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::Config(format!("the MCP client did not start a session: {e}")))?;
    running.waiting().await.map_err(|e| Error::Config(format!("the MCP session failed: {e}")))?;
    Ok(())
}

/// The streamable HTTP transport as a tower service (mounted at `/mcp`): each request
/// answered by a fresh handle on `server` (sessions are kept in memory); only the hosts
/// in `allowed_hosts` are served (None: loopback names; empty: any, for a server behind
/// API keys).
#[cfg(feature = "http")]
pub fn http_service(
    server: RhizomeMcp,
    allowed_hosts: Option<Vec<String>>,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    RhizomeMcp,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let mut config = StreamableHttpServerConfig::default();
    if let Some(hosts) = allowed_hosts {
        config = config.with_allowed_hosts(hosts);
    }
    StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config)
}
