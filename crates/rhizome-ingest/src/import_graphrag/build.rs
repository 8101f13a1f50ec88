//! GraphRAG's tables turned into Rhizome's records: documents with their text units as
//! chunks and one extraction per chunk; communities, reports and covariates with every
//! entity reference (GraphRAG ids or names) mapped to Rhizome entity ids.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rhizome_core::community::community_fingerprint;
use rhizome_core::ids::{chunk_id, document_id, entity_id, normalize_name, relation_id};
use rhizome_core::text::count_tokens;
use rhizome_core::{
    Chunk, Community, CommunityReport, Covariate, CovariateRecord, Document, ExtractedEntity, ExtractedRelation,
    Extraction, ReportKind,
};

use super::tables::{GrCommunity, Tables};
use crate::pipeline::Prepared;

/// The relation type imported relationships get.
pub const REL_TYPE: &str = "RELATED";

/// Where a text unit went: (index of the Prepared item, index of the chunk in it).
type Place = (usize, usize);

/// The documents, with a chunk per text unit and an extraction per chunk.
pub struct Built {
    pub items: Vec<Prepared>,
    /// Text unit id -> where its chunk is (a unit of several documents is in each).
    pub places: HashMap<String, Vec<Place>>,
    pub warnings: Vec<String>,
}

/// Documents and chunks: a document's units are those whose `document_id` names it (or,
/// when units do not say, those the document lists), in the units' own order
/// (`human_readable_id`, which follows the text; a document's `text_unit_ids` need not).
pub fn documents(t: &Tables) -> Built {
    let mut warnings = Vec::new();
    let listed: HashMap<&str, Vec<usize>> = {
        let mut m: HashMap<&str, Vec<usize>> = HashMap::new();
        for (di, d) in t.documents.iter().enumerate() {
            for u in &d.text_unit_ids {
                m.entry(u.as_str()).or_default().push(di);
            }
        }
        m
    };
    let doc_index: HashMap<&str, usize> = t.documents.iter().enumerate().map(|(i, d)| (d.id.as_str(), i)).collect();
    let mut units: Vec<(Option<i64>, usize)> = t.text_units.iter().enumerate().map(|(i, u)| (u.hrid, i)).collect();
    units.sort_by_key(|&(h, i)| (h.unwrap_or(i64::MAX), i));
    let mut per_doc: Vec<Vec<usize>> = vec![Vec::new(); t.documents.len()];
    for &(_, ui) in &units {
        let u = &t.text_units[ui];
        let mut docs: Vec<usize> = u.document_ids.iter().filter_map(|d| doc_index.get(d.as_str()).copied()).collect();
        if docs.is_empty() {
            docs = listed.get(u.id.as_str()).cloned().unwrap_or_default();
        }
        docs.sort_unstable();
        docs.dedup();
        if docs.is_empty() {
            warnings.push(format!("text unit {} belongs to no document in documents.parquet; skipped", u.id));
        }
        for d in docs {
            per_doc[d].push(ui);
        }
    }
    let known: HashSet<&str> = t.text_units.iter().map(|u| u.id.as_str()).collect();
    let missing = listed.keys().filter(|u| !known.contains(*u)).count();
    if missing > 0 {
        warnings.push(format!(
            "documents.parquet lists {missing} text unit id(s) that text_units.parquet lacks (units are \
             placed by their own document_id)"
        ));
    }
    let mut items = Vec::with_capacity(t.documents.len());
    let mut places: HashMap<String, Vec<Place>> = HashMap::new();
    for (di, d) in t.documents.iter().enumerate() {
        let number = d.hrid.map(|h| h.to_string()).unwrap_or_else(|| di.to_string());
        let doc = Document {
            id: document_id(&d.title, &d.text),
            source: format!("{}#{number}", t.documents_path.display()),
            title: d.title.clone(),
            text: d.text.clone(),
            pages: None,
            meta: Default::default(),
        };
        let chunks: Vec<Chunk> = per_doc[di]
            .iter()
            .enumerate()
            .map(|(ordinal, &ui)| {
                let text = t.text_units[ui].text.clone();
                places.entry(t.text_units[ui].id.clone()).or_default().push((items.len(), ordinal));
                // Where the unit stands in its document's text, when it is found there.
                let start = doc.text.find(&text).map_or(0, |b| doc.text[..b].chars().count() as u32);
                let end =
                    if start > 0 || doc.text.starts_with(&text) { start + text.chars().count() as u32 } else { 0 };
                Chunk {
                    id: chunk_id(&doc.id, ordinal as u32, &text),
                    doc_id: doc.id.clone(),
                    ordinal: ordinal as u32,
                    tokens: count_tokens(&text) as u32,
                    text,
                    start,
                    end,
                    pages: None,
                }
            })
            .collect();
        let extractions = vec![Extraction::default(); chunks.len()];
        items.push(Prepared { doc, chunks, extractions, doc_extraction: Extraction::default(), failures: vec![] });
    }
    Built { items, places, warnings }
}

