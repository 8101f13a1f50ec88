//! `global`: Microsoft GraphRAG's global search, map-reduce over community reports.
//!
//! 1. The reports covering the graph at `global.community_level` (that level's
//!    communities plus the leaves above it, [`rhizome_core::community::reports_at_level`]),
//!    those rated below `min_rating` left out, numbered 1.. in a stable order, shuffled
//!    with `shuffle_seed` and packed into batches of `map_max_tokens`.
//! 2. Map: one call per batch ("analyst"), `concurrency` at a time, each returning JSON
//!    points `{description, score 0-100, reports}`. A failed or unreadable reply loses
//!    that analyst's points, with a note.
//! 3. Reduce: points with score > 0, best first, packed into `reduce_max_tokens` and
//!    labelled by analyst; one call writes the answer in `response_type`. No point at all:
//!    the insufficient-evidence answer, with no reduce call.
//!
//! Offline (no LLM): of the 100 reports at that level nearest the question, the
//! `offline_reports` most relevant — the cosine of the report's embedding, min-max
//! normalised among those 100, weighted 0.7, plus its impact rating / 10, weighted 0.3 —
//! shown as they are. Only those reports are read (through the report vectors' index), so
//! the cost follows the question and not the number of reports. An index without reports
//! falls back to `basic`, with a note saying how to build them.

pub(crate) mod points;

mod settings;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use rhizome_core::community::reports_at_level;
use rhizome_core::config::Section;
use rhizome_core::llm::PromptCall;
use rhizome_core::text::count_tokens;
use rhizome_core::{CommunityReport, EmbedKind, Result, VectorKind};
use serde_json::json;

pub use self::settings::GlobalConfig;
use crate::{
    ms, Basic, Context, ContextKind, Method, MethodEntry, QueryEnv, Retrieval, Retriever, INSUFFICIENT_EVIDENCE,
};
use points::{batches, pack_points, parse_points, render_batch, shuffle, MapReport, Point};

/// Weight of relevance (min-max normalised cosine) against the impact rating offline.
const OFFLINE_RELEVANCE_WEIGHT: f32 = 0.7;

/// Reports at the level nearest the question that are ranked offline (or four times
/// `offline_reports`, if more).
const OFFLINE_POOL: usize = 100;

pub struct Global;

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Global,
    description: "GraphRAG global search: map-reduce over community reports",
    reads_graph: false,
    settings: &[&GlobalConfig::KIND],
    retriever: |_| Box::new(Global),
    prompts: &[("global_map", include_str!("global_map.txt")), ("global_reduce", include_str!("global_reduce.txt"))],
}];

impl Retriever for Global {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        match env.llm {
            Some(_) => map_reduce(env, question),
            None => offline(env, question),
        }
    }
}

/// An index without reports: `basic`, with a note on how to build them.
fn without_reports(env: &QueryEnv, question: &str) -> Result<Retrieval> {
    let mut r = Basic.retrieve(env, question)?;
    r.notes.push(
        "no community reports in the index: global fell back to basic; build them with \
         `rhizome communities` (they are built by `rhizome index` unless communities.enabled = false)"
            .into(),
    );
    Ok(r)
}

/// Whether a report covers the graph at `level` (see [`reports_at_level`]): `leaves` holds
/// the ids of its shallower reports' communities that are not split further.
fn at_level(r: &CommunityReport, level: u32, leaves: &HashSet<String>) -> bool {
    r.level == level || (r.level < level && leaves.contains(&r.community_id))
}

/// The `note` for a level with no report rated `min_rating` or more.
fn none_at_level(cfg: &GlobalConfig) -> String {
    format!(
        "no report at level {} has a rating >= {}: lower global.min_rating or pick another level",
        cfg.community_level, cfg.min_rating
    )
}

fn report_context(r: &CommunityReport, score: f32) -> Context {
    Context {
        kind: ContextKind::Report,
        id: r.community_id.clone(),
        text: r.text(),
        score,
        source: format!("community {} (level {})", r.community_id, r.level),
        title: r.title.clone(),
        pages: None,
    }
}

