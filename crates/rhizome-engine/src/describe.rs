//! Describing documents (summary, type, hashtags): at the end of every indexing run, and
//! again on demand (`rhizome describe`).

use std::sync::atomic::AtomicBool;

use rhizome_core::llm::PromptLlm;
use rhizome_core::{Embedder, Result, StoreWrite};
use rhizome_ingest::describe::{DescribeConfig, DescribeReport, Describer};
use rhizome_ingest::pipeline::Progress;

use crate::Engine;

impl Engine {
    /// Describes the documents not described yet (`force`: every document again, as after
    /// changing `describe.types` or the LLM), with the configured LLM when there is one
    /// and `describe.llm` is on.
    pub fn describe(&self, force: bool, progress: &dyn Progress, cancel: &AtomicBool) -> Result<DescribeReport> {
        let mut store = self.writer(true)?;
        let embedder = self.embedder(store.as_ref())?;
        let llm = self.llm()?;
        self.describe_in(store.as_mut(), embedder.as_ref(), llm.as_deref(), force, progress, cancel)
    }

    /// [`Engine::describe`] through an open writer.
    pub(crate) fn describe_in(
        &self,
        store: &mut dyn StoreWrite,
        embedder: &dyn Embedder,
        llm: Option<&crate::llm::Llm>,
        force: bool,
        progress: &dyn Progress,
        cancel: &AtomicBool,
    ) -> Result<DescribeReport> {
        let settings = self.config.section::<DescribeConfig>();
        let view = llm.filter(|_| settings.llm).map(|l| l.prompt_llm(&self.config));
        let describer = Describer {
            settings: &settings,
            embedder,
            llm: view.as_ref().map(|v| v as &dyn PromptLlm),
            progress,
            cancel,
        };
        describer.run(store, force)
    }
}
