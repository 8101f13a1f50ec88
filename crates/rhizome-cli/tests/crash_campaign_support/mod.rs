//! The crash campaign's configurations: where an index lives ([`Store`]), how `rhizome`
//! reaches it ([`Setup`]), the corpus and questions, and the seeded random numbers kill
//! times are drawn from. `snapshot` compares indexes, `kill` kills runs.

pub mod kill;
pub mod snapshot;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rhizome_llm_testing::MockOpenAi;

use crate::support::rz;

/// Passages of the corpus, and documents per batch (so a run commits several batches).
pub const DOCS: usize = 40;
pub const PER_BATCH: &str = "embed.docs_per_batch=8";
pub const QUESTIONS: &[&str] =
    &["Who founded the company?", "In which country is the city located?", "When was the album released?"];

pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

pub fn seed() -> u64 {
    env_usize("RHIZOME_CRASH_SEED", 15) as u64
}

/// splitmix64: a seeded stream of numbers in [0, 1).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Where an index lives and how `rhizome` reaches it.
#[derive(Clone)]
pub enum Store {
    Sqlite(PathBuf),
    Postgres { url: String, scratch: PathBuf },
}

/// One configuration of the campaign.
pub struct Setup {
    pub name: &'static str,
    pub llm: Option<MockOpenAi>,
}

impl Setup {
    pub fn cmd(&self, store: &Store) -> Command {
        let mut c = match store {
            Store::Sqlite(dir) => rz(dir),
            Store::Postgres { url, scratch } => {
                let mut c = rz(scratch);
                c.args(["--store", url]);
                c
            }
        };
        c.args(["--set", PER_BATCH]);
        // The campaign's own variables are not the binary's (it would warn about them).
        for v in ["RHIZOME_CRASH_KILLS", "RHIZOME_CRASH_KILLS_PG", "RHIZOME_CRASH_KILLS_SERVER", "RHIZOME_CRASH_SEED"] {
            c.env_remove(v);
        }
        if let Some(llm) = &self.llm {
            c.args(["--llm-provider", "openai", "--llm-model", "mock-model", "--llm-base-url"])
                .arg(llm.base_url())
                .args(["--set", "llm.retry_base_ms=10"])
                .env("RHIZOME_LLM_API_KEY", "sk-loopback");
        }
        c
    }

    pub fn index(&self, store: &Store, docs: &Path) -> Command {
        let mut c = self.cmd(store);
        c.arg("index").arg(docs).stdout(Stdio::null()).stderr(Stdio::piped());
        if self.llm.is_some() {
            c.args(["--extractor", "llm"]);
        }
        c
    }
}
