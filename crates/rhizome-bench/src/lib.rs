//! Benchmarks that print figures: `rhizome bench ...`. Each compares with a baseline
//! measured in the same run (shared machines are noisy: compare ratios, not milliseconds).
//! The command line (`BenchCmd`) lives here with the code it drives; the CLI hands over
//! the index and settings ([`Bench`]).
//!
//! Layout: `common` (the shared [`Bench`], errors, printing) below one file per command:
//! `ingest`, `embedders`, `retrieval`, `communities`, `large_file`, `serve`, `load`,
//! `backends`, `llm`, `formats`, `filter`, `scale`.

mod backends;
mod common;
mod communities;
mod embedders;
mod filter;
mod formats;
mod ingest;
mod large_file;
mod llm;
mod load;
mod retrieval;
mod scale;
mod serve;

use std::path::PathBuf;

use clap::Subcommand;

pub use common::{Bench, Error, Result};

#[derive(Subcommand)]
pub enum BenchCmd {
    /// Index a corpus into a temporary index; report passages/s and peak memory.
    Ingest {
        corpus: PathBuf,
        /// Passages embedded one at a time for the baseline.
        #[arg(long, default_value_t = 200)]
        baseline_sample: usize,
    },
    /// Every embedding model on one corpus in one run: passages/s and dense-only
    /// Recall@2/@5 of a question set.
    Embedders {
        /// Corpus file: [{title,text}] (e.g. musique_train_corpus.json).
        corpus: PathBuf,
        /// Questions on that corpus (MuSiQue / HotpotQA format).
        questions: PathBuf,
        /// Passages embedded one at a time for the per-model baseline.
        #[arg(long, default_value_t = 50)]
        baseline_sample: usize,
    },
    /// Questions asked with a document filter against the same questions without it,
    /// per method, in the same run: p50/p95 of each and the ratio.
    Filter {
        /// Questions file (MuSiQue / HotpotQA format).
        questions: PathBuf,
        /// The filter, as `rhizome query --filter` takes it (repeat for more).
        #[arg(long = "filter", value_name = "KEY=VALUE", required = true)]
        filter: Vec<String>,
        /// Methods to time, comma-separated (default: basic,hippo).
        #[arg(long, value_delimiter = ',')]
        methods: Vec<String>,
        /// Questions used.
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Per-method retrieval latency p50/p95 on the index (question embedding reported
    /// apart), as ratios to `basic` in the same run.
    Retrieval {
        /// Questions file (MuSiQue / HotpotQA format).
        questions: PathBuf,
        /// Methods to time, comma-separated (default: all but auto).
        #[arg(long, value_delimiter = ',')]
        methods: Vec<String>,
        /// Questions used.
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Leiden vs the Louvain baseline (time, modularity) and hierarchical Leiden on the
    /// index's entity graph, median of --repeat runs.
    Communities {
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// Largest leaf cluster of the hierarchy.
        #[arg(long, default_value_t = 10)]
        max_cluster_size: usize,
    },
    /// One large text file (1, 5 and 20 MB of a corpus's passages) indexed by a child
    /// process each: time and peak memory, against the whole file as one batch (before).
    LargeFile {
        /// Corpus file whose passages fill the files (e.g. musique_train_corpus.json).
        corpus: PathBuf,
        /// File sizes in MB, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [1.0, 5.0, 20.0])]
        sizes: Vec<f64>,
        /// Largest file also indexed as one batch for the baseline.
        #[arg(long, default_value_t = 5.0)]
        baseline_max_mb: f64,
    },
    /// The HTTP server on an existing index, in this process on 127.0.0.1:0: queries/s
    /// and p50/p95 at 1, 4 and 16 concurrent clients per method, against the same
    /// questions asked of the engine directly.
    Serve {
        /// Questions file (MuSiQue / HotpotQA format).
        questions: PathBuf,
        /// Methods, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = ["basic".to_string(), "hippo".to_string()])]
        methods: Vec<String>,
        /// Concurrent clients, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [1usize, 4, 16])]
        clients: Vec<usize>,
        /// Questions used (each level asks each of them `--rounds` times, spread over its
        /// clients).
        #[arg(long, default_value_t = 64)]
        limit: usize,
        /// Times each level asks every question (nothing is remembered between asks: each
        /// is the whole work again). More rounds, steadier figures.
        #[arg(long, default_value_t = 1)]
        rounds: usize,
        /// Log as `rhizome serve --log-format` does (text or json, on stderr; level from
        /// RHIZOME_LOG), to measure what logging costs. Default: no logging.
        #[arg(long, value_name = "FORMAT")]
        log_format: Option<String>,
        /// Export spans to this OTLP/HTTP endpoint, as `rhizome serve --otlp-endpoint` does.
        #[arg(long, value_name = "URL")]
        otlp_endpoint: Option<String>,
    },
    /// Concurrent clients against the HTTP server (in this process) for a while, mixing
    /// queries of every method, chat, reads, uploads and deletions; then checks that every
    /// acknowledged upload not deleted is there and nothing else, and that the stats equal
    /// a fresh index of those documents. Prints requests, errors, p50/p95 per kind and RSS
    /// over time. The index must be empty (it is seeded from the corpus).
    Load {
        /// Corpus whose passages are uploaded: a JSON list of {title, text}.
        corpus: PathBuf,
        /// Questions file (MuSiQue / HotpotQA format).
        questions: PathBuf,
        #[arg(long, default_value_t = 16)]
        clients: usize,
        /// How long the clients run, in seconds.
        #[arg(long, default_value_t = 600.0)]
        seconds: f64,
        /// Resident memory sampled every this many seconds.
        #[arg(long, default_value_t = 30.0)]
        sample_secs: f64,
        /// Seed of the clients' choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// One import and the same questions on every store backend given, in one run: import
    /// time and query p50/p95 as ratios to SQLite (embedding cached after a warm-up, so
    /// the figures are the store's part).
    Backends {
        /// HippoRAG OpenIE results JSON (e.g. the MuSiQue one in ../shared/data/musique).
        openie: PathBuf,
        /// Questions on that corpus (MuSiQue / HotpotQA format).
        questions: PathBuf,
        /// An empty PostgreSQL database: postgres://USER@HOST:PORT/DB.
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// An empty FalkorDB graph: falkordb://HOST:PORT/GRAPH.
        #[arg(long, value_name = "URL")]
        falkordb: Option<String>,
        /// Methods, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = ["basic".to_string(), "hippo".to_string()])]
        methods: Vec<String>,
        /// Questions used.
        #[arg(long, default_value_t = 64)]
        limit: usize,
    },
    /// Indexes of growing size from copies of a HippoRAG OpenIE corpus (entities renamed
    /// per copy, vectors derived from the base corpus's, batches written straight to the
    /// store): per size, indexing rate, store size, graph load time, resident memory of
    /// `rhizome serve`, and p50/p95 per method at each --top-k. The index must be empty.
    Scale {
        /// HippoRAG OpenIE results JSON (e.g. the MuSiQue one in ../shared/data/musique).
        openie: PathBuf,
        /// Questions on that corpus (MuSiQue / HotpotQA format), rewritten for one copy.
        questions: PathBuf,
        /// Index sizes in chunks, comma-separated (the index grows from one to the next).
        #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000, 300_000, 1_000_000])]
        sizes: Vec<usize>,
        /// Methods, comma-separated.
        #[arg(long, value_delimiter = ',',
            default_values_t = ["basic", "local", "hippo", "multihop", "tog"].map(String::from))]
        methods: Vec<String>,
        /// Passages returned, comma-separated: every method is timed at each.
        #[arg(long, value_delimiter = ',', default_values_t = [5usize, 8])]
        top_k: Vec<usize>,
        /// Questions used.
        #[arg(long, default_value_t = 30)]
        limit: usize,
        /// Chunks per written batch.
        #[arg(long, default_value_t = 2000)]
        batch: usize,
        /// Copy only the corpus's first N passages (0: all).
        #[arg(long, default_value_t = 0)]
        base_passages: usize,
        /// Leave out the resident memory of a `rhizome serve` on the index.
        #[arg(long)]
        no_serve: bool,
        /// N consecutive copies share one set of entities (renamed alike), so entities grow
        /// N times slower than chunks (0 or 1: every copy its own entities).
        #[arg(long, default_value_t = 0)]
        entity_share: u32,
        /// Go on from the chunks an earlier run with the same corpus and --entity-share
        /// left in the index (a size equal to them is measured without writing).
        #[arg(long)]
        resume: bool,
    },
    /// Files read as `rhizome index` reads them (PDF, Office, e-books, mail, images):
    /// pages/s and peak memory per file, PDFs against poppler's pdftotext in the same run.
    Formats {
        /// The files, read in this order (put the largest first for its peak memory).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Local model prompt and generation tokens/s (--llm-model NAME).
    Llm {
        #[arg(long, default_value_t = 256)]
        prompt_tokens: usize,
        #[arg(long, default_value_t = 64)]
        gen_tokens: usize,
    },
}

/// Run one benchmark.
pub fn run(bench: Bench, what: BenchCmd) -> Result<()> {
    match what {
        BenchCmd::Ingest { corpus, baseline_sample } => ingest::ingest(bench, &corpus, baseline_sample),
        BenchCmd::Llm { prompt_tokens, gen_tokens } => llm::llm(bench, prompt_tokens, gen_tokens),
        BenchCmd::Embedders { corpus, questions, baseline_sample } => {
            embedders::embedders(bench, &corpus, &questions, baseline_sample)
        }
        BenchCmd::Communities { repeat, max_cluster_size } => communities::communities(bench, repeat, max_cluster_size),
        BenchCmd::LargeFile { corpus, sizes, baseline_max_mb } => {
            large_file::large_file(bench, &corpus, &sizes, baseline_max_mb)
        }
        BenchCmd::Serve { questions, methods, clients, limit, rounds, log_format, otlp_endpoint } => {
            let _telemetry = serve::telemetry(log_format.as_deref(), otlp_endpoint.as_deref())?;
            serve::serve(bench, &questions, &methods, &clients, limit, rounds)
        }
        BenchCmd::Load { corpus, questions, clients, seconds, sample_secs, seed } => load::load(
            bench,
            load::LoadArgs { corpus: &corpus, questions: &questions, clients, seconds, sample_secs, seed },
        ),
        BenchCmd::Backends { openie, questions, postgres, falkordb, methods, limit } => {
            backends::backends(bench, &openie, &questions, postgres.as_deref(), falkordb.as_deref(), &methods, limit)
        }
        BenchCmd::Scale {
            openie,
            questions,
            sizes,
            methods,
            top_k,
            limit,
            batch,
            base_passages,
            no_serve,
            entity_share,
            resume,
        } => scale::scale(
            bench,
            scale::ScaleArgs {
                openie: &openie,
                questions: &questions,
                sizes: &sizes,
                methods: &methods,
                top_k: &top_k,
                limit,
                batch,
                base_passages,
                serve: !no_serve,
                entity_share,
                resume,
            },
        ),
        BenchCmd::Formats { files } => formats::formats(bench, &files),
        BenchCmd::Retrieval { questions, methods, limit } => retrieval::retrieval(bench, &questions, &methods, limit),
        BenchCmd::Filter { questions, filter, methods, limit } => {
            filter::filter(bench, &questions, &filter, &methods, limit)
        }
    }
}
