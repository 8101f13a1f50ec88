//! What every query-time command (query, eval, bench retrieval) opens: the index, the
//! embedder its vectors were made with, the LLM when one is configured, and the graph
//! cache shared by the questions of one run.

use anyhow::Result;
use rhizome_core::llm::PromptLlm;
use rhizome_core::{Config, Embedder, StoreRead};
use rhizome_retrieve::{GraphCache, QueryEnv};
use rhizome_store::SqliteStore;

use crate::app::App;
use crate::llm::Llm;

pub struct QuerySetup {
    pub store: SqliteStore,
    pub embedder: Box<dyn Embedder>,
    pub llm: Option<Llm>,
    prompt_llm: Option<rhizome_llm::BlockingLlm>,
    graph: GraphCache,
    /// The settings, calibrated to the embedder's cosine scale.
    config: Config,
}

impl QuerySetup {
    pub fn open(app: &App) -> Result<Self> {
        let store = app.open_reader()?;
        let embedder = app.embedder_for(&store)?;
        let llm = crate::llm::build(&app.config, &app.cli_index)?;
        let prompt_llm = llm.as_ref().map(|l| l.prompt_llm(&app.config));
        let config = app.config.calibrated(embedder.cosine_scale());
        Ok(QuerySetup { store, embedder, llm, prompt_llm, graph: GraphCache::new(), config })
    }

    /// The retrieval environment: `app`'s settings were read when this was opened,
    /// calibrated to the embedder (see `Config::calibrated`).
    pub fn env(&self) -> QueryEnv<'_> {
        QueryEnv {
            store: &self.store as &dyn StoreRead,
            embedder: self.embedder.as_ref(),
            config: &self.config,
            llm: self.prompt_llm.as_ref().map(|p| p as &dyn PromptLlm),
            graph: &self.graph,
        }
    }
}
