//! Scoring the candidate relations of one depth of `tog`.
//!
//! - `llm`: one `tog_prune` call per frontier entity (all of a depth run together), the
//!   candidates numbered; the reply maps numbers to scores in 0..1. A failed or garbled
//!   reply: that entity's candidates are scored `semantic`, with a note.
//! - `semantic`: cosine between the question (a query embedding) and the candidate's
//!   text (a passage embedding); the candidates of a depth are embedded in one batch.
//! - `bm25`: BM25 (k1 1.2, b 0.75) of the candidate's text against the question, the
//!   candidates of the depth being the collection; divided by the depth's best score so
//!   that scores lie in 0..1 like the others.

use std::collections::{HashMap, HashSet};

use rhizome_core::llm::PromptCall;
use rhizome_core::text::{bm25_terms, token_spans};
use rhizome_core::{dot, EmbedKind, Result};
use serde_json::Value;

use super::beam::{Frontier, Path};
use crate::graph::Graph;
use crate::paths::render_hop;
use crate::QueryEnv;

const K1: f32 = 1.2;
const B: f32 = 0.75;
/// Tokens of a relation's description kept in its candidate text.
const DESCRIPTION_TOKENS: usize = 40;

/// How a depth's candidates are scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    Llm,
    Semantic,
    Bm25,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Llm => "llm",
            Strategy::Semantic => "semantic",
            Strategy::Bm25 => "bm25",
        }
    }
}

/// A candidate relation as text: `A -[type]-> B`, then `: description` (its first
/// [`DESCRIPTION_TOKENS`] tokens) when the description says more than the triple.
pub(crate) fn relation_text(g: &Graph, r: u32, description: Option<&str>) -> String {
    let shown = render_hop(g, r);
    let rel = &g.relations[r as usize];
    let plain =
        format!("{} {} {}", g.entity_names[rel.source as usize], rel.rel_type, g.entity_names[rel.target as usize]);
    match description.map(str::trim).filter(|d| !d.is_empty() && *d != plain) {
        Some(d) => {
            let spans = token_spans(d);
            match spans.get(DESCRIPTION_TOKENS) {
                Some(&(start, _)) => format!("{shown}: {} ...", d[..start].trim_end()),
                None => format!("{shown}: {d}"),
            }
        }
        None => shown,
    }
}

/// BM25 scores of `docs` against `question`, the docs being the collection, divided by
/// the best (all 0 when no doc shares a term with the question).
pub(crate) fn bm25_scores(question: &str, docs: &[&str]) -> Vec<f32> {
    let mut q_terms = bm25_terms(question);
    q_terms.sort();
    q_terms.dedup();
    let doc_terms: Vec<Vec<String>> = docs.iter().map(|d| bm25_terms(d)).collect();
    let n = docs.len() as f32;
    let avgdl = (doc_terms.iter().map(Vec::len).sum::<usize>() as f32 / n.max(1.0)).max(1.0);
    let df: HashMap<&str, f32> =
        q_terms.iter().map(|t| (t.as_str(), doc_terms.iter().filter(|d| d.contains(t)).count() as f32)).collect();
    let raw: Vec<f32> = doc_terms
        .iter()
        .map(|d| {
            let dl = d.len() as f32;
            q_terms
                .iter()
                .map(|t| {
                    let tf = d.iter().filter(|x| *x == t).count() as f32;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let df = df[t.as_str()];
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / avgdl))
                })
                .sum()
        })
        .collect();
    let best = raw.iter().copied().fold(0.0f32, f32::max);
    raw.iter().map(|&s| if best > 0.0 { s / best } else { 0.0 }).collect()
}

/// Cosines between the question vector `q` and the relations `rels` (texts in `texts`),
/// embedded in one batch.
fn semantic_scores(env: &QueryEnv, q: &[f32], rels: &[u32], texts: &HashMap<u32, String>) -> Result<HashMap<u32, f32>> {
    if rels.is_empty() {
        return Ok(HashMap::new());
    }
    let batch: Vec<String> = rels.iter().map(|r| texts[r].clone()).collect();
    let vecs = env.embedder.embed(&batch, EmbedKind::Passage)?;
    Ok(rels.iter().zip(vecs).map(|(&r, v)| (r, dot(q, &v))).collect())
}

