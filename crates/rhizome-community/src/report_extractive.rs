//! Reports without an LLM: what the graph itself says about a community — its central
//! entities (by degree), its strongest relations, and the sentences of the documents that
//! name the most members. The rating is the community's size in the graph (members +
//! relations + mentions) on a fixed log scale (500 -> 10), so that "top-rated" still
//! means "most central" offline and a report depends on its own community only.

use rhizome_core::config_sensemaking::CommunitiesConfig;
use rhizome_core::{CommunityReport, Finding, ReportKind};

use crate::context::Material;

/// The report of `m`, with `sentences` the representative sentences (best first) and
/// `rating` already scaled.
pub fn extractive_report(m: &Material, sentences: &[String], rating: f32, cfg: &CommunitiesConfig) -> CommunityReport {
    let c = m.community;
    let mut ents: Vec<&rhizome_core::Entity> = m.entities.iter().collect();
    let deg = |id: &str| m.degree.get(id).copied().unwrap_or(0);
    ents.sort_by(|a, b| deg(&b.id).cmp(&deg(&a.id)).then(a.name.cmp(&b.name)));
    let mut rels: Vec<&rhizome_core::Relation> = m.relations.iter().collect();
    rels.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.id.cmp(&b.id)));
    let name = |id: &str| m.entities.iter().find(|e| e.id == id).map_or(id.to_string(), |e| e.name.clone());
    let mut types: Vec<(&str, usize)> = Vec::new();
    for e in &ents {
        match types.iter_mut().find(|(t, _)| *t == e.entity_type) {
            Some((_, n)) => *n += 1,
            None => types.push((&e.entity_type, 1)),
        }
    }
    let central: Vec<String> = ents.iter().take(3).map(|e| format!("{} ({})", e.name, e.entity_type)).collect();
    let summary = format!(
        "{} entities ({}) joined by {} relations; the most connected are {}.",
        c.entity_ids.len(),
        types.iter().map(|(t, n)| format!("{n} {t}")).collect::<Vec<_>>().join(", "),
        m.relations.len(),
        central.join(", ")
    );
    let mut findings: Vec<Finding> = Vec::new();
    for e in ents.iter().take(cfg.extractive_entities) {
        if e.description.trim().is_empty() {
            continue;
        }
        findings.push(Finding {
            summary: format!("{} ({}, {} relations)", e.name, e.entity_type, deg(&e.id)),
            explanation: first_sentences(&e.description, 2),
        });
    }
    for r in rels.iter().take(cfg.extractive_relations) {
        let desc =
            if r.description.trim().is_empty() { r.rel_type.clone() } else { first_sentences(&r.description, 2) };
        findings.push(Finding {
            summary: format!("{} -> {} ({})", name(&r.source_id), name(&r.target_id), r.rel_type),
            explanation: desc,
        });
    }
    for c in m.claims.iter().take(cfg.extractive_relations) {
        findings.push(Finding {
            summary: format!("Claim on {}: {} ({})", name(&c.subject_id), c.claim_type, c.status),
            explanation: first_sentences(&c.description, 2),
        });
    }
    if !sentences.is_empty() {
        findings.push(Finding {
            summary: "What the documents say".into(),
            explanation: sentences.iter().take(cfg.extractive_sentences).cloned().collect::<Vec<_>>().join(" "),
        });
    }
    CommunityReport {
        community_id: c.id.clone(),
        level: c.level,
        title: c.title.clone(),
        summary,
        findings,
        rating,
        rating_explanation: "extractive report: rating is the community's size in the graph \
                             (members, relations, mentions), log-scaled, 500 = 10"
            .into(),
        fingerprint: c.fingerprint.clone(),
        kind: ReportKind::Extractive,
    }
}

fn first_sentences(text: &str, n: usize) -> String {
    let s = rhizome_core::text::sentences(text);
    if s.is_empty() {
        return text.trim().to_string();
    }
    s.iter().take(n).map(|(_, x)| x.trim()).collect::<Vec<_>>().join(" ")
}
