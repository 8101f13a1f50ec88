//! Questions asked of some documents only: a [`DocFilter`] resolved to the documents it
//! matches and their [`Scope`], both kept while the index does not change (a filter
//! asked again costs nothing).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rhizome_core::filter::DocFacets;
use rhizome_core::{Community, DocFilter, DocumentSummary, Error, Result, StoreRead};
use rhizome_retrieve::scope::{ReportWriter, Scope};

use crate::Engine;

/// Scopes kept at once (the filters asked most recently).
const KEPT: usize = 16;

/// What changes the documents a filter matches: the graph version (documents written or
/// deleted) and when documents were last described.
type DocsKey = (u64, Option<String>);

#[derive(Default)]
pub(crate) struct ScopeCache {
    docs: Mutex<Option<(DocsKey, Arc<Vec<DocumentSummary>>)>>,
    scopes: Mutex<Vec<(String, DocsKey, Arc<Scope>)>>,
}

/// The store meta key describing updates (set by `rhizome_ingest::describe`).
pub(crate) const DESCRIBED_AT: &str = rhizome_ingest::describe::DESCRIBED_AT;

impl Engine {
    /// The scope of the documents `filter` matches; an error naming the filter when it
    /// matches none (a question is never answered from everything instead).
    pub(crate) fn scope(&self, store: &dyn StoreRead, filter: &DocFilter) -> Result<Arc<Scope>> {
        let key: DocsKey = (store.graph_version()?, store.meta(DESCRIBED_AT)?);
        let fkey = filter.key();
        {
            let scopes = self.scopes.scopes.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((_, _, s)) = scopes.iter().find(|(f, k, _)| *f == fkey && *k == key) {
                return Ok(s.clone());
            }
        }
        let docs = self.document_facets(store, &key)?;
        let matching: HashSet<String> = docs
            .iter()
            .filter(|d| {
                filter.matches(&DocFacets {
                    source: &d.source,
                    aliases: &d.aliases,
                    language: d.language.as_deref(),
                    indexed_at: d.indexed_at,
                    meta: &d.meta,
                })
            })
            .map(|d| d.id.clone())
            .collect();
        if matching.is_empty() {
            return Err(Error::bad_input(
                format!("filter {}", filter.describe()),
                format!(
                    "no indexed document matches it (of {}); `rhizome documents` shows each document's type, tags \
                     and dates",
                    docs.len()
                ),
            ));
        }
        let graph = self.graph().get(store)?;
        let ids: Vec<String> = matching.iter().cloned().collect();
        let support = store.supported_by(&ids)?;
        let settings = self.config.communities.clone();
        let writer: ReportWriter =
            Arc::new(move |s: &dyn StoreRead, c: &[Community]| rhizome_community::scoped_reports(s, c, &settings));
        let scope = Arc::new(Scope::new(&graph, key.0, matching, &support).with_report_writer(writer));
        let mut scopes = self.scopes.scopes.lock().unwrap_or_else(|p| p.into_inner());
        scopes.retain(|(f, k, _)| *k == key && *f != fkey);
        if scopes.len() >= KEPT {
            scopes.remove(0);
        }
        scopes.push((fkey, key, scope.clone()));
        Ok(scope)
    }

    /// Every document with what a filter reads of it, kept for `key`.
    fn document_facets(&self, store: &dyn StoreRead, key: &DocsKey) -> Result<Arc<Vec<DocumentSummary>>> {
        let mut slot = self.scopes.docs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((k, docs)) = slot.as_ref() {
            if k == key {
                return Ok(docs.clone());
            }
        }
        let docs = Arc::new(store.documents(None, 0, usize::MAX)?);
        *slot = Some((key.clone(), docs.clone()));
        Ok(docs)
    }
}
