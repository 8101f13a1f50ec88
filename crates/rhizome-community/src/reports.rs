//! Keeping communities and their reports current: [`refresh`] recomputes communities when
//! the graph changed since they were computed, then writes a report for every community
//! without a current one — deepest level first, so that a large community can use its
//! sub-communities' reports — and embeds the reports for search.
//!
//! A report is current while the fingerprint of its inputs ([`input_fingerprint`]) is the
//! one it was written for, so an unchanged community keeps its report across
//! recomputations, a community whose members changed in any way the report shows gets a
//! new one, and with an LLM configured an extractive report (written offline, or standing
//! in for a failed LLM call) is replaced by an LLM one. LLM calls go
//! through the configured stack, so a rerun pays for nothing it already did.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use rhizome_core::config_sensemaking::CommunitiesConfig;
use rhizome_core::llm::{PromptCall, PromptLlm};
use rhizome_core::{
    Community, CommunityReport, EmbedKind, Embedder, Error, GraphData, ReportKind, Result, StoreRead, StoreWrite,
    VectorKind,
};
use serde::Serialize;

use crate::build::compute;
use crate::context::Material;
use crate::material::MaterialReader;
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

/// Recompute communities if the graph changed (or `force`), then (re)write every report
/// whose inputs changed since it was written.
///
/// A report's fingerprint covers everything it is written from ([`input_fingerprint`]):
/// its members as they are now (names, types, descriptions, degrees, importance), the
/// relations among them, claims, the chunks its sentences come from, its rating and its
/// sub-communities' reports. So after any sequence of deletes and re-indexing, the
/// reports equal those of indexing the final documents once. `force` rewrites every
/// report (LLM calls go through the cache: an unchanged prompt costs nothing).
pub fn refresh(
    store: &mut dyn StoreWrite,
    embedder: &dyn Embedder,
    llm: Option<&dyn PromptLlm>,
    cfg: &CommunitiesConfig,
    force: bool,
    cancel: &AtomicBool,
) -> Result<CommunityOutcome> {
    let mut out = CommunityOutcome::default();
    let version = store.graph_version()?;
    let mut data: Option<GraphData> = None;
    if force || store.communities_version()? != Some(version) {
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
    let upgrade = |r: &CommunityReport| llm.is_some() && r.kind == ReportKind::Extractive;
    // Nothing changed since every report was last checked: done without reading the graph.
    if !out.recomputed
        && store.reports_version()? == Some(version)
        && communities.iter().all(|c| current.get(&c.id).is_some_and(|r| !upgrade(r)))
    {
        out.reports_reused = communities.len();
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
    let mut reader = MaterialReader::new(&*store, cfg.material_cache_mb)?;
    let by_id: HashMap<&str, &Community> = communities.iter().map(|c| (c.id.as_str(), c)).collect();
    let max_level = communities.iter().map(|c| c.level).max().unwrap_or(0);
    // Input fingerprints of the reports done so far (children before parents).
    let mut fingerprints: HashMap<String, String> = HashMap::new();
    for level in (0..=max_level).rev() {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let at: Vec<&Community> = communities.iter().filter(|c| c.level == level).collect();
        let mut made: Vec<CommunityReport> = Vec::new();
        for group in at.chunks(LLM_BATCH) {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled);
            }
            let t = std::time::Instant::now();
            let mut todo = Vec::new();
            for &c in group {
                let m = material(&mut reader, &*store, c, &by_id, &current, &stats.degree)?;
                let sentences = representative_sentences(&mut reader, &*store, c, &m, &stats)?;
                let children: Vec<&str> =
                    c.children.iter().filter_map(|id| fingerprints.get(id).map(String::as_str)).collect();
                let fp = input_fingerprint(&m, &sentences, stats.rating(&c.id), &children);
                fingerprints.insert(c.id.clone(), fp.clone());
                // An imported report (GraphRAG's own) stands while its communities do.
                let reusable = current.get(&c.id).is_some_and(|r| {
                    (r.fingerprint == fp && !upgrade(r)) || (r.kind == ReportKind::Imported && !out.recomputed)
                });
                if reusable && !force {
                    out.reports_reused += 1;
                } else {
                    todo.push((c, m, sentences, fp));
                }
            }
            add_time(&mut out, "material", t);
            if todo.is_empty() {
                continue;
            }
            let t = std::time::Instant::now();
            let built: Vec<_> = match llm {
                Some(_) => todo.iter().map(|(_, m, _, _)| m.build(cfg.report_max_input_tokens)).collect(),
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
                            PromptCall::new(
                                "community_report",
                                "communities",
                                &[("context", b.text.as_str()), ("max_words", max_words.as_str())],
                            )
                            .json()
                            .max_tokens(cfg.report_max_tokens)
                        })
                        .collect();
                    llm.run(&calls).into_iter().map(Some).collect()
                }
                None => todo.iter().map(|_| None).collect(),
            };
            add_time(&mut out, "llm", t);
            let t = std::time::Instant::now();
            for ((c, m, sentences, fp), reply) in todo.into_iter().zip(replies) {
                let parsed = match reply {
                    Some(Ok(text)) => match parse_report(&text, c) {
                        Ok(r) => Some(r),
                        Err(why) => {
                            if out.llm_failures < MAX_FAILURE_NOTES {
                                out.notes.push(format!(
                                    "community {}: LLM report unusable ({why}); extractive report kept",
                                    c.id
                                ));
                            }
                            None
                        }
                    },
                    Some(Err(e)) => {
                        if out.llm_failures < MAX_FAILURE_NOTES {
                            out.notes
                                .push(format!("community {}: LLM call failed ({e}); extractive report kept", c.id));
                        }
                        None
                    }
                    None => None,
                };
                let mut report = match parsed {
                    Some(r) => {
                        out.reports_llm += 1;
                        r
                    }
                    None => {
                        out.llm_failures += llm.is_some() as usize;
                        out.reports_extractive += 1;
                        extractive_report(&m, &sentences, stats.rating(&c.id), cfg)
                    }
                };
                report.fingerprint = fp;
                made.push(report);
            }
            add_time(&mut out, "extractive", t);
        }
        if made.is_empty() {
            continue;
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
    store.set_reports_version(version)?;
    if out.llm_failures > MAX_FAILURE_NOTES {
        out.notes.push(format!("{} LLM reports failed in all; extractive reports stand in", out.llm_failures));
    }
    Ok(out)
}

