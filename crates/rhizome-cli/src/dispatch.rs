//! From the command line to a command: the configuration (file, environment, `--set` and
//! the flags that stand for settings), the [`App`] every command is given, and the command
//! run. The commands stand below this file and above `app.rs`.

use std::path::Path;

use anyhow::Result;
use rhizome_core::config_load::FlagSetting;
use rhizome_core::Config;

use crate::app::{shown, App};
use crate::{
    cmd_admin, cmd_analyze, cmd_communities, cmd_copy, cmd_documents, cmd_eval, cmd_index, cmd_misc, cmd_query,
    cmd_serve, Cli, Command,
};

pub fn run(cli: Cli) -> Result<()> {
    let default_file = Path::new("rhizome.toml");
    let file = cli.config.clone().or_else(|| default_file.exists().then(|| default_file.to_path_buf()));
    // Flags come last: they override file, environment and --set, and are checked with them.
    let flags = flag_settings(&cli);
    let sections = rhizome_engine::settings();
    let (config, warnings) =
        Config::load_with_sections(&sections, file.as_deref(), std::env::vars(), &cli.sets, &flags)?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let mut store =
        if config.store.url.is_empty() { cli.index.display().to_string() } else { config.store.url.clone() };
    if let Some(ws) = &cli.workspace {
        if matches!(cli.command, Command::Serve(_) | Command::Workspace { .. } | Command::Keys { .. }) {
            anyhow::bail!(
                "--workspace {ws}: `rhizome serve` serves every workspace (at /w/NAME/...), `rhizome workspace` \
                 manages them and `rhizome keys` makes keys for any of them (`keys add --workspaces NAMES`); \
                 leave --workspace out"
            );
        }
        let url = rhizome_store::StoreUrl::parse(&store)?.workspace(ws)?;
        if ws != rhizome_store::DEFAULT_WORKSPACE
            && !url.exists()
            && !matches!(cli.command, Command::Index { .. } | Command::Import { .. })
        {
            anyhow::bail!("workspace {ws:?}: no such workspace; `rhizome workspace create {ws}` makes it");
        }
        if let rhizome_store::StoreUrl::Dir(d) = &url {
            std::fs::create_dir_all(d)?;
        }
        store = url.to_url();
    }
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
        Command::Query { question, method, history, filter, .. } => {
            cmd_query::query(app, &question, &method, history.as_deref(), &filter)
        }
        Command::Analyze { question, history } => cmd_analyze::analyze(app, &question, history.as_deref()),
        Command::Eval { questions, method, k, answers, limit } => {
            cmd_eval::eval(app, &questions, &method, &k, answers, limit)
        }
        Command::Communities { force } => cmd_communities::communities(app, force),
        Command::Stats => cmd_misc::stats(app),
        Command::Delete { doc } => cmd_misc::delete(app, &doc),
        Command::Copy { from, to } => cmd_copy::copy(app, from.as_deref(), &to),
        Command::Export { format, out } => cmd_copy::export(app, &format, &out),
        Command::Documents { search, offset, limit } => cmd_documents::documents(app, search.as_deref(), offset, limit),
        Command::Describe { force } => cmd_documents::describe(app, force),
        Command::Models { what } => cmd_misc::models(app, what),
        Command::Config => {
            print!("{}", app.config.to_toml());
            Ok(())
        }
        Command::Bench { what } => bench(app, what),
        Command::Serve(flags) => cmd_serve::serve(app, flags),
        Command::Workspace { what } => cmd_admin::workspace(app, what),
        Command::Keys { what } => cmd_admin::keys(app, what),
        #[cfg(feature = "mcp")]
        Command::Mcp { read_only } => cmd_serve::mcp(app, read_only),
    }
}

/// The flags that stand for settings (`--llm-provider`, `index --extractor`, `query
/// --top-k` and the multi-hop flags), as settings for [`Config::load_with_sections`].
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

/// `rhizome bench ...` (crates/rhizome-bench) on this index and configuration. A store or
/// settings error stays one, so that [`run`] names the index in it.
fn bench(app: App, what: rhizome_bench::BenchCmd) -> Result<()> {
    let bench = rhizome_bench::Bench { store: app.store, config: app.config, json: app.json, no_wait: app.no_wait };
    rhizome_bench::run(bench, what).map_err(|e| match e {
        rhizome_bench::Error::Core(core) => anyhow::Error::new(core),
        e => anyhow::Error::new(e),
    })
}
