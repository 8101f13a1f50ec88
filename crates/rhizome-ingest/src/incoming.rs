//! What an indexing run does with each document it is given, decided against the index
//! before anything is written (and by `index --dry-run`, which writes nothing):
//! - content indexed already under this name is unchanged;
//! - content indexed already (or earlier in this run) under another name is not indexed
//!   again: the new name becomes another source of that document (an alias);
//! - a name indexed with other content is replaced: the old document goes, unless it has
//!   another name (an alias, or a name its content arrives under in this run), which then
//!   becomes its source ([`Incoming::renames`]);
//! - the rest is new.
//!
//! Content is compared by the digest of the text alone ([`text_digest`]), so one file
//! uploaded under six names is one document with six names, cited once.

use std::collections::{HashMap, HashSet};

use rhizome_core::ids::text_digest;
use rhizome_core::{Document, Result, StoreRead};

/// The documents of a run, sorted.
#[derive(Debug, Default)]
pub struct Incoming {
    /// Documents to index, in the order given.
    pub new: Vec<Document>,
    /// Stored documents whose name a new version takes (same source, other content): the
    /// run deletes them first.
    pub replaced: Vec<String>,
    /// Documents indexed already under their name.
    pub unchanged: u64,
    /// Content indexed already, arriving under a new name: (document id, the new name).
    pub aliases: Vec<(String, String)>,
    /// Stored documents whose source takes other content and that keep another of their
    /// names as source: (document id, that name). Written before the run's documents.
    pub renames: Vec<(String, String)>,
}

/// Sort `docs` against `store` (None: an index that does not exist yet).
pub fn sort(store: Option<&dyn StoreRead>, docs: Vec<Document>) -> Result<Incoming> {
    let mut out = Incoming::default();
    // Content seen in this run or found in the index: digest -> document id, and the names
    // each such document has so far.
    let mut by_digest: HashMap<String, String> = HashMap::new();
    let mut names: HashMap<String, Vec<String>> = HashMap::new();
    // Replaced documents' other stored names.
    let mut other_names: HashMap<String, Vec<String>> = HashMap::new();
    for d in docs {
        let digest = text_digest(&d.text);
        let known = match by_digest.get(&digest) {
            Some(id) => Some(id.clone()),
            None => match store {
                Some(s) if s.has_document(&d.id)? => Some(d.id.clone()),
                Some(s) => s.document_with_digest(&digest)?,
                None => None,
            },
        };
        // A name indexed with other content loses it, whatever this content becomes.
        let target = known.as_deref().unwrap_or(&d.id);
        if let Some(s) = store {
            if let Some(old) = s.find_document(&d.source)? {
                if old.source == d.source && old.id != target && !out.replaced.contains(&old.id) {
                    let others = s.document_sources(&old.id)?.into_iter().filter(|n| n != &d.source).collect();
                    other_names.insert(old.id.clone(), others);
                    out.replaced.push(old.id);
                }
            }
        }
        match known {
            Some(id) => {
                if !names.contains_key(&id) {
                    let stored = match store {
                        Some(s) => s.document_sources(&id)?,
                        None => Vec::new(),
                    };
                    names.insert(id.clone(), stored);
                }
                let list = names.get_mut(&id).expect("inserted above");
                if list.contains(&d.source) {
                    out.unchanged += 1;
                } else {
                    list.push(d.source.clone());
                    out.aliases.push((id.clone(), d.source));
                }
                by_digest.insert(digest, id);
            }
            None => {
                names.insert(d.id.clone(), vec![d.source.clone()]);
                by_digest.insert(digest, d.id.clone());
                out.new.push(d);
            }
        }
    }
    keep_under_other_names(&mut out, &other_names);
    Ok(out)
}

/// A replaced document with another name not taken in this run is kept under it: its
/// first stored alias, else the first name its content arrived under in this run.
fn keep_under_other_names(out: &mut Incoming, other_names: &HashMap<String, Vec<String>>) {
    let mut taken: HashSet<String> = out.new.iter().map(|d| d.source.clone()).collect();
    for id in std::mem::take(&mut out.replaced) {
        let stored = other_names.get(&id).into_iter().flatten();
        let arrived = out.aliases.iter().filter(|(a, _)| a == &id).map(|(_, n)| n);
        let free = |n: &&String| !taken.contains(n.as_str()) && !out.aliases.iter().any(|(a, m)| a != &id && &m == n);
        match stored.chain(arrived).find(free).cloned() {
            Some(name) => {
                out.aliases.retain(|(a, n)| !(a == &id && n == &name));
                taken.insert(name.clone());
                out.renames.push((id, name));
            }
            None => out.replaced.push(id),
        }
    }
}
