//! Keeping communities and their reports current: [`refresh`] recomputes communities when
//! the graph changed since they were computed, then writes a report for every community
//! without a current one — deepest level first, so that a large community can use its
//! sub-communities' reports — and embeds the reports for search.
//!
//! A report is current while its community's fingerprint (members and the relations
//! among them) is the one it was written for, so an unchanged community keeps its report
//! across recomputations, and with an LLM configured an extractive report (written
//! offline, or standing in for a failed LLM call) is replaced by an LLM one. LLM calls go
//! through the configured stack, so a rerun pays for nothing it already did.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use rhizome_core::config_sensemaking::CommunitiesConfig;
use rhizome_core::llm::{PromptCall, PromptLlm};
use rhizome_core::{
    Community, CommunityReport, EmbedKind, Embedder, Error, GraphData, ReportKind, Result, StoreWrite,
    VectorKind,
};
use serde::Serialize;

use crate::build::compute;
use crate::context::Material;
use crate::report_extractive::extractive_report;
use crate::report_llm::parse_report;

/// LLM report calls sent at once (between cancellation checks).
const LLM_BATCH: usize = 16;
/// Chunks read per community for representative sentences.
const SENTENCE_CHUNKS: usize = 6;
/// Failed LLM reports described one by one in the notes; the rest are counted.
const MAX_FAILURE_NOTES: usize = 5;

/// What [`refresh`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CommunityOutcome {
    /// Communities were recomputed because the graph changed.
    pub recomputed: bool,
    pub communities: usize,
    /// Communities per level, level 0 first.
    pub per_level: Vec<usize>,
    pub reports_reused: usize,
    pub reports_llm: usize,
    pub reports_extractive: usize,
    /// LLM reports that failed; an extractive report stands in, and the next run with an
    /// LLM asks again (a call that failed is sent again; a reply that could not be read
    /// was cached like every reply, so it comes back unless the model or prompt changed).
    pub llm_failures: usize,
    /// Reports whose material was cut to the budget, and those that used sub-reports.
    pub reports_trimmed: usize,
    pub reports_with_subreports: usize,
    pub notes: Vec<String>,
    /// Milliseconds per stage (leiden, material, llm, extractive, embed, write).
    pub timings_ms: std::collections::BTreeMap<String, f64>,
}

fn add_time(out: &mut CommunityOutcome, stage: &str, since: std::time::Instant) {
    *out.timings_ms.entry(stage.into()).or_insert(0.0) += since.elapsed().as_secs_f64() * 1e3;
}

