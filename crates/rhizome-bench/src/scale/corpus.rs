//! The synthetic corpus of `bench scale`: copies of a HippoRAG OpenIE corpus (passages
//! with their entities and triples), copy `k` with every entity renamed by its tag
//! ([`super::derived::tag`]) in the extraction, the passage's text and its title, so that
//! no two copies share a passage or a document id, nor an entity unless asked
//! ([`Base::share_entities`]). A passage's text is kept as
//! a [`Template`] (its literal spans and the entity names between them), so that a copy
//! is written without searching the text again.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rhizome_core::ids::{chunk_id, document_id, normalize_name};
use rhizome_core::{Chunk, Document, ExtractedEntity, ExtractedFact, ExtractedRelation, Extraction, Result};
use rhizome_ingest::import::{hipporag_openie, whole_chunk};

use super::derived::tag;

/// A text as literal spans and entity names (rendered per copy).
#[derive(Debug, Clone, Default)]
pub struct Template {
    /// (literal text before, entity name); `tail` follows the last.
    parts: Vec<(String, String)>,
    tail: String,
}

impl Template {
    /// `text` with every whole-word occurrence of `names` (longest first, none
    /// overlapping) marked as a name.
    pub fn new(text: &str, names: &[&str]) -> Template {
        let mut names: Vec<&str> = names.iter().copied().filter(|n| !n.trim().is_empty()).collect();
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        names.dedup();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for name in names {
            let mut from = 0;
            while let Some(i) = text[from..].find(name).map(|i| i + from) {
                let end = i + name.len();
                let boundary_before = text[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
                let boundary_after = text[end..].chars().next().is_none_or(|c| !c.is_alphanumeric());
                if boundary_before && boundary_after && spans.iter().all(|&(a, b)| end <= a || i >= b) {
                    spans.push((i, end));
                }
                from = end;
            }
        }
        spans.sort_unstable();
        let mut t = Template::default();
        let mut at = 0;
        for (a, b) in spans {
            t.parts.push((text[at..a].to_string(), text[a..b].to_string()));
            at = b;
        }
        t.tail = text[at..].to_string();
        t
    }

    /// The text of copy `k` whose entities are those of copy `g` (`g == k` unless copies
    /// share entities): each name followed by `g`'s tag, and `k`'s tag at the end when it
    /// differs (so that copies never share a text).
    pub fn render_copy(&self, g: u32, k: u32) -> String {
        let mut s = self.render(g);
        if k != g {
            s.push(' ');
            s.push_str(&tag(k));
        }
        s
    }

    /// The text of copy `k`: each name followed by the copy's tag; a text that names no
    /// entity gets the tag at its end (so that copies never share a text).
    pub fn render(&self, k: u32) -> String {
        if k == 0 {
            let mut s = String::new();
            for (lit, name) in &self.parts {
                s.push_str(lit);
                s.push_str(name);
            }
            s.push_str(&self.tail);
            return s;
        }
        let t = tag(k);
        let mut s = String::new();
        for (lit, name) in &self.parts {
            s.push_str(lit);
            s.push_str(name);
            s.push(' ');
            s.push_str(&t);
        }
        s.push_str(&self.tail);
        if self.parts.is_empty() {
            s.push(' ');
            s.push_str(&t);
        }
        s
    }
}

/// One passage of the base corpus.
pub struct Passage {
    title: Template,
    text: Template,
    extraction: Extraction,
}

/// The base corpus, ready to be copied.
pub struct Base {
    pub passages: Vec<Passage>,
    /// Every entity name of the corpus, for rewriting questions into a copy.
    names: Vec<String>,
    /// Base passage index by (title, text) in NFC, to find questions' supporting passages.
    by_key: HashMap<(String, String), usize>,
    /// Copies per set of entities: copy `k` names the entities of set `k / share` (0: each
    /// copy its own).
    share: u32,
}

/// Copy `k` of `name`.
pub fn rename(name: &str, k: u32) -> String {
    if k == 0 {
        name.to_string()
    } else {
        format!("{} {}", name.trim(), tag(k))
    }
}

impl Base {
    /// Read a HippoRAG OpenIE results file (its first `limit` passages; 0: all).
    pub fn load(openie: &Path, limit: usize) -> Result<Base> {
        let mut imported = hipporag_openie(openie)?;
        if limit > 0 {
            imported.items.truncate(limit);
        }
        let mut passages = Vec::new();
        let mut names = HashSet::new();
        let mut by_key = HashMap::new();
        for p in imported.items {
            let Some(ex) = p.extractions.into_iter().next() else { continue };
            let mut own: Vec<&str> = ex.entities.iter().map(|e| e.name.as_str()).collect();
            own.extend(ex.relations.iter().flat_map(|r| [r.source.as_str(), r.target.as_str()]));
            let key = (rhizome_core::text::nfc(p.doc.title.trim()).into_owned(), squash(&p.doc.text));
            by_key.entry(key).or_insert(passages.len());
            names.extend(own.iter().map(|n| n.trim().to_string()));
            passages.push(Passage {
                title: Template::new(&p.doc.title, &own),
                text: Template::new(&p.doc.text, &own),
                extraction: ex,
            });
        }
        let mut names: Vec<String> = names.into_iter().filter(|n| !n.is_empty()).collect();
        names.sort();
        Ok(Base { passages, names, by_key, share: 0 })
    }