/// Distinct relations of `fronts`, in order.
fn distinct_rels<'a>(fronts: impl IntoIterator<Item = &'a Frontier>) -> Vec<u32> {
    let mut seen = HashSet::new();
    fronts.into_iter().flat_map(|f| f.cands.iter().map(|c| c.0)).filter(|r| seen.insert(*r)).collect()
}

/// Frontier entities with more than `max` candidates keep the `max` whose text best
/// matches the question (BM25 over that entity's candidates), in graph order. Returns how
/// many entities were cut.
pub(crate) fn cap_candidates(
    question: &str,
    fronts: &mut [Frontier],
    texts: &HashMap<u32, String>,
    max: usize,
) -> usize {
    let mut cut = 0;
    for f in fronts.iter_mut().filter(|f| f.cands.len() > max) {
        let docs: Vec<&str> = f.cands.iter().map(|c| texts[&c.0].as_str()).collect();
        let scores = bm25_scores(question, &docs);
        let mut order: Vec<usize> = (0..f.cands.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        order.truncate(max);
        order.sort();
        f.cands = order.into_iter().map(|i| f.cands[i]).collect();
        cut += 1;
    }
    cut
}

/// The scores of one depth: per tail entity, (relation, other end, score).
pub(crate) struct DepthScores {
    pub by_tail: HashMap<u32, Vec<(u32, u32, f32)>>,
    pub llm_calls: usize,
}

/// Score the candidates of `fronts` with `strategy` (`Llm` only when `env.llm` is Some).
/// `q` is the question's query embedding, `texts` every candidate's text.
#[allow(clippy::too_many_arguments)]
pub(crate) fn score_depth(
    env: &QueryEnv,
    g: &Graph,
    question: &str,
    q: &[f32],
    strategy: Strategy,
    beam: &[Path],
    fronts: &[Frontier],
    texts: &HashMap<u32, String>,
    notes: &mut Vec<String>,
) -> Result<DepthScores> {
    let mut by_tail = HashMap::new();
    let mut llm_calls = 0;
    let attach = |f: &Frontier, score: &dyn Fn(usize, u32) -> f32| -> Vec<(u32, u32, f32)> {
        f.cands.iter().enumerate().map(|(i, &(r, o))| (r, o, score(i, r))).collect()
    };
    match (strategy, env.llm) {
        (Strategy::Bm25, _) => {
            let rels = distinct_rels(fronts);
            let docs: Vec<&str> = rels.iter().map(|r| texts[r].as_str()).collect();
            let scores: HashMap<u32, f32> = rels.iter().copied().zip(bm25_scores(question, &docs)).collect();
            for f in fronts {
                by_tail.insert(f.tail, attach(f, &|_, r| scores[&r]));
            }
        }
        (Strategy::Llm, Some(llm)) => {
            let calls: Vec<PromptCall> = fronts.iter().map(|f| prune_call(g, question, beam, f, texts)).collect();
            llm_calls += calls.len();
            let replies = llm.run(&calls);
            let mut failed: Vec<&Frontier> = Vec::new();
            for (f, reply) in fronts.iter().zip(replies) {
                let name = &g.entity_names[f.tail as usize];
                match reply {
                    Ok(text) => match parse_scores(&text, f.cands.len()) {
                        Some(s) => {
                            by_tail.insert(f.tail, attach(f, &|i, _| s[i]));
                        }
                        None => {
                            let shown: String = text.chars().take(80).collect();
                            notes.push(format!(
                                "LLM tog_prune reply for {name:?} unusable ({shown:?}): \
                                its relations were scored semantic instead"
                            ));
                            failed.push(f);
                        }
                    },
                    Err(e) => {
                        notes.push(format!(
                            "LLM tog_prune call for {name:?} failed ({e}): its \
                            relations were scored semantic instead"
                        ));
                        failed.push(f);
                    }
                }
            }
            let scores = semantic_scores(env, q, &distinct_rels(failed.iter().copied()), texts)?;
            for f in failed {
                by_tail.insert(f.tail, attach(f, &|_, r| scores[&r]));
            }
        }
        (Strategy::Semantic | Strategy::Llm, _) => {
            let scores = semantic_scores(env, q, &distinct_rels(fronts), texts)?;
            for f in fronts {
                by_tail.insert(f.tail, attach(f, &|_, r| scores[&r]));
            }
        }
    }
    Ok(DepthScores { by_tail, llm_calls })
}

/// The `tog_prune` call for one frontier entity.
fn prune_call(g: &Graph, question: &str, beam: &[Path], f: &Frontier, texts: &HashMap<u32, String>) -> PromptCall {
    let reached: Vec<String> =
        f.paths.iter().map(|&i| &beam[i]).filter(|p| !p.hops.is_empty()).map(|p| p.render(g)).collect();
    let reached = if reached.is_empty() { "(start entity)".to_string() } else { reached.join("\n") };
    let relations: Vec<String> =
        f.cands.iter().enumerate().map(|(i, c)| format!("{}. {}", i + 1, texts[&c.0])).collect();
    let entity = &g.entity_names[f.tail as usize];
    let max_tokens = (40 + 12 * f.cands.len()).min(1000) as u32;
    PromptCall::new(
        "tog_prune",
        "query.tog",
        &[("question", question), ("entity", entity), ("paths", &reached), ("relations", &relations.join("\n"))],
    )
    .json()
    .max_tokens(max_tokens)
}

/// A score: a number, or a string holding one; clamped to 0..1.
fn score_of(v: &Value) -> Option<f32> {
    let x = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().trim_end_matches('%').parse::<f64>().ok()?,
        _ => return None,
    };
    x.is_finite().then(|| x.clamp(0.0, 1.0) as f32)
}

