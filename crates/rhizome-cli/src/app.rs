//! Shared set-up: configuration, store and embedder, and command dispatch.

use std::path::Path;

use anyhow::{Context as _, Result};
use rhizome_core::config::FlagSetting;
use rhizome_core::{Config, StoreRead, StoreWrite};
use rhizome_core::Embedder;
use rhizome_embed::{E5Embedder, MiniLmEmbedder};
use rhizome_store::{LockWait, SqliteStore};

use crate::{cmd_communities, cmd_eval, cmd_index, cmd_misc, cmd_query, bench, Cli, Command};

pub struct App {
    pub cli_index: std::path::PathBuf,
    pub json: bool,
    pub config: Config,
    /// Refuse at once when another process writes the index (`--no-wait`).
    pub no_wait: bool,
}

impl App {
    /// The index for reading: no lock, the last committed state even while a writer works.
    pub fn open_reader(&self) -> Result<SqliteStore> {
        Ok(SqliteStore::open(&self.cli_index, false)?)
    }

    /// The index for writing, holding its writer lock: when another process writes it,
    /// say who and wait for it (or refuse at once with `--no-wait`) before writing anything.
    pub fn open_writer(&self, create: bool) -> Result<SqliteStore> {
        let command: Vec<String> = std::env::args().collect();
        let wait = if self.no_wait { LockWait::No } else { LockWait::Up(None) };
        let index = self.cli_index.display().to_string();
        Ok(SqliteStore::open_writer(&self.cli_index, create, &command.join(" "), wait, &mut |holder| {
            eprintln!(
                "waiting: index {index} is being written by {holder}; this command goes on when it \
                 finishes (Ctrl-C to stop, or --no-wait to refuse instead of waiting)"
            );
        })?)
    }

    /// An embedder matching the index: with `embed.model = auto`, the index's own model;
    /// an explicit model the index does not hold is refused (vectors are never mixed).
    pub fn embedder_for(&self, store: &SqliteStore) -> Result<Box<dyn Embedder>> {
        let held = store.embedding_model()?;
        if let Some(m) = &held {
            let wanted = &self.config.embed.model;
            if wanted != "auto" && m != wanted {
                anyhow::bail!(
                    "index {} holds vectors of {m}, but embed.model is {wanted}; use --set embed.model={m} \
                     (or auto), or index into a new --index directory",
                    self.cli_index.display(),
                );
            }
        }
        load_embedder(&self.config, held.as_deref())
    }

    pub fn progress(&self) -> crate::progress::Bars {
        crate::progress::Bars::new(!self.json)
    }
}

/// The embedder named by `embed.model` (all-MiniLM-L6-v2 or multilingual-e5-small; `auto`:
/// `held`, the model of the index at hand, else the default), loaded from the model cache
/// with the configured batch size.
pub fn load_embedder(config: &Config, held: Option<&str>) -> Result<Box<dyn Embedder>> {
    let dir = rhizome_embed::models_dir();
    let b = config.embed.batch_size;
    let name = match config.embed.model.as_str() {
        "auto" => held.unwrap_or(rhizome_core::config::DEFAULT_EMBED_MODEL),
        explicit => explicit,
    };
    Ok(match name {
        rhizome_embed::MINILM_MODEL_ID => {
            let path = rhizome_embed::require(&rhizome_embed::MINILM, &dir)?;
            Box::new(MiniLmEmbedder::load(&path)?.with_batch_size(b))
        }
        rhizome_embed::E5_MODEL_ID => {
            let path = rhizome_embed::require(&rhizome_embed::models::E5_SMALL, &dir)?;
            Box::new(E5Embedder::load(&path)?.with_batch_size(b))
        }
        _ => rhizome_embed::load_embedder(name, &dir).with_context(|| {
            format!("embed.model = {name:?} (see `rhizome models list`)")
        })?,
    })
}

/// Record the embedder in a store (refusing a mismatch) before writing vectors.
pub fn bind_embedder(store: &mut SqliteStore, e: &dyn Embedder) -> Result<()> {
    store.set_embedding_model(e.model_id(), e.dim())?;
    Ok(())
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
    let app = App { cli_index: cli.index.clone(), json: cli.json, config, no_wait: cli.no_wait };
    match cli.command {
        Command::Index { paths, extractor: _, dry_run } => cmd_index::index(app, &paths, dry_run),
        Command::Import { what } => cmd_index::import(app, what),
        // Questions in NFC, as documents are indexed (`rhizome_core::text::nfc`).
        Command::Query { question, method, history, .. } => {
            let question = rhizome_core::text::nfc(&question).into_owned();
            let question = crate::cmd_analyze::resolve_follow_up(&app, &question, history.as_deref())?;
            cmd_query::query(app, &question, &method)
        }
        Command::Analyze { question, history } => {
            let question = rhizome_core::text::nfc(&question).into_owned();
            crate::cmd_analyze::analyze(app, &question, history.as_deref())
        }
        Command::Eval { questions, method, k, answers, limit } => {
            cmd_eval::eval(app, &questions, &method, &k, answers, limit)
        }
        Command::Communities { force } => cmd_communities::communities(app, force),
        Command::Stats => cmd_misc::stats(app),
        Command::Delete { doc } => cmd_misc::delete(app, &doc),
        Command::Models { what } => cmd_misc::models(app, what),
        Command::Config => {
            print!("{}", app.config.to_toml());
            Ok(())
        }
        Command::Bench { what } => bench::run(app, what),
        Command::Serve { addr, api_keys, max_upload_mb } => crate::cmd_serve::serve(app, addr, &api_keys, max_upload_mb),
    }
}

/// The flags that stand for settings (`--llm-provider`, `index --extractor`, `query
/// --top-k` and the multi-hop flags), as settings for [`Config::load_with_flags`].
fn flag_settings(cli: &Cli) -> Vec<FlagSetting> {
    let mut out = Vec::new();
    for (key, value, flag) in [
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