/// Everything a report is written from, hashed: members (name, type, description,
/// importance, degree), the relations among them, claims, the representative sentences,
/// the rating and the sub-communities' report fingerprints. A report whose fingerprint
/// matches would be written the same again, so it is kept.
pub fn input_fingerprint(m: &Material, sentences: &[String], rating: f32, children: &[&str]) -> String {
    let mut parts: Vec<String> = vec![m.community.id.clone()];
    for e in &m.entities {
        let deg = m.degree.get(&e.id).copied().unwrap_or(0);
        parts.push(format!("e\t{}\t{}\t{}\t{}\t{:?}\t{deg}", e.id, e.name, e.entity_type, e.description, e.importance));
    }
    let mut rels: Vec<&rhizome_core::Relation> = m.relations.iter().collect();
    rels.sort_by(|a, b| a.id.cmp(&b.id));
    for r in rels {
        parts.push(format!(
            "r\t{}\t{}\t{}\t{}\t{}\t{}",
            r.id, r.source_id, r.target_id, r.rel_type, r.description, r.weight
        ));
    }
    let mut claims: Vec<String> = m.claims.iter().map(|c| format!("c\t{c:?}")).collect();
    claims.sort();
    parts.extend(claims);
    parts.extend(sentences.iter().map(|s| format!("s\t{s}")));
    parts.push(format!("rating\t{rating}"));
    let mut children: Vec<&str> = children.to_vec();
    children.sort_unstable();
    parts.extend(children.iter().map(|c| format!("child\t{c}")));
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    rhizome_core::ids::content_id("rfp_", &refs)
}

pub(crate) fn material<'a>(
    reader: &mut MaterialReader,
    store: &dyn StoreRead,
    c: &'a Community,
    by_id: &HashMap<&str, &'a Community>,
    current: &'a HashMap<String, CommunityReport>,
    degree: &'a HashMap<String, u32>,
) -> Result<Material<'a>> {
    let child_reports = c
        .children
        .iter()
        .filter_map(|id| {
            let child = *by_id.get(id.as_str())?;
            Some((current.get(id)?, child))
        })
        .collect();
    Ok(Material {
        community: c,
        entities: reader.entities(store, &c.entity_ids)?,
        relations: reader.relations_among(store, &c.entity_ids)?,
        claims: reader.claims(store, &c.entity_ids)?,
        degree,
        child_reports,
    })
}

/// A community this large (members + relations + mentions) rates 10 offline. A fixed
/// scale, not the index's largest community, so that a report depends on its own
/// community only (deleting a document elsewhere leaves it as it was).
const FULL_RATING_SIZE: f64 = 500.0;

/// Degrees, mentions and the sizes behind extractive ratings.
pub(crate) struct GraphStats {
    pub(crate) degree: HashMap<String, u32>,
    pub(crate) entity_chunks: HashMap<String, Vec<String>>,
    size: HashMap<String, f64>,
}

impl GraphStats {
    pub(crate) fn new(data: &GraphData, communities: &[Community]) -> GraphStats {
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
    pub(crate) fn rating(&self, id: &str) -> f32 {
        let s = self.size.get(id).copied().unwrap_or(0.0);
        let r = 10.0 * (1.0 + s).ln() / (1.0 + FULL_RATING_SIZE).ln();
        (r.clamp(0.0, 10.0) * 10.0).round() as f32 / 10.0
    }
}

/// Sentences of the chunks that mention the most members, ranked by how many member
/// names they contain.
pub(crate) fn representative_sentences(
    reader: &mut MaterialReader,
    store: &dyn StoreRead,
    c: &Community,
    m: &Material,
    stats: &GraphStats,
) -> Result<Vec<String>> {
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
    let names: Vec<String> =
        m.entities.iter().map(|e| e.name.to_lowercase()).filter(|n| n.chars().count() > 1).collect();
    let mut scored: Vec<(usize, usize, String)> = Vec::new();
    for (rank, ch) in reader.chunks(store, &ids)?.iter().enumerate() {
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
fn report_vectors(
    store: &dyn StoreWrite,
    embedder: &dyn Embedder,
    made: &[CommunityReport],
    all: &[Community],
) -> Result<Vec<(String, Vec<f32>)>> {
    let mut out = Vec::with_capacity(made.len());
    let mut to_embed: Vec<&CommunityReport> = Vec::new();
    let by_id: HashMap<&str, &Community> = all.iter().map(|c| (c.id.as_str(), c)).collect();
    for r in made {
        let members = by_id.get(r.community_id.as_str()).map(|c| c.entity_ids.clone()).unwrap_or_default();
        let vs =
            if r.kind == ReportKind::Extractive { store.vectors(VectorKind::Entity, &members)? } else { Vec::new() };
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
