//! The primer: which community reports to read (HyDE: the question expanded into a
//! hypothetical report, embedded and compared with the report vectors), and the fold calls
//! that read them and propose the first follow-up questions.

use std::collections::HashMap;

use rhizome_core::llm::{PromptCall, PromptLlm};
use rhizome_core::{CommunityReport, EmbedKind, Result, VectorKind};
use serde_json::{json, Value};

use super::parse::parse_step;
use super::STAGE;
use crate::{Context, ContextKind, DriftConfig, QueryEnv};

/// A report chosen for the primer, with its cosine to the search vector.
#[derive(Debug, Clone)]
pub(crate) struct Ranked {
    pub report: CommunityReport,
    pub score: f32,
}

impl Ranked {
    /// The report as a context: kind `report`, id the community id, score the cosine.
    pub fn context(&self) -> Context {
        Context {
            kind: ContextKind::Report,
            id: self.report.community_id.clone(),
            text: self.report.text(),
            score: self.score,
            source: format!("community report (level {})", self.report.level),
            title: self.report.title.clone(),
            pages: None,
        }
    }
}

/// The report whose title and summary show the HyDE call what a report looks like: the
/// highest rated of `near` (the reports nearest the question), ties by community id.
pub(crate) fn sample_report(near: &[Ranked]) -> Option<&CommunityReport> {
    near.iter()
        .map(|r| &r.report)
        .min_by(|a, b| b.rating.total_cmp(&a.rating).then(a.community_id.cmp(&b.community_id)))
}

/// HyDE: one call drafts a hypothetical report answering `question`, in the shape of the
/// sample report of `near`. None (with a note) when the call fails or the draft is empty.
pub(crate) fn hypothetical_report(
    llm: &dyn PromptLlm,
    env: &QueryEnv,
    question: &str,
    near: &[Ranked],
    notes: &mut Vec<String>,
) -> Option<String> {
    let sample = sample_report(near)?;
    let template = format!("# {}\n\n{}", sample.title, sample.summary);
    let call = PromptCall::new("drift_hyde", STAGE, &[("question", question), ("template", &template)])
        .max_tokens(env.config.section::<DriftConfig>().max_output_tokens);
    match llm.run_one(call) {
        Ok(text) if !text.trim().is_empty() => Some(text.trim().to_string()),
        Ok(_) => {
            notes.push("HyDE call answered nothing: reports searched with the question itself".into());
            None
        }
        Err(e) => {
            notes.push(format!("HyDE call failed ({e}): reports searched with the question itself"));
            None
        }
    }
}

/// Embed `text` and take the `k` reports closest to it, best first (ties by community id):
/// the report vectors nearest it, then those reports alone, read by id. The question is
/// embedded as a query; a hypothetical report as a passage, like the reports it is
/// compared with (HyDE compares documents with documents).
pub(crate) fn closest_reports(env: &QueryEnv, text: &str, kind: EmbedKind, k: usize) -> Result<Vec<Ranked>> {
    if k == 0 {
        return Ok(Vec::new());
    }
    let v = env.embedder.embed(&[text.to_string()], kind)?.remove(0);
    // Over-fetch: a vector whose report is gone is skipped.
    let hits = env.store.vector_search(VectorKind::Report, &v, k.saturating_mul(2).max(k + 4))?;
    let ids: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
    let mut by_id: HashMap<String, CommunityReport> =
        env.store.community_reports_of(&ids)?.into_iter().map(|r| (r.community_id.clone(), r)).collect();
    let mut ranked: Vec<Ranked> =
        hits.into_iter().filter_map(|h| by_id.remove(&h.id).map(|report| Ranked { report, score: h.score })).collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.report.community_id.cmp(&b.report.community_id)));
    ranked.truncate(k);
    Ok(ranked)
}

/// Split ranks `0..n` into `folds` folds round-robin (rank i goes to fold i mod folds);
/// empty folds are left out.
pub(crate) fn folds(n: usize, folds: usize) -> Vec<Vec<usize>> {
    let f = folds.max(1).min(n.max(1));
    let mut out = vec![Vec::new(); f];
    for i in 0..n {
        out[i % f].push(i);
    }
    out.retain(|x| !x.is_empty());
    out
}

/// What the primer found: the joined answer of the usable folds, their mean score and
/// their follow-ups (in fold order).
#[derive(Debug, Clone, Default)]
pub(crate) struct PrimerResult {
    pub answer: Option<(String, f32)>,
    pub follow_ups: Vec<String>,
    /// Per fold: the reports read, and the fold's score or why it was dropped.
    pub folds: Vec<Value>,
}

/// Run one `drift_primer` call per fold, all at once.
pub(crate) fn run_folds(
    llm: &dyn PromptLlm,
    env: &QueryEnv,
    question: &str,
    ranked: &[Ranked],
    notes: &mut Vec<String>,
) -> PrimerResult {
    let split = folds(ranked.len(), env.config.section::<DriftConfig>().primer_folds);
    let calls: Vec<PromptCall> = split
        .iter()
        .map(|fold| {
            let reports = fold
                .iter()
                .enumerate()
                .map(|(n, &i)| format!("----- Report {} -----\n{}", n + 1, ranked[i].report.text().trim()))
                .collect::<Vec<_>>()
                .join("\n\n");
            PromptCall::new("drift_primer", STAGE, &[("question", question), ("reports", &reports)])
                .json()
                .max_tokens(env.config.section::<DriftConfig>().max_output_tokens)
        })
        .collect();
    let replies = llm.run(&calls);
    let mut out = PrimerResult::default();
    let mut answers: Vec<(String, f32)> = Vec::new();
    for (n, (fold, reply)) in split.iter().zip(replies).enumerate() {
        let ids: Vec<&str> = fold.iter().map(|&i| ranked[i].report.community_id.as_str()).collect();
        let parsed = reply.map_err(|e| format!("call failed: {e}")).and_then(|r| parse_step(&r, "intermediate_answer"));
        match parsed {
            Ok(step) => {
                for p in &step.problems {
                    notes.push(format!("primer fold {}: {p}", n + 1));
                }
                out.folds.push(json!({"reports": ids, "score": step.score}));
                answers.push((step.answer, step.score));
                out.follow_ups.extend(step.follow_ups);
            }
            Err(why) => {
                notes.push(format!("primer fold {} (reports {}) dropped: {why}", n + 1, ids.join(", ")));
                out.folds.push(json!({"reports": ids, "dropped": why}));
            }
        }
    }
    if !answers.is_empty() {
        let score = answers.iter().map(|a| a.1).sum::<f32>() / answers.len() as f32;
        let text = answers.into_iter().map(|a| a.0).collect::<Vec<_>>().join("\n\n");
        out.answer = Some((text, score));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_folds() {
        assert_eq!(folds(6, 3), [vec![0, 3], vec![1, 4], vec![2, 5]]);
        assert_eq!(folds(5, 3), [vec![0, 3], vec![1, 4], vec![2]]);
        assert_eq!(folds(2, 3), [vec![0], vec![1]]);
        assert_eq!(folds(3, 0), [vec![0, 1, 2]]);
        assert!(folds(0, 3).is_empty());
    }
}