/// With an LLM: every report at the level is read, by one analyst or another.
fn map_reduce(env: &QueryEnv, question: &str) -> Result<Retrieval> {
    let cfg = env.config.section::<GlobalConfig>();
    let mut out = Retrieval::default();
    let Some(llm) = env.llm else { return Ok(out) };
    let t = Instant::now();
    let communities = env.store.communities()?;
    let all = env.store.community_reports()?;
    if all.is_empty() {
        return without_reports(env, question);
    }
    let mut selected: Vec<&CommunityReport> = reports_at_level(&communities, &all, cfg.community_level)
        .into_iter()
        .filter(|r| r.rating >= cfg.min_rating)
        .collect();
    selected.sort_by(|a, b| (a.level, &a.community_id).cmp(&(b.level, &b.community_id)));
    out.timings_ms.insert("load_reports".into(), ms(t));
    let levels: BTreeSet<u32> = selected.iter().map(|r| r.level).collect();
    out.extra.insert(
        "reports".into(),
        json!({"level": cfg.community_level, "selected": selected.len(), "levels": levels, "in_index": all.len()}),
    );
    if selected.is_empty() {
        out.notes.push(none_at_level(&cfg));
        return Ok(out);
    }
    let selected = &selected[..];
    let t = Instant::now();
    let mut reports: Vec<MapReport> = selected
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let text = r.text();
            MapReport { number: i + 1, tokens: count_tokens(&text), text }
        })
        .collect();
    shuffle(&mut reports, cfg.shuffle_seed);
    let batches = batches(reports, cfg.map_max_tokens);
    let calls: Vec<PromptCall> = batches
        .iter()
        .map(|b| {
            PromptCall::new("global_map", "query.global", &[("question", question), ("reports", &render_batch(b))])
                .json()
                .max_tokens(cfg.map_max_output_tokens)
        })
        .collect();
    let mut replies = Vec::with_capacity(calls.len());
    for group in calls.chunks(cfg.concurrency.max(1)) {
        replies.extend(llm.run(group));
    }
    out.timings_ms.insert("map".into(), ms(t));
    let mut points: Vec<Point> = Vec::new();
    let mut failed = 0;
    for (i, reply) in replies.into_iter().enumerate() {
        let analyst = i + 1;
        match reply.map(|text| parse_points(&text, analyst)) {
            Ok(Some(p)) => points.extend(p),
            Ok(None) => {
                failed += 1;
                out.notes.push(format!("analyst {analyst}: reply had no readable points; skipped"));
            }
            Err(e) => {
                failed += 1;
                out.notes.push(format!("analyst {analyst}: map call failed ({e}); skipped"));
            }
        }
    }
    let total_points = points.len();
    let t = Instant::now();
    let (packed, kept) = pack_points(points, cfg.reduce_max_tokens);
    let mut map_extra = json!({
        "batches": batches.len(),
        "batch_reports": batches.iter().map(|b| b.iter().map(|r| r.number).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "batch_tokens": batches.iter().map(|b| b.iter().map(|r| r.tokens).sum::<usize>()).collect::<Vec<_>>(),
        "calls": batches.len(),
        "failed": failed,
        "points": total_points,
    });
    if kept.is_empty() {
        out.notes.push("no analyst found anything relevant (every point scored 0): no reduce call".into());
        out.answer = Some(INSUFFICIENT_EVIDENCE.to_string());
        map_extra["points_kept"] = json!(0);
        out.extra.insert("map".into(), map_extra);
        return Ok(out);
    }
    let reply = llm.run_one(
        PromptCall::new(
            "global_reduce",
            "query.global",
            &[("question", question), ("points", &packed), ("response_type", &cfg.response_type)],
        )
        .max_tokens(cfg.reduce_max_output_tokens),
    );
    out.timings_ms.insert("reduce".into(), ms(t));
    match reply {
        Ok(text) if !text.trim().is_empty() => out.answer = Some(text.trim().to_string()),
        Ok(_) | Err(_) => {
            let why = match &reply {
                Err(e) => e.to_string(),
                _ => "empty reply".into(),
            };
            out.notes.push(format!("reduce call failed ({why}): the answer lists the best points instead"));
            out.answer =
                Some(kept.iter().take(5).map(|p| format!("- {}", p.description)).collect::<Vec<_>>().join("\n"));
        }
    }
    map_extra["points_kept"] = json!(kept.len());
    out.extra.insert("map".into(), map_extra);
    out.extra.insert("reduce".into(), json!({"points": kept.len(), "tokens": count_tokens(&packed)}));
    // Evidence: the kept points, then the reports they cite (by their best point).
    let mut cited: HashMap<usize, f32> = HashMap::new();
    for p in &kept {
        out.contexts.push(Context {
            kind: ContextKind::Point,
            id: format!("analyst-{}", p.analyst),
            text: p.description.clone(),
            score: p.score / 100.0,
            source: format!("analyst {}", p.analyst),
            title: String::new(),
            pages: None,
        });
        for &n in &p.reports {
            let e = cited.entry(n).or_insert(0.0);
            *e = e.max(p.score / 100.0);
        }
    }
    let mut cited: Vec<(usize, f32)> = cited.into_iter().filter(|(n, _)| *n >= 1 && *n <= selected.len()).collect();
    cited.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for (n, score) in cited.into_iter().take(env.config.retrieval.top_k) {
        out.contexts.push(report_context(selected[n - 1], score));
    }
    Ok(out)
}

