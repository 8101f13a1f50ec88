//! Questions asked of some documents only: a [`DocFilter`] resolved to the documents it
//! matches and their [`Scope`], both kept while the index does not change (a filter
//! asked again costs nothing).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rhizome_core::filter::{exact_range, source_prefix};
use rhizome_core::{Community, DocFilter, Error, Result, StoreRead};
use rhizome_retrieve::scope::{ReportWriter, Scope};

use crate::Engine;

/// Scopes kept at once (the filters asked most recently).
const KEPT: usize = 16;

/// What changes the documents a filter matches: the graph version (documents written or
/// deleted) and when documents were last described.
type DocsKey = (u64, Option<String>);

#[derive(Default)]
pub(crate) struct ScopeCache {
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
        let matching = matching_documents(store, filter)?;
        if matching.is_empty() {
            return Err(Error::bad_input(
                format!("filter {}", filter.describe()),
                format!(
                    "no indexed document matches it (of {}); `rhizome documents` shows each document's type, tags \
                     and dates",
                    store.document_count(None)?
                ),
            ));
        }
        let ids: Vec<String> = matching.iter().cloned().collect();
        let support = store.supported_by(&ids)?;
        let graph = store.scope_graph(&ids, &support)?;
        let (_, relation_rows) = store.support_rows(&[], &support.relations)?;
        let settings = self.config.communities.clone();
        let writer: ReportWriter =
            Arc::new(move |s: &dyn StoreRead, c: &[Community]| rhizome_community::scoped_reports(s, c, &settings));
        let scope = Arc::new(Scope::new(graph, key.0, matching, &support, relation_rows).with_report_writer(writer));
        let mut scopes = self.scopes.scopes.lock().unwrap_or_else(|p| p.into_inner());
        scopes.retain(|(f, k, _)| *k == key && *f != fkey);
        if scopes.len() >= KEPT {
            scopes.remove(0);
        }
        scopes.push((fkey, key, scope.clone()));
        Ok(scope)
    }
}

/// The documents `filter` matches, read from the store's document index: each kind of
/// condition is a range read of it (its alternatives united), the kinds intersected;
/// `source` globs read the names alone, by the range their literal start gives when no
/// base name can match them, else every name.
pub fn matching_documents(store: &dyn StoreRead, filter: &DocFilter) -> Result<HashSet<String>> {
    let mut sets: Vec<HashSet<String>> = Vec::new();
    for (key, values) in [("type", &filter.types), ("tag", &filter.tags), ("lang", &filter.languages)] {
        if values.is_empty() {
            continue;
        }
        let mut set = HashSet::new();
        for v in values {
            let (from, to) = exact_range(v);
            set.extend(store.tagged_documents(key, &from, Some(&to))?);
        }
        sets.push(set);
    }
    if filter.after.is_some() || filter.before.is_some() {
        let from = filter.after.as_deref().unwrap_or("");
        sets.push(store.tagged_documents("date", from, filter.before.as_deref())?.into_iter().collect());
    }
    if !filter.sources.is_empty() {
        let prefixes: Option<Vec<&str>> = filter.sources.iter().map(|g| source_prefix(g)).collect();
        let names = match prefixes {
            Some(ps) => {
                let mut names = Vec::new();
                for p in ps {
                    names.extend(store.document_names(p)?);
                }
                names
            }
            None => store.document_names("")?,
        };
        sets.push(names.into_iter().filter(|(_, n)| filter.source_matches(n)).map(|(d, _)| d).collect());
    }
    let mut sets = sets.into_iter();
    let Some(mut out) = sets.next() else { return Ok(HashSet::new()) };
    for s in sets {
        out.retain(|d| s.contains(d));
    }
    Ok(out)
}