/// Recompute communities if the graph changed (or `recompute`), then write the missing
/// reports.
pub fn refresh(
    store: &mut dyn StoreWrite,
    embedder: &dyn Embedder,
    llm: Option<&dyn PromptLlm>,
    cfg: &CommunitiesConfig,
    recompute: bool,
    cancel: &AtomicBool,
) -> Result<CommunityOutcome> {
    let mut out = CommunityOutcome::default();
    let version = store.graph_version()?;
    let mut data: Option<GraphData> = None;
    if recompute || store.communities_version()? != Some(version) {
        let t = std::time::Instant::now();
        let d = store.graph_data()?;
        let list = compute(&d, cfg);
        store.replace_communities(&list, version)?;
        add_time(&mut out, "leiden", t);
        data = Some(d);
        out.recomputed = true;
    }
    let communities = store.communities()?;
    out.communities = communities.len();
    for c in &communities {
        let l = c.level as usize;
        if out.per_level.len() <= l {
            out.per_level.resize(l + 1, 0);
        }
        out.per_level[l] += 1;
    }
    let mut current: HashMap<String, CommunityReport> =
        store.community_reports()?.into_iter().map(|r| (r.community_id.clone(), r)).collect();
    let todo: Vec<&Community> = communities
        .iter()
        .filter(|c| match current.get(&c.id) {
            None => true,
            Some(r) => r.fingerprint != c.fingerprint || (llm.is_some() && r.kind == ReportKind::Extractive),
        })
        .collect();
    out.reports_reused = communities.len() - todo.len();
    if todo.is_empty() {
        return Ok(out);
    }
    if llm.is_none() {
        out.notes.push("without an LLM: extractive community reports (entities, relations, sentences)".into());
    }
    let data = match data {
        Some(d) => d,
        None => store.graph_data()?,
    };
    let stats = GraphStats::new(&data, &communities);
    let max_level = todo.iter().map(|c| c.level).max().unwrap_or(0);
    for level in (0..=max_level).rev() {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let at: Vec<&Community> = todo.iter().copied().filter(|c| c.level == level).collect();
        if at.is_empty() {
            continue;
        }
        let mut made: Vec<CommunityReport> = Vec::new();
        for group in at.chunks(LLM_BATCH) {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled);
            }
            let t = std::time::Instant::now();
            let mut materials = Vec::new();
            for c in group {
                materials.push(material(store, c, &communities, &current, &stats.degree)?);
            }
            add_time(&mut out, "material", t);
            let t = std::time::Instant::now();
            let built: Vec<_> = match llm {
                Some(_) => materials.iter().map(|m| m.build(cfg.report_max_input_tokens)).collect(),
                None => Vec::new(),
            };
            add_time(&mut out, "context", t);
            let t = std::time::Instant::now();
            for b in &built {
                out.reports_trimmed += (b.left_out > 0) as usize;
                out.reports_with_subreports += (b.substituted > 0) as usize;
            }
            let replies: Vec<Option<Result<String>>> = match llm {
                Some(llm) => {
                    let max_words = (cfg.report_max_tokens as usize * 3 / 4).max(100).to_string();
                    let calls: Vec<PromptCall> = built
                        .iter()
                        .map(|b| {
                            PromptCall::new("community_report", "communities", &[
                                ("context", b.text.as_str()),
                                ("max_words", max_words.as_str()),
                            ])
                            .json()
                            .max_tokens(cfg.report_max_tokens)
                        })
                        .collect();
                    llm.run(&calls).into_iter().map(Some).collect()
                }
                None => group.iter().map(|_| None).collect(),
            };
            add_time(&mut out, "llm", t);
            let t = std::time::Instant::now();
            for ((c, m), reply) in group.iter().zip(&materials).zip(replies) {
                let parsed = match reply {
                    Some(Ok(text)) => match parse_report(&text, c) {
                        Ok(r) => Some(r),
                        Err(why) => {
                            if out.llm_failures < MAX_FAILURE_NOTES {
                                out.notes.push(format!("community {}: LLM report unusable ({why}); extractive report kept", c.id));
                            }
                            None
                        }
                    },
                    Some(Err(e)) => {
                        if out.llm_failures < MAX_FAILURE_NOTES {
                            out.notes.push(format!("community {}: LLM call failed ({e}); extractive report kept", c.id));
                        }
                        None
                    }
                    None => None,
                };
                match parsed {
                    Some(r) => {
                        out.reports_llm += 1;
                        made.push(r);
                    }
                    None => {
                        out.llm_failures += llm.is_some() as usize;
                        out.reports_extractive += 1;
                        let sentences = representative_sentences(store, c, m, &stats)?;
                        made.push(extractive_report(m, &sentences, stats.rating(&c.id), cfg));
                    }
                }
            }
            add_time(&mut out, "extractive", t);
        }
        let t = std::time::Instant::now();
        let vectors = report_vectors(store, embedder, &made, &communities)?;
        add_time(&mut out, "embed", t);
        let t = std::time::Instant::now();
        store.put_reports(&made, &vectors)?;
        add_time(&mut out, "write", t);
        for r in made {
            current.insert(r.community_id.clone(), r);
        }
    }
    if out.llm_failures > MAX_FAILURE_NOTES {
        out.notes.push(format!("{} LLM reports failed in all; extractive reports stand in", out.llm_failures));
    }
    Ok(out)
}

fn material<'a>(
    store: &dyn StoreWrite,
    c: &'a Community,
    all: &'a [Community],
    current: &'a HashMap<String, CommunityReport>,
    degree: &'a HashMap<String, u32>,
) -> Result<Material<'a>> {
    let members: HashSet<&str> = c.entity_ids.iter().map(String::as_str).collect();
    let relations = store
        .relations_of(&c.entity_ids)?
        .into_iter()
        .filter(|r| members.contains(r.source_id.as_str()) && members.contains(r.target_id.as_str()))
        .collect();
    let child_reports = c
        .children
        .iter()
        .filter_map(|id| {
            let child = all.iter().find(|x| &x.id == id)?;
            Some((current.get(id)?, child))
        })
        .collect();
    Ok(Material {
        community: c,
        entities: store.entities(&c.entity_ids)?,
        relations,
        claims: store.covariates_of(&c.entity_ids)?,
        degree,
        child_reports,
    })
}

/// A community this large (members + relations + mentions) rates 10 offline. A fixed
/// scale, not the index's largest community, so that a report depends on its own
/// community only (deleting a document elsewhere leaves it as it was).
const FULL_RATING_SIZE: f64 = 500.0;

/// Degrees, mentions and the sizes behind extractive ratings.
struct GraphStats {
    degree: HashMap<String, u32>,
    entity_chunks: HashMap<String, Vec<String>>,
    size: HashMap<String, f64>,
}