/// The places of a record's text units, each once; empty when none is known.
fn places_of<'a>(b: &'a Built, unit_ids: &[String]) -> Vec<&'a Place> {
    let mut seen = HashSet::new();
    unit_ids.iter().filter(|u| seen.insert(u.as_str())).filter_map(|u| b.places.get(u.as_str())).flatten().collect()
}

/// Entities and relationships into the extractions of the chunks of their text units
/// (records with no known unit go to the first document as a whole). A relationship's
/// weight is spread over its chunks so that the weights Rhizome sums equal GraphRAG's.
/// Returns the names of relationship endpoints that entities.parquet lacks.
pub fn graph(t: &Tables, b: &mut Built) -> BTreeSet<String> {
    let types: HashMap<String, &str> =
        t.entities.iter().map(|e| (normalize_name(&e.title), e.entity_type.as_str())).collect();
    let mut by_norm: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for e in &t.entities {
        by_norm.entry(normalize_name(&e.title)).or_default().push(&e.title);
    }
    for (_, names) in by_norm.iter().filter(|(_, v)| v.len() > 1) {
        b.warnings.push(format!("entities {names:?} have the same normalised name: they are one entity here"));
    }
    for e in &t.entities {
        let x = ExtractedEntity {
            name: e.title.clone(),
            entity_type: e.entity_type.clone(),
            description: e.description.clone(),
            count: 1,
            importance: None,
        };
        let places: Vec<Place> = places_of(b, &e.text_unit_ids).into_iter().copied().collect();
        push(b, &places, |ex| ex.entities.push(x.clone()));
    }
    let mut unknown = BTreeSet::new();
    for r in &t.relationships {
        for name in [&r.source, &r.target] {
            if !types.contains_key(&normalize_name(name)) {
                unknown.insert(name.clone());
            }
        }
        if normalize_name(&r.source) == normalize_name(&r.target) {
            b.warnings.push(format!("relationship {} -> {} links an entity to itself; skipped", r.source, r.target));
            continue;
        }
        let places: Vec<Place> = places_of(b, &r.text_unit_ids).into_iter().copied().collect();
        let weight = r.weight.max(0.0) / places.len().max(1) as f64;
        let x = ExtractedRelation {
            source: r.source.clone(),
            target: r.target.clone(),
            rel_type: REL_TYPE.into(),
            description: r.description.clone(),
            weight: weight as f32,
        };
        push(b, &places, |ex| {
            ex.relations.push(x.clone());
            // An endpoint the chunk does not list keeps its own type (resolution would
            // otherwise mention it as a plain ENTITY there).
            for name in [&x.source, &x.target] {
                let norm = normalize_name(name);
                if let Some(ty) = types.get(&norm) {
                    if !ex.entities.iter().any(|e| normalize_name(&e.name) == norm) {
                        ex.entities.push(ExtractedEntity {
                            name: name.clone(),
                            entity_type: ty.to_string(),
                            description: String::new(),
                            count: 1,
                            importance: None,
                        });
                    }
                }
            }
        });
    }
    if !unknown.is_empty() {
        b.warnings.push(format!(
            "{} relationship endpoint(s) missing from entities.parquet become entities of type ENTITY: {}",
            unknown.len(),
            unknown.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    unknown
}

/// Apply `f` to the extraction of each place, or to the first document's own extraction
/// when there is none.
fn push(b: &mut Built, places: &[Place], mut f: impl FnMut(&mut Extraction)) {
    if places.is_empty() {
        if let Some(first) = b.items.first_mut() {
            f(&mut first.doc_extraction);
        }
        return;
    }
    for &(i, c) in places {
        f(&mut b.items[i].extractions[c]);
    }
}

/// The Rhizome id of a community number.
pub fn community_key(n: i64) -> String {
    format!("com_gr_{n}")
}

/// Communities with Rhizome ids, members and fingerprints; their reports.
pub fn communities(
    t: &Tables,
    list: &[GrCommunity],
    warnings: &mut Vec<String>,
) -> (Vec<Community>, Vec<CommunityReport>) {
    let entity_name: HashMap<&str, &str> = t
        .entities
        .iter()
        .flat_map(|e| [(e.id.as_str(), e.title.as_str()), (e.title.as_str(), e.title.as_str())])
        .collect();
    let relationship: HashMap<&str, (&str, &str)> =
        t.relationships.iter().map(|r| (r.id.as_str(), (r.source.as_str(), r.target.as_str()))).collect();
    let numbers: HashSet<i64> = list.iter().map(|c| c.community).collect();
    let mut out: Vec<Community> = Vec::with_capacity(list.len());
    for c in list {
        let rels: Vec<(&str, &str)> =
            c.relationship_ids.iter().filter_map(|r| relationship.get(r.as_str()).copied()).collect();
        let names: Vec<&str> = match &c.entity_ids {
            Some(ids) => ids.iter().filter_map(|id| entity_name.get(id.as_str()).copied()).collect(),
            None => rels.iter().flat_map(|&(s, t)| [s, t]).collect(),
        };
        let entity_ids: BTreeSet<String> = names.iter().map(|n| entity_id(n)).collect();
        let relation_ids: BTreeSet<String> = rels
            .iter()
            .filter(|(s, t)| normalize_name(s) != normalize_name(t))
            .map(|(s, t)| relation_id(&entity_id(s), REL_TYPE, &entity_id(t)))
            .collect();
        let entity_ids: Vec<String> = entity_ids.into_iter().collect();
        let relation_ids: Vec<String> = relation_ids.into_iter().collect();
        let children: Vec<i64> = match &c.children {
            Some(ch) => ch.clone(),
            None => list.iter().filter(|x| x.parent == Some(c.community)).map(|x| x.community).collect(),
        };
        out.push(Community {
            id: community_key(c.community),
            level: c.level,
            parent: c.parent.filter(|p| numbers.contains(p)).map(community_key),
            children: children.into_iter().filter(|n| numbers.contains(n)).map(community_key).collect(),
            title: c.title.clone(),
            fingerprint: community_fingerprint(&entity_ids, &relation_ids),
            entity_ids,
        });
    }
    out.sort_by(|a, b| (a.level, &a.id).cmp(&(b.level, &b.id)));
    out.dedup_by(|a, b| a.id == b.id);
    let by_id: HashMap<&str, &Community> = out.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut reports = Vec::new();
    for r in t.reports.iter().flatten() {
        let id = community_key(r.community);
        let Some(c) = by_id.get(id.as_str()) else {
            warnings.push(format!(
                "community report about community {}, which communities.parquet lacks; skipped",
                r.community
            ));
            continue;
        };
        reports.push(CommunityReport {
            community_id: id.clone(),
            level: r.level.unwrap_or(c.level),
            title: r.title.clone(),
            summary: r.summary.clone(),
            findings: r.findings.clone(),
            rating: r.rank as f32,
            rating_explanation: r.rating_explanation.clone(),
            fingerprint: c.fingerprint.clone(),
            kind: ReportKind::Imported,
        });
    }
    reports.sort_by(|a, b| (a.level, &a.community_id).cmp(&(b.level, &b.community_id)));
    reports.dedup_by(|a, b| a.community_id == b.community_id);
    (out, reports)
}

/// Covariates, each supported by the document (and chunk) of its text unit, or by the
/// first document when the unit is unknown.
pub fn covariates(t: &Tables, b: &Built) -> Vec<CovariateRecord> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for c in t.covariates.iter().flatten() {
        if !seen.insert(c.id.as_str()) {
            continue;
        }
        let place = c.text_unit_id.as_ref().and_then(|u| b.places.get(u)).and_then(|p| p.first());
        let (doc_id, chunk_id) = match place {
            Some(&(i, k)) => (b.items[i].doc.id.clone(), Some(b.items[i].chunks[k].id.clone())),
            None => match b.items.first() {
                Some(first) => (first.doc.id.clone(), None),
                None => continue,
            },
        };
        out.push(CovariateRecord {
            covariate: Covariate {
                id: c.id.clone(),
                covariate_type: c.covariate_type.clone(),
                claim_type: c.claim_type.clone(),
                subject_id: entity_id(&c.subject),
                object_id: c.object.as_deref().map(entity_id),
                status: c.status.clone(),
                start_date: c.start_date.clone(),
                end_date: c.end_date.clone(),
                description: c.description.clone(),
                source_text: c.source_text.clone(),
            },
            doc_id,
            chunk_id,
        });
    }
    out
}
