//! What every query-time command (query, eval, bench retrieval) opens: the index, the
//! embedder its vectors were made with, the LLM when one is configured, and the graph
//! cache shared by the questions of one run.

use anyhow::Result;
use rhizome_core::llm::PromptLlm;
use rhizome_core::{Embedder, StoreRead};
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
}

impl QuerySetup {
    pub fn open(app: &App) -> Result<Self> {
        let store = app.open_store(false)?;
        let embedder = app.embedder_for(&store)?;
        let llm = crate::llm::build(&app.config, &app.cli_index)?;
        let prompt_llm = llm.as_ref().map(|l| l.prompt_llm(&app.config));
        Ok(QuerySetup { store, embedder, llm, prompt_llm, graph: GraphCache::new() })
    }

    /// The retrieval environment for `app`'s settings.
    pub fn env<'a>(&'a self, app: &'a App) -> QueryEnv<'a> {
        QueryEnv {
            store: &self.store as &dyn StoreRead,
            embedder: self.embedder.as_ref(),
            config: &app.config,
            llm: self.prompt_llm.as_ref().map(|p| p as &dyn PromptLlm),
            graph: &self.graph,
        }
    }
}