impl GraphStats {
    fn new(data: &GraphData, communities: &[Community]) -> GraphStats {
        let mut degree: HashMap<String, u32> = HashMap::new();
        for r in &data.relations {
            *degree.entry(r.source_id.clone()).or_insert(0) += 1;
            if r.source_id != r.target_id {
                *degree.entry(r.target_id.clone()).or_insert(0) += 1;
            }
        }
        let mut entity_chunks: HashMap<String, Vec<String>> = HashMap::new();
        for (e, c, _) in &data.mentions {
            entity_chunks.entry(e.clone()).or_default().push(c.clone());
        }
        let mut size = HashMap::new();
        for c in communities {
            let mentions: usize = c.entity_ids.iter().map(|e| entity_chunks.get(e).map_or(0, Vec::len)).sum();
            let links: u32 = c.entity_ids.iter().map(|e| degree.get(e).copied().unwrap_or(0)).sum();
            size.insert(c.id.clone(), c.entity_ids.len() as f64 + links as f64 / 2.0 + mentions as f64);
        }
        GraphStats { degree, entity_chunks, size }
    }

    /// 10 x ln(1 + size) / ln(1 + FULL_RATING_SIZE), at most 10, one decimal.
    fn rating(&self, id: &str) -> f32 {
        let s = self.size.get(id).copied().unwrap_or(0.0);
        let r = 10.0 * (1.0 + s).ln() / (1.0 + FULL_RATING_SIZE).ln();
        (r.clamp(0.0, 10.0) * 10.0).round() as f32 / 10.0
    }
}

/// Sentences of the chunks that mention the most members, ranked by how many member
/// names they contain.
fn representative_sentences(store: &dyn StoreWrite, c: &Community, m: &Material, stats: &GraphStats)
    -> Result<Vec<String>> {
    let mut per_chunk: HashMap<&str, usize> = HashMap::new();
    for e in &c.entity_ids {
        for ch in stats.entity_chunks.get(e).into_iter().flatten() {
            *per_chunk.entry(ch.as_str()).or_insert(0) += 1;
        }
    }
    let mut chunks: Vec<(&str, usize)> = per_chunk.into_iter().collect();
    chunks.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let ids: Vec<String> = chunks.iter().take(SENTENCE_CHUNKS).map(|(id, _)| id.to_string()).collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<String> = m.entities.iter().map(|e| e.name.to_lowercase()).filter(|n| n.chars().count() > 1).collect();
    let mut scored: Vec<(usize, usize, String)> = Vec::new();
    for (rank, ch) in store.chunks(&ids)?.iter().enumerate() {
        for (_, s) in rhizome_core::text::sentences(&ch.chunk.text) {
            let lower = s.to_lowercase();
            let hits = names.iter().filter(|n| lower.contains(n.as_str())).count();
            if hits > 0 && s.chars().count() <= 400 {
                scored.push((hits, rank, s.to_string()));
            }
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<String> = Vec::new();
    for (_, _, s) in scored {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

/// Vectors for search. An LLM report is embedded (its [`CommunityReport::search_text`]);
/// an extractive report, which lists the community's entities, gets the normalised mean
/// of its members' entity vectors — the same model's vectors, already computed, so
/// offline indexing pays no embedding pass for reports (on MuSiQue's 3,816 communities
/// that pass took 100 s with all-MiniLM-L6-v2). Members without vectors: embedded too.
fn report_vectors(store: &dyn StoreWrite, embedder: &dyn Embedder, made: &[CommunityReport], all: &[Community])
    -> Result<Vec<(String, Vec<f32>)>> {
    let mut out = Vec::with_capacity(made.len());
    let mut to_embed: Vec<&CommunityReport> = Vec::new();
    let by_id: HashMap<&str, &Community> = all.iter().map(|c| (c.id.as_str(), c)).collect();
    for r in made {
        let members = by_id.get(r.community_id.as_str()).map(|c| c.entity_ids.clone()).unwrap_or_default();
        let vs = if r.kind == ReportKind::Extractive { store.vectors(VectorKind::Entity, &members)? } else { Vec::new() };
        if vs.is_empty() {
            to_embed.push(r);
            continue;
        }
        let mut mean = vec![0f32; vs[0].1.len()];
        for (_, v) in &vs {
            for (m, x) in mean.iter_mut().zip(v) {
                *m += x;
            }
        }
        rhizome_core::l2_normalize(&mut mean);
        out.push((r.community_id.clone(), mean));
    }
    for group in to_embed.chunks(32) {
        let texts: Vec<String> = group.iter().map(|r| r.search_text()).collect();
        let vs = embedder.embed(&texts, EmbedKind::Passage)?;
        out.extend(group.iter().map(|r| r.community_id.clone()).zip(vs));
    }
    Ok(out)
}
