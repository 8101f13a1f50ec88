//! Evaluation on a question set: HippoRAG's Recall@k of supporting passages, retrieval
//! latency, and optionally EM/F1 of the answers.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use rhizome_core::{Error, Result};
use rhizome_eval::{contains_gold, exact_match, f1, load_questions, percentile, recall_at_k};
use rhizome_ingest::pipeline::Progress;
use rhizome_retrieve::{extractive_answer, retriever, Method};
use serde::Serialize;

use crate::Engine;

/// What an evaluation measured.
#[derive(Debug, Clone, Serialize)]
pub struct EvalOutcome {
    pub questions: usize,
    pub method: Method,
    /// Mean Recall@k per k.
    pub recall: BTreeMap<String, f64>,
    /// Retrieval latency p50/p95 in ms.
    pub latency_ms: BTreeMap<String, f64>,
    /// EM/F1 of the answers, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answers: Option<serde_json::Value>,
}

impl Engine {
    /// Evaluate `method` on the questions in `file` (MuSiQue, HotpotQA, 2Wiki formats),
    /// the first `limit` of them; `ks` are the Recall cut-offs; `answers` also scores
    /// extractive (or the method's own) answers against the gold ones.
    pub fn eval(
        &self,
        file: &Path,
        method: Method,
        ks: &[usize],
        answers: bool,
        limit: Option<usize>,
        progress: &dyn Progress,
    ) -> Result<EvalOutcome> {
        if ks.is_empty() || ks.contains(&0) {
            return Err(Error::bad_input("--k", "takes positive cut-offs, e.g. --k 2,5"));
        }
        let mut qs = load_questions(file)?;
        if let Some(n) = limit {
            qs.truncate(n);
        }
        let max_k = *ks.iter().max().unwrap_or(&5);
        // Retrieve more chunks than the largest k: several chunks can share a document.
        let top_k = self.config.retrieval.top_k.max(max_k * 3);
        self.with_env(Some(top_k), |env| {
            let r = retriever(method);
            progress.start("eval", qs.len() as u64);
            let mut recalls: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
            let mut latency = Vec::new();
            let (mut ems, mut f1s, mut holds) = (Vec::new(), Vec::new(), Vec::new());
            let mut docs: HashMap<String, (String, String)> = HashMap::new();
            for q in &qs {
                let t = std::time::Instant::now();
                let got = r.retrieve(env, &q.question)?;
                latency.push(t.elapsed().as_secs_f64() * 1e3);
                let mut ranked: Vec<(String, String)> = Vec::new();
                let mut seen = HashSet::new();
                for c in &got.contexts {
                    // Community reports and analysts' points are not passages: Recall@k
                    // ranks the passages a method retrieved.
                    if c.kind.is_derived() || !seen.insert(c.source.clone()) {
                        continue;
                    }
                    if !docs.contains_key(&c.source) {
                        let d = env.store.find_document(&c.source)?;
                        let v = d.map(|d| (d.title, d.text)).unwrap_or((c.title.clone(), c.text.clone()));
                        docs.insert(c.source.clone(), v);
                    }
                    ranked.push(docs[&c.source].clone());
                }
                for &k in ks {
                    recalls.entry(k).or_default().push(recall_at_k(&q.supporting, &ranked, k));
                }
                if answers {
                    let a = match &got.answer {
                        Some(a) => a.clone(),
                        None => extractive_answer(
                            env.embedder,
                            Some(env.store),
                            &q.question,
                            &got.contexts,
                            env.config.retrieval.answer_sentences,
                            3,
                        )?,
                    };
                    ems.push(exact_match(&a, &q.answers));
                    f1s.push(f1(&a, &q.answers));
                    holds.push(contains_gold(&a, &q.answers));
                }
                progress.advance(1);
            }
            progress.finish();
            let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
            Ok(EvalOutcome {
                questions: qs.len(),
                method,
                recall: recalls.iter().map(|(k, v)| (k.to_string(), mean(v))).collect(),
                latency_ms: BTreeMap::from([
                    ("p50".to_string(), percentile(&latency, 50.0)),
                    ("p95".to_string(), percentile(&latency, 95.0)),
                ]),
                answers: answers.then(|| {
                    serde_json::json!({"kind": "extractive", "em": mean(&ems), "f1": mean(&f1s),
                    "contains_gold": mean(&holds)})
                }),
            })
        })
    }
}
