//! Shared set-up: configuration and the engine, and command dispatch. Everything a
//! command does to an index goes through [`rhizome_engine::Engine`]; the commands parse
//! arguments and print.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use rhizome_core::config::FlagSetting;
use rhizome_core::Config;
use rhizome_engine::{Engine, WriteOptions};
use rhizome_store::LockWait;

use crate::{cmd_communities, cmd_eval, cmd_index, cmd_misc, cmd_query, bench, Cli, Command};

/// Set by Ctrl-C: long operations stop at their next batch boundary.
pub static CANCEL: AtomicBool = AtomicBool::new(false);

pub struct App {
    /// Where the index lives: `store.url`, else `--index`.
    pub store: String,
    /// `--index`: the local directory (also when the index lives in a database).
    pub dir: std::path::PathBuf,
    pub json: bool,
    pub config: Config,
    /// Refuse at once when another process writes the index (`--no-wait`).
    pub no_wait: bool,
}

impl App {
    /// The engine on this index. A write that has to wait for another writer says whom
    /// for (or, with `--no-wait`, is refused before it writes anything).
    pub fn engine(&self) -> Result<Engine> {
        let command: Vec<String> = std::env::args().collect();
        let index = shown(&self.store);
        let write = WriteOptions {
            wait: if self.no_wait { LockWait::No } else { LockWait::Up(None) },
            command: command.join(" "),
            on_wait: Box::new(move |holder| {
                eprintln!(
                    "waiting: index {index} is being written by {holder}; this command goes on when it \
                     finishes (Ctrl-C to stop, or --no-wait to refuse instead of waiting)"
                );
            }),
        };
        Ok(Engine::open(&self.store, self.config.clone(), write)?)
    }

    pub fn progress(&self) -> crate::progress::Bars {
        crate::progress::Bars::new(!self.json)
    }
}

/// The store as messages name it: a store URL without its password.
fn shown(store: &str) -> String {
    rhizome_store::StoreUrl::parse(store).map(|u| u.display()).unwrap_or_else(|_| store.to_string())
}

pub fn run(cli: Cli) -> Result<()> {
    let default_file = Path::new("rhizome.toml");
    let file = cli.config.clone().or_else(|| default_file.exists().then(|| default_file.to_path_buf()));
    // Flags come last: they override file, environment and --set, and are checked with them.
    let flags = flag_settings(&cli);
    let (config, warnings) = Config::load_with_flags(file.as_deref(), std::env::vars(), &cli.sets, &flags)?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let store = if config.store.url.is_empty() { cli.index.display().to_string() } else { config.store.url.clone() };
    let app = App { store, dir: cli.index.clone(), json: cli.json, config, no_wait: cli.no_wait };
    let index = shown(&app.store);
    dispatch(app, cli.command).map_err(|e| match e.downcast::<rhizome_core::Error>() {
        // Damage found during a query, or a busy database, named with the index.
        Ok(core) => anyhow::Error::new(core.with_index(&index)),
        Err(e) => e,
    })
}

fn dispatch(app: App, command: Command) -> Result<()> {
    match command {
        Command::Index { paths, extractor: _, dry_run } => cmd_index::index(app, &paths, dry_run),
        Command::Import { what } => cmd_index::import(app, what),
        // Questions in NFC, as documents are indexed (`rhizome_core::text::nfc`).
        Command::Query { question, method, history, .. } => cmd_query::query(app, &question, &method, history.as_deref()),
        Command::Analyze { question, history } => crate::cmd_analyze::analyze(app, &question, history.as_deref()),
        Command::Eval { questions, method, k, answers, limit } => {
            cmd_eval::eval(app, &questions, &method, &k, answers, limit)
        }
        Command::Communities { force } => cmd_communities::communities(app, force),
        Command::Stats => cmd_misc::stats(app),
        Command::Delete { doc } => cmd_misc::delete(app, &doc),
        Command::Copy { from, to } => crate::cmd_copy::copy(app, from.as_deref(), &to),
        Command::Export { format, out } => crate::cmd_copy::export(app, &format, &out),
        Command::Documents { search, offset, limit } => cmd_misc::documents(app, search.as_deref(), offset, limit),
        Command::Models { what } => cmd_misc::models(app, what),
        Command::Config => {
            print!("{}", app.config.to_toml());
            Ok(())
        }
        Command::Bench { what } => bench::run(app, what),
        Command::Serve { addr, api_keys, max_upload_mb, header_timeout } => {
            crate::cmd_serve::serve(app, addr, &api_keys, max_upload_mb, header_timeout)
        }
    }
}

/// The flags that stand for settings (`--llm-provider`, `index --extractor`, `query
/// --top-k` and the multi-hop flags), as settings for [`Config::load_with_flags`].
fn flag_settings(cli: &Cli) -> Vec<FlagSetting> {
    let mut out = Vec::new();
    for (key, value, flag) in [
        ("store.url", &cli.store, "--store"),
        ("llm.provider", &cli.llm_provider, "--llm-provider"),
        ("llm.base_url", &cli.llm_base_url, "--llm-base-url"),
        ("llm.model", &cli.llm_model, "--llm-model"),
    ] {
        if let Some(v) = value {
            out.push(FlagSetting::new(key, v, flag));
        }
    }
    match &cli.command {
        Command::Index { extractor: Some(x), .. } => out.push(FlagSetting::new("extract.extractor", x, "--extractor")),
        Command::Query { top_k, multihop, .. } => {
            if let Some(k) = top_k {
                out.push(FlagSetting::new("retrieval.top_k", k, "--top-k"));
            }
            out.extend(multihop.settings());
        }
        _ => {}
    }
    out
}

/// Print a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}
