//! `rhizome serve`: the engine behind the HTTP API of `rhizome-server`; `rhizome mcp`: the
//! engine behind the Model Context Protocol on stdio (`rhizome-mcp`).

use std::net::SocketAddr;

use anyhow::{Context as _, Result};
use rhizome_server::{Server, ServerOptions};

use crate::app::App;

// How `rhizome serve` logs and where its traces go (its flags' help is the CLI's).
#[derive(clap::Args)]
pub struct Logs {
    /// Log lines on stderr: `text`, or `json` (one object a line, with the request's
    /// id, method and route). The level comes from RHIZOME_LOG (e.g. debug; default info).
    #[arg(long, env = "RHIZOME_LOG_FORMAT", default_value = "text", value_name = "FORMAT")]
    pub log_format: String,
    /// Send traces to this OpenTelemetry collector (OTLP/HTTP, e.g. http://127.0.0.1:4318;
    /// spans go to URL/v1/traces). Also OTEL_EXPORTER_OTLP_ENDPOINT or
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTEL_SERVICE_NAME names the service (rhizome).
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

/// Logs on stderr and traces to the configured collector, for the life of the guard.
fn telemetry(logs: &Logs) -> Result<(rhizome_server::telemetry::Telemetry, Option<String>)> {
    use rhizome_server::telemetry::{init, LogFormat, OtlpConfig};
    let format: LogFormat = logs.log_format.parse()?;
    let mut otlp = OtlpConfig::resolve(logs.otlp_endpoint.as_deref(), |k| std::env::var(k).ok())?;
    if otlp.is_some() && logs.otlp_endpoint.is_none() && !rhizome_server::telemetry::OTLP_BUILT {
        // A variable set for other services does not stop this build from serving.
        eprintln!("warning: OTEL_EXPORTER_OTLP_* is set, but this build of rhizome has no OTLP exporter (feature `otlp`): no traces are sent");
        otlp = None;
    }
    let traces = otlp.as_ref().map(|c| c.traces_url.clone());
    let guard = init(format, std::env::var("RHIZOME_LOG").ok().as_deref(), otlp)?;
    Ok((guard, traces))
}

// `rhizome serve`'s flags, flattened into its subcommand (the help is the variant's).
#[derive(clap::Args)]
pub struct ServeFlags {
    /// Address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8400")]
    pub addr: SocketAddr,
    /// An API key clients must send (repeatable; `KEY:ro` is read-only). Also
    /// RHIZOME_API_KEYS=KEY1,KEY2:ro. Without a key the server listens on loopback only.
    #[arg(long = "api-key", value_name = "KEY")]
    pub api_keys: Vec<String>,
    /// Keys with names, roles and workspaces (`rhizome keys add`), read again when the
    /// file changes. Default: keys.json in the --index directory, when it exists; else, on
    /// a PostgreSQL store, the database's key table, which replicas share.
    #[arg(long, env = "RHIZOME_KEYS_FILE", value_name = "FILE")]
    pub keys_file: Option<std::path::PathBuf>,
    /// Seconds without requests after which a workspace is closed and its memory
    /// released (it opens again on its next request).
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    pub workspace_idle: f64,
    /// Largest request body, uploads included, in MiB.
    #[arg(long, default_value_t = 64)]
    pub max_upload_mb: usize,
    /// Seconds a client has to send a request's head (from opening the connection, or
    /// from the previous answer on a kept-alive one) before the connection is closed.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub header_timeout: f64,
    #[command(flatten)]
    pub logs: Logs,
}

pub fn serve(app: App, flags: ServeFlags) -> Result<()> {
    let ServeFlags { addr, api_keys, keys_file, workspace_idle, max_upload_mb, header_timeout, logs } = flags;
    if !(header_timeout > 0.0 && header_timeout <= 3600.0) {
        anyhow::bail!("--header-timeout {header_timeout}: give seconds between 0 and 3600, e.g. 30");
    }
    if !(workspace_idle > 0.0 && workspace_idle <= 86400.0 * 30.0) {
        anyhow::bail!("--workspace-idle {workspace_idle}: give seconds between 0 and 2592000, e.g. 600");
    }
    let (telemetry, traces) = telemetry(&logs)?;
    let json = logs.log_format.trim().eq_ignore_ascii_case("json");
    let env_keys = std::env::var("RHIZOME_API_KEYS").ok();
    let keys = rhizome_server::parse_keys(&api_keys, env_keys.as_deref())?;
    // The index's own key file is used when it exists, else a PostgreSQL store's key table.
    let key_store = crate::cmd_admin::key_store(&app, keys_file, false)?;
    // Read now, so that a damaged file is named before anything is loaded (and the
    // address checked against the keys the table holds).
    let stored = match &key_store {
        Some(s) => s.records()?.len(),
        None => 0,
    };
    let table = matches!(key_store, Some(rhizome_server::KeyStore::Table(_)));
    // Refuse a public address without a key before loading anything.
    rhizome_server::check_bind(&addr, !keys.is_empty() || (key_store.is_some() && (!table || stored > 0)))?;
    let (n_keys, n_ro) = (keys.len(), keys.iter().filter(|k| k.read_only()).count());
    let engine = rhizome_server::launch::engine(&app.store, app.config.clone(), app.no_wait, "rhizome serve")?;
    let mut opts = ServerOptions::new(addr);
    opts.keys = keys;
    opts.key_store = key_store.clone();
    opts.workspace_idle = std::time::Duration::from_secs_f64(workspace_idle);
    opts.max_body_bytes = max_upload_mb.max(1) << 20;
    opts.header_timeout = std::time::Duration::from_secs_f64(header_timeout);
    let open_files = rhizome_server::launch::raise_open_files();
    // Accepted uploads wait beside the index (or in --index for a database store) until
    // their job ends: a job cut short by a crash runs again at the next start.
    let local = match rhizome_store::StoreUrl::parse(&app.store)? {
        rhizome_store::StoreUrl::Dir(d) => d,
        _ => app.dir.clone(),
    };
    opts.spool = Some(local.join("uploads-pending"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    let index = app.store.clone();
    let result = rt.block_on(async {
        let server = Server::bind(engine.clone(), opts).await?;
        let at = server.local_addr()?;
        // One line on stdout, for scripts and tests that asked for port 0.
        println!("listening on http://{at}");
        let mut auth = if n_keys == 0 { "no API key".to_string() } else { format!("{n_keys} API key(s), {n_ro} read-only") };
        match &key_store {
            Some(s) if table && stored == 0 && n_keys == 0 => {
                auth.push_str(&format!(" yet, loopback only until a key is added to {}", s.describe()))
            }
            Some(s) => auth.push_str(&format!(" and {}", s.describe())),
            None if n_keys == 0 => auth.push_str(" (loopback only)"),
            None => {}
        }
        let traces = traces.as_deref().map_or(String::new(), |t| format!("; traces to {t}"));
        let started = format!("index {index}; {auth}; up to {open_files} open files{traces}; API docs at http://{at}/docs; Ctrl-C to stop");
        // Text logs keep the plain status lines; JSON logs have every line an object.
        if json {
            tracing::info!(addr = %at, "rhizome serve: {started}");
        } else {
            eprintln!("rhizome serve: {started}");
        }
        server.run(rhizome_server::shutdown_signal()).await?;
        if json {
            tracing::info!("rhizome serve: stopped");
        } else {
            eprintln!("rhizome serve: stopped");
        }
        Ok::<_, rhizome_core::Error>(())
    });
    // The engine's LLM runtime must be dropped outside the server's runtime.
    drop(rt);
    drop(engine);
    // Queued spans are sent before the process ends.
    drop(telemetry);
    Ok(result?)
}

/// `rhizome mcp`: one MCP session on stdin/stdout (stdout carries only the protocol;
/// messages go to stderr). The process is the index's writer while an add or delete runs.
#[cfg(feature = "mcp")]
pub fn mcp(app: App, read_only: bool) -> Result<()> {
    let engine = rhizome_server::launch::engine(&app.store, app.config.clone(), app.no_wait, "rhizome mcp")?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    let writer = std::sync::Arc::new(rhizome_mcp::DirectWriter(engine.clone()));
    let server = rhizome_mcp::RhizomeMcp::new(engine.clone(), writer, read_only);
    eprintln!("rhizome mcp: index {}{}; speaking MCP on stdio", app.store, if read_only { " (read-only)" } else { "" });
    let result = rt.block_on(rhizome_mcp::serve_stdio(server));
    // The engine's LLM runtime must be dropped outside this runtime.
    drop(rt);
    drop(engine);
    Ok(result?)
}
