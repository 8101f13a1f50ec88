//! Community reports and claims in `local`'s context (Microsoft GraphRAG's local search
//! gives them a share of the budget).
//!
//! - Reports: of every community (any level) holding at least one mapped entity, ranked by
//!   how many mapped entities it holds, then by impact rating, then finer level first;
//!   added whole while they fit `community_prop` of the budget (a report that does not fit
//!   is skipped, a smaller one may still fit).
//! - Claims (covariates) of the selected entities, by entity order, while they fit what
//!   the entity/relationship share left.

use std::collections::{HashMap, HashSet};

use rhizome_core::text::count_tokens;
use rhizome_core::{CommunityReport, Result};

use crate::graph::Graph;
use crate::{Context, ContextKind, QueryEnv};

/// Report contexts within `budget` tokens, and the tokens used. Empty when the index has
/// no reports.
pub(crate) fn report_contexts(
    env: &QueryEnv,
    g: &Graph,
    mapped: &[(u32, f32)],
    budget: usize,
) -> Result<(Vec<Context>, usize, usize)> {
    let n_reports = env.store.community_report_count()? as usize;
    if n_reports == 0 || budget == 0 {
        return Ok((Vec::new(), 0, n_reports));
    }
    let wanted: Vec<String> = mapped.iter().map(|&(e, _)| g.entity_ids[e as usize].clone()).collect();
    let communities = env.store.communities_of(&wanted)?;
    let ids: Vec<String> = communities.iter().map(|c| c.id.clone()).collect();
    let reports = env.store.community_reports_of(&ids)?;
    let wanted: HashSet<&str> = wanted.iter().map(String::as_str).collect();
    let matches: HashMap<&str, usize> = communities
        .iter()
        .map(|c| (c.id.as_str(), c.entity_ids.iter().filter(|e| wanted.contains(e.as_str())).count()))
        .collect();
    let mut ranked: Vec<(&CommunityReport, usize)> =
        reports.iter().filter_map(|r| matches.get(r.community_id.as_str()).map(|&n| (r, n))).collect();
    ranked.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(b.0.rating.total_cmp(&a.0.rating))
            .then(b.0.level.cmp(&a.0.level))
            .then(a.0.community_id.cmp(&b.0.community_id))
    });
    let (mut out, mut used) = (Vec::new(), 0);
    for (r, n) in &ranked {
        let text = r.text();
        let t = count_tokens(&text);
        if used + t > budget {
            continue;
        }
        used += t;
        out.push(Context {
            kind: ContextKind::Report,
            id: r.community_id.clone(),
            text,
            score: *n as f32 / mapped.len().max(1) as f32,
            source: format!("community {} (level {})", r.community_id, r.level),
            title: r.title.clone(),
            pages: None,
        });
    }
    Ok((out, used, n_reports))
}

/// Claims about `entity_ids` within `budget` tokens.
pub(crate) fn claim_contexts(env: &QueryEnv, g: &Graph, entity_ids: &[String], budget: usize) -> Result<Vec<Context>> {
    if budget == 0 || entity_ids.is_empty() {
        return Ok(Vec::new());
    }
    let claims = env.store.covariates_of(entity_ids)?;
    let order: HashMap<&str, usize> = entity_ids.iter().enumerate().map(|(i, e)| (e.as_str(), i)).collect();
    let rank = |c: &rhizome_core::Covariate| {
        let s = order.get(c.subject_id.as_str()).copied().unwrap_or(usize::MAX);
        let o = c.object_id.as_deref().and_then(|o| order.get(o).copied()).unwrap_or(usize::MAX);
        s.min(o)
    };
    let mut claims: Vec<_> = claims.iter().collect();
    claims.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.id.cmp(&b.id)));
    let (mut out, mut used) = (Vec::new(), 0);
    for c in claims {
        let text = c.text();
        let t = count_tokens(&text);
        if used + t > budget {
            break;
        }
        used += t;
        out.push(Context {
            kind: ContextKind::Claim,
            id: c.id.clone(),
            text,
            score: 1.0 / (1 + rank(c).min(1000)) as f32,
            source: format!(
                "claim about {}",
                g.entity(&c.subject_id).map_or(c.subject_id.as_str(), |e| g.entity_names[e as usize].as_str())
            ),
            title: String::new(),
            pages: None,
        });
    }
    Ok(out)
}