    pub fn len(&self) -> usize {
        self.passages.len()
    }

    /// Let `share` consecutive copies share one set of entities: copy `k` names the
    /// entities of set `k / share`, so entities grow `share` times slower than passages
    /// and each has mentions in `share` passages. 0 or 1: every copy its own entities.
    pub fn share_entities(&mut self, share: u32) {
        self.share = share;
    }

    /// The set of entities copy `k` names (named as copy `group(k)` names them alone).
    pub fn group(&self, k: u32) -> u32 {
        if self.share <= 1 {
            k
        } else {
            k / self.share
        }
    }

    /// Passage `i` of copy `k`: its document, its one chunk and its extraction.
    pub fn copy(&self, k: u32, i: usize) -> (Document, Chunk, Extraction) {
        let p = &self.passages[i];
        let g = self.group(k);
        let (title, text) = (p.title.render(g), p.text.render_copy(g, k));
        let doc = Document::new(format!("scale:copy{k}/{i}"), title, text.clone());
        let chunk = whole_chunk(&doc.id, text);
        let ex = &p.extraction;
        let r = |n: &str| rename(n, g);
        let extraction = Extraction {
            entities: ex.entities.iter().map(|e| ExtractedEntity { name: r(&e.name), ..e.clone() }).collect(),
            relations: ex
                .relations
                .iter()
                .map(|x| ExtractedRelation {
                    source: r(&x.source),
                    target: r(&x.target),
                    description: format!("{} {} {}", r(&x.source), x.rel_type, r(&x.target)),
                    ..x.clone()
                })
                .collect(),
            facts: ex
                .facts
                .iter()
                .map(|f| ExtractedFact { subject: r(&f.subject), predicate: f.predicate.clone(), object: r(&f.object) })
                .collect(),
            ..Default::default()
        };
        (doc, chunk, extraction)
    }

    /// The chunk id of passage `i` in copy `k`.
    pub fn chunk_id(&self, k: u32, i: usize) -> String {
        let p = &self.passages[i];
        let g = self.group(k);
        let text = p.text.render_copy(g, k);
        chunk_id(&document_id(&p.title.render(g), &text), 0, &text)
    }

    /// `question` about copy `k`: every entity name of the corpus it spells out renamed.
    pub fn rewrite(&self, question: &str, k: u32) -> String {
        let found: Vec<&str> = self.names.iter().map(String::as_str).filter(|n| question.contains(n)).collect();
        Template::new(question, &found).render_names_only(self.group(k))
    }

    /// The base passage a question's supporting passage is, if it is in the corpus.
    pub fn passage_of(&self, title: &str, text: Option<&str>) -> Option<usize> {
        let t = rhizome_core::text::nfc(title.trim()).into_owned();
        match text {
            Some(x) => self.by_key.get(&(t, squash(x))).copied(),
            None => self.by_key.iter().find(|((a, _), _)| *a == t).map(|(_, &i)| i),
        }
    }

    /// The entity names of passage `i` (its entities and its triples' endpoints) as
    /// written, each with its normalised form (the entity's key and embedded text).
    pub fn entity_names(&self, i: usize) -> Vec<(String, &str)> {
        let ex = &self.passages[i].extraction;
        let names = ex.entities.iter().map(|e| e.name.as_str());
        let ends = ex.relations.iter().flat_map(|r| [r.source.as_str(), r.target.as_str()]);
        names.chain(ends).map(|n| (normalize_name(n), n)).filter(|(k, _)| !k.is_empty()).collect()
    }
}

impl Template {
    /// Like [`Template::render`], without the tag at the end of a text that names nothing
    /// (a question that names no entity stays as it is).
    fn render_names_only(&self, k: u32) -> String {
        if self.parts.is_empty() {
            return self.tail.clone();
        }
        self.render(k)
    }
}

fn squash(s: &str) -> String {
    rhizome_core::text::nfc(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_renames_whole_names_longest_first() {
        let t =
            Template::new("Paris is in France; Parisians love Paris, France.", &["Paris", "France", "Paris, France"]);
        assert_eq!(t.render(0), "Paris is in France; Parisians love Paris, France.");
        let z = tag(2);
        assert_eq!(t.render(2), format!("Paris {z} is in France {z}; Parisians love Paris, France {z}."));
        assert_eq!(Template::new("nothing here", &["Paris"]).render(2), format!("nothing here {z}"));
    }
}