/// A candidate number (1-based), as a number or a string like `"3"` or `"#3"`.
fn number_of(v: &str) -> Option<usize> {
    v.trim().trim_start_matches('#').trim().parse().ok()
}

/// Parse a `tog_prune` reply for `n` candidates: `{"1": 0.9, ...}` (possibly under a
/// `scores` key), `[{"id": 1, "score": 0.9}, ...]` or a plain list of `n` scores. Scores
/// may be strings; numbers out of range are ignored, missing ones score 0. None when no
/// candidate got a score.
pub(crate) fn parse_scores(reply: &str, n: usize) -> Option<Vec<f32>> {
    let mut v = crate::analyze::json_value(reply)?;
    if let Some(inner) = v.get("scores").or_else(|| v.get("ratings")).cloned() {
        v = inner;
    }
    let mut scores = vec![0.0f32; n];
    let mut got = 0;
    let mut set = |k: Option<usize>, s: Option<f32>| {
        if let (Some(k), Some(s)) = (k, s) {
            if (1..=n).contains(&k) {
                scores[k - 1] = s;
                got += 1;
            }
        }
    };
    match &v {
        Value::Object(map) => {
            for (k, s) in map {
                set(number_of(k), score_of(s));
            }
        }
        Value::Array(items) if items.iter().all(|x| score_of(x).is_some()) => {
            if items.len() != n {
                return None;
            }
            for (i, s) in items.iter().enumerate() {
                set(Some(i + 1), score_of(s));
            }
        }
        Value::Array(items) => {
            for item in items {
                let k = ["id", "number", "candidate", "relation", "index"].iter().find_map(|key| {
                    item.get(*key).and_then(|x| match x {
                        Value::Number(n) => n.as_u64().map(|n| n as usize),
                        Value::String(s) => number_of(s),
                        _ => None,
                    })
                });
                set(k, item.get("score").and_then(score_of));
            }
        }
        _ => {}
    }
    (got > 0).then_some(scores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_defensively() {
        assert_eq!(parse_scores(r#"{"1": 0.9, "2": "0.3", "7": 1}"#, 3), Some(vec![0.9, 0.3, 0.0]));
        assert_eq!(parse_scores("```json\n{\"scores\": {\"2\": 2.5}}\n```", 2), Some(vec![0.0, 1.0]));
        assert_eq!(
            parse_scores(r#"Here: [{"id": "1", "score": 0.4}, {"id": 2, "score": "x"}]"#, 2),
            Some(vec![0.4, 0.0])
        );
        assert_eq!(parse_scores("[0.1, 0.8]", 2), Some(vec![0.1, 0.8]));
        assert_eq!(parse_scores("[0.1]", 2), None);
        assert_eq!(parse_scores("I think the first one.", 2), None);
        assert_eq!(parse_scores(r#"{"9": 0.5}"#, 2), None);
        assert_eq!(parse_scores("", 2), None);
    }

    #[test]
    fn bm25_prefers_the_matching_text() {
        let s = bm25_scores("Which award did Ada win?", &["Ada -[won award]-> Prize", "Ada -[born in]-> London"]);
        assert_eq!(s[0], 1.0);
        assert!(s[1] < s[0]);
        assert_eq!(bm25_scores("zzz", &["a b", "c d"]), vec![0.0, 0.0]);
    }
}
