//! Communities and their reports brought up to date, after indexing or on their own
//! (`rhizome communities`).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use rhizome_community::CommunityOutcome;
use rhizome_core::llm::PromptLlm;
use rhizome_core::{Result, StoreWrite};
use rhizome_llm::StageUsage;

use crate::llm::{record_usage, Llm};
use crate::Engine;

impl Engine {
    /// `rhizome communities`: bring communities and reports up to date (`force`:
    /// recompute the communities and rewrite every report), with the configured LLM.
    pub fn communities(
        &self,
        force: bool,
        cancel: &AtomicBool,
    ) -> Result<(CommunityOutcome, Option<BTreeMap<String, StageUsage>>)> {
        let mut store = self.writer(false)?;
        let embedder = self.embedder(store.as_ref())?;
        store.set_embedding_model(embedder.model_id(), embedder.dim())?;
        let llm = self.llm()?;
        let outcome = self.refresh_communities(store.as_mut(), embedder.as_ref(), llm.as_deref(), force, cancel)?;
        let usage = match &llm {
            Some(l) => Some(record_usage(store.as_mut(), l)?),
            None => None,
        };
        Ok((outcome, usage))
    }

    pub(super) fn refresh_communities(
        &self,
        store: &mut dyn StoreWrite,
        embedder: &dyn rhizome_core::Embedder,
        llm: Option<&Llm>,
        force: bool,
        cancel: &AtomicBool,
    ) -> Result<CommunityOutcome> {
        let prompt_llm = llm.map(|l| l.prompt_llm(&self.config));
        rhizome_community::refresh(
            store,
            embedder,
            prompt_llm.as_ref().map(|p| p as &dyn PromptLlm),
            &self.config.communities,
            force,
            cancel,
        )
    }
}