/// Offline: the `offline_reports` best of the [`OFFLINE_POOL`] reports at the level
/// nearest the question, by [`OFFLINE_RELEVANCE_WEIGHT`] x their cosine min-max
/// normalised among them + the rest x rating / 10. The pool is read from the report
/// vectors nearest the question, twice its size at first (most reports are of other
/// levels), four times as many while the level has too few among them; never every report.
fn offline(env: &QueryEnv, question: &str) -> Result<Retrieval> {
    let mut out = Retrieval::default();
    let cfg = env.config.section::<GlobalConfig>();
    let want = cfg.offline_reports.max(1);
    let pool_size = OFFLINE_POOL.max(4 * want);
    let w = OFFLINE_RELEVANCE_WEIGHT;
    let t = Instant::now();
    let q = env.embedder.embed(&[question.to_string()], EmbedKind::Query)?.remove(0);
    let mut n = 2 * pool_size;
    let mut reports: HashMap<String, CommunityReport> = HashMap::new();
    let mut leaves: HashSet<String> = HashSet::new();
    let (pool, read) = loop {
        let hits = env.store.vector_search(VectorKind::Report, &q, n)?;
        let new: Vec<String> = hits.iter().filter(|h| !reports.contains_key(&h.id)).map(|h| h.id.clone()).collect();
        for r in env.store.community_reports_of(&new)? {
            reports.insert(r.community_id.clone(), r);
        }
        let shallower: Vec<String> =
            new.iter().filter(|id| reports.get(*id).is_some_and(|r| r.level < cfg.community_level)).cloned().collect();
        leaves.extend(env.store.leaf_communities(&shallower)?);
        let mut pool: Vec<(&CommunityReport, f32)> = hits
            .iter()
            .filter_map(|h| reports.get(&h.id).map(|r| (r, h.score)))
            .filter(|(r, _)| r.rating >= cfg.min_rating && at_level(r, cfg.community_level, &leaves))
            .collect();
        if pool.len() >= pool_size || hits.len() < n {
            pool.truncate(pool_size);
            break (pool, hits.len());
        }
        n = n.saturating_mul(4);
    };
    let pooled = pool.len();
    let (lo, hi) = pool.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), p| (l.min(p.1), h.max(p.1)));
    let mut ranked: Vec<(&CommunityReport, f32)> = pool
        .into_iter()
        .map(|(r, cos)| {
            let rel = if hi > lo { (cos - lo) / (hi - lo) } else { 1.0 };
            (r, w * rel + (1.0 - w) * (r.rating / 10.0).clamp(0.0, 1.0))
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.community_id.cmp(&b.0.community_id)));
    ranked.truncate(want);
    out.timings_ms.insert("rank_reports".into(), ms(t));
    if read == 0 {
        // Counted only now: a count is a read of every report on some backends.
        if env.store.community_report_count()? == 0 {
            return without_reports(env, question);
        }
        out.notes.push("no report has a vector: run `rhizome communities` to embed them".into());
        return Ok(out);
    }
    let levels: BTreeSet<u32> = ranked.iter().map(|(r, _)| r.level).collect();
    out.extra.insert(
        "reports".into(),
        json!({"level": cfg.community_level, "read": read, "pool": pooled, "levels": levels}),
    );
    if ranked.is_empty() {
        out.notes.push(none_at_level(&cfg));
        return Ok(out);
    }
    for (r, score) in &ranked {
        out.contexts.push(report_context(r, *score));
    }
    out.notes.push(format!(
        "no LLM configured: map-reduce skipped; of the {} reports at level {} nearest the question, the {} \
         most relevant (min-max cosine among them x{w} + impact rating / 10 x{:.1}) are shown as they are",
        pooled,
        cfg.community_level,
        out.contexts.len(),
        1.0 - w
    ));
    Ok(out)
}
