//! Reports of communities as some documents alone tell them: when a question is asked of
//! a few documents only, a stored report (written from every document naming the
//! community's members) would bring the others' words into the answer. [`scoped_reports`]
//! writes extractive reports from what a store restricted to those documents shows —
//! members, relations, claims and sentences in scope — and writes nothing. A member's
//! description (gathered from every document) keeps only the sentences its chunks in
//! scope contain.

use std::collections::HashMap;

use rhizome_core::config_sensemaking::CommunitiesConfig;
use rhizome_core::{Community, CommunityReport, Result, StoreRead};

use crate::material::MaterialReader;
use crate::report_extractive::extractive_report;
use crate::reports::{material, representative_sentences, GraphStats};

/// Chunks in scope read per member for the sentences of its description.
const DESCRIBING_CHUNKS: usize = 8;

/// The sentences of `description` that one of `texts` contains.
fn told_in<'a>(description: &str, texts: impl Iterator<Item = &'a str>) -> String {
    let texts: Vec<&str> = texts.collect();
    let kept: Vec<&str> = rhizome_core::text::sentences(description)
        .into_iter()
        .map(|(_, s)| s.trim())
        .filter(|s| !s.is_empty() && texts.iter().any(|t| t.contains(s)))
        .collect();
    kept.join(" ")
}

/// Extractive reports of `communities` (their members already those in scope), from
/// `store`'s own graph and rows. A report keeps its community's id and level; its title
/// names the members in scope.
pub fn scoped_reports(
    store: &dyn StoreRead,
    communities: &[Community],
    cfg: &CommunitiesConfig,
) -> Result<Vec<CommunityReport>> {
    let data = store.graph_data()?;
    let stats = GraphStats::new(&data, communities);
    let mut reader = MaterialReader::new(store, cfg.material_cache_mb)?;
    let by_id: HashMap<&str, &Community> = communities.iter().map(|c| (c.id.as_str(), c)).collect();
    let none: HashMap<String, CommunityReport> = HashMap::new();
    let mut out = Vec::with_capacity(communities.len());
    for c in communities {
        let mut m = material(&mut reader, store, c, &by_id, &none, &stats.degree)?;
        for e in &mut m.entities {
            let ids: Vec<String> =
                stats.entity_chunks.get(&e.id).into_iter().flatten().take(DESCRIBING_CHUNKS).cloned().collect();
            let chunks = reader.chunks(store, &ids)?;
            e.description = told_in(&e.description, chunks.iter().map(|c| c.chunk.text.as_str()));
        }
        let sentences = representative_sentences(&mut reader, store, c, &m, &stats)?;
        let mut report = extractive_report(&m, &sentences, stats.rating(&c.id), cfg);
        let mut members: Vec<&rhizome_core::Entity> = m.entities.iter().collect();
        let degree = |id: &str| stats.degree.get(id).copied().unwrap_or(0);
        members.sort_by(|a, b| degree(&b.id).cmp(&degree(&a.id)).then(a.name.cmp(&b.name)));
        report.title = crate::build::title(&members.iter().map(|e| e.name.as_str()).collect::<Vec<_>>());
        out.push(report);
    }
    Ok(out)
}
