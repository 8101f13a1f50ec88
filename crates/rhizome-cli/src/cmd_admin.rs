//! `rhizome workspace list|create|delete` and `rhizome keys add|list|revoke`: the
//! workspaces beside an index and the key file a server reads, managed from the shell
//! (a running server sees both at once: it reads the key file again when it changes, and
//! opens a new workspace on its first request).

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;
use rhizome_server::{KeyStore, Role};
use rhizome_store::StoreUrl;
use serde_json::json;

use crate::app::{print_json, App};

#[derive(Subcommand)]
pub enum WorkspaceCmd {
    /// The workspaces beside the index (`default` is the index itself).
    List,
    /// Make an empty workspace (its own index: a directory, schema or graph).
    Create { name: String },
    /// Delete a workspace and everything indexed in it.
    Delete {
        name: String,
        /// Needed: the deletion cannot be undone.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Subcommand)]
pub enum KeysCmd {
    /// Make a key; it is printed once and kept only as its SHA-256.
    Add {
        /// A name for the key (logs name it, never the key).
        name: String,
        /// read (queries, chat, browsing), write (and uploads, deletions) or admin (and
        /// workspaces; with every workspace, keys and /metrics).
        #[arg(long, default_value = "read")]
        role: String,
        /// The workspaces it reaches, comma-separated (default: every one, `*`).
        #[arg(long, value_delimiter = ',', value_name = "NAMES")]
        workspaces: Vec<String>,
        /// The key file (default: keys.json in the --index directory when it exists, else
        /// on a PostgreSQL store the database's key table, shared by replicas, else
        /// keys.json).
        #[arg(long, env = "RHIZOME_KEYS_FILE")]
        keys_file: Option<PathBuf>,
    },
    /// The keys: names, roles, workspaces.
    List {
        #[arg(long, env = "RHIZOME_KEYS_FILE")]
        keys_file: Option<PathBuf>,
    },
    /// Remove a key: a server reading the file refuses it from its next request on (the
    /// key table: within a second).
    Revoke {
        name: String,
        #[arg(long, env = "RHIZOME_KEYS_FILE")]
        keys_file: Option<PathBuf>,
    },
}

/// The key file of this index: `--keys-file`, else `keys.json` in the `--index` directory.
pub fn key_file(app: &App, given: Option<PathBuf>) -> PathBuf {
    given.unwrap_or_else(|| app.dir.join("keys.json"))
}

/// Where `rhizome keys` and `rhizome serve` keep keys: `--keys-file`, else `keys.json` in
/// the `--index` directory when it exists, else (PostgreSQL) the store's key table, else
/// (`make_file`) that `keys.json`.
pub fn key_store(app: &App, given: Option<PathBuf>, make_file: bool) -> Result<Option<KeyStore>> {
    let own = key_file(app, None);
    Ok(KeyStore::resolve(given, own, &app.store, make_file)?)
}

fn keys_of(app: &App, given: Option<PathBuf>) -> Result<KeyStore> {
    key_store(app, given, true)?.ok_or_else(|| anyhow::anyhow!("no key store"))
}

pub fn workspace(app: App, what: WorkspaceCmd) -> Result<()> {
    let base = StoreUrl::parse(&app.store)?;
    match what {
        WorkspaceCmd::List => {
            let mut names = vec![rhizome_store::DEFAULT_WORKSPACE.to_string()];
            names.extend(base.workspaces()?);
            if app.json {
                return print_json(&json!({ "workspaces": names }));
            }
            for n in names {
                println!("{n}");
            }
        }
        WorkspaceCmd::Create { name } => {
            if name == rhizome_store::DEFAULT_WORKSPACE || base.workspaces()?.contains(&name) {
                println!("workspace {name} exists");
                return Ok(());
            }
            let url = base.prepare_workspace(&name)?;
            rhizome_engine::Engine::at(url.clone(), app.config.clone(), Default::default())?.create_empty()?;
            println!("workspace {name} created: {}", url.display());
        }
        WorkspaceCmd::Delete { name, yes } => {
            if !yes {
                anyhow::bail!("deleting workspace {name} removes everything indexed in it: add --yes to do it");
            }
            if name != rhizome_store::DEFAULT_WORKSPACE && !base.workspaces()?.contains(&name) {
                anyhow::bail!("workspace {name:?}: no such workspace (`rhizome workspace list` lists them)");
            }
            base.drop_workspace(&name)?;
            println!("workspace {name} deleted");
        }
    }
    Ok(())
}

pub fn keys(app: App, what: KeysCmd) -> Result<()> {
    match what {
        KeysCmd::Add { name, role, workspaces, keys_file } => {
            let file = keys_of(&app, keys_file)?;
            let role: Role = role.parse()?;
            let key = file.add(&name, role, workspaces)?;
            let record = file.records()?.into_iter().find(|r| r.name == name);
            let scope = record.map(|r| r.workspaces.join(",")).unwrap_or_default();
            if app.json {
                return print_json(&json!({ "name": name, "key": key, "role": role, "workspaces": scope }));
            }
            // The key alone on stdout, for scripts; the rest on stderr.
            println!("{key}");
            eprintln!("key {name} ({role}, workspaces {scope}) added to {}; it is shown only now", file.describe());
        }
        KeysCmd::List { keys_file } => {
            let file = keys_of(&app, keys_file)?;
            let records = file.records()?;
            if app.json {
                let list: Vec<_> = records
                    .iter()
                    .map(
                        |r| json!({ "name": r.name, "role": r.role, "workspaces": r.workspaces, "created": r.created }),
                    )
                    .collect();
                return print_json(&json!({ "keys": list }));
            }
            for r in records {
                println!("{:<24} {:<6} {}", r.name, r.role.to_string(), r.workspaces.join(","));
            }
        }
        KeysCmd::Revoke { name, keys_file } => {
            let file = keys_of(&app, keys_file)?;
            if !file.revoke(&name)? {
                anyhow::bail!("key {name:?}: no such key in {} (`rhizome keys list`)", file.describe());
            }
            println!("key {name} revoked");
        }
    }
    Ok(())
}
