//! `rhizome eval`: Recall@k of supporting passages, latency, EM/F1.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use anyhow::{bail, Result};
use rhizome_core::StoreRead;
use rhizome_eval::{exact_match, f1, load_questions, percentile, recall_at_k};
use rhizome_ingest::pipeline::Progress;
use rhizome_retrieve::{extractive_answer, retriever};
use serde_json::json;

use crate::app::{print_json, App};
use crate::cmd_query::parse_method;

pub fn eval(mut app: App, questions: &Path, method: &str, ks: &[usize], answers: bool,
    limit: Option<usize>) -> Result<()> {
    let method = parse_method(method)?;
    if ks.is_empty() || ks.contains(&0) {
        bail!("--k takes positive cut-offs, e.g. --k 2,5");
    }
    let mut qs = load_questions(questions)?;
    if let Some(n) = limit {
        qs.truncate(n);
    }
    let max_k = *ks.iter().max().unwrap_or(&5);
    // Retrieve more chunks than the largest k: several chunks can share a document.
    app.config.retrieval.top_k = app.config.retrieval.top_k.max(max_k * 3);
    let setup = crate::query_setup::QuerySetup::open(&app)?;
    let env = setup.env();
    let (store, embedder) = (&setup.store, &setup.embedder);
    let r = retriever(method);
    let progress = app.progress();
    progress.start("eval", qs.len() as u64);
    let mut recalls: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    let mut latency = Vec::new();
    let (mut ems, mut f1s) = (Vec::new(), Vec::new());
    let mut docs: HashMap<String, (String, String)> = HashMap::new();
    for q in &qs {
        let t = std::time::Instant::now();
        let got = r.retrieve(&env, &q.question)?;
        latency.push(t.elapsed().as_secs_f64() * 1e3);
        let mut ranked: Vec<(String, String)> = Vec::new();
        let mut seen = HashSet::new();
        for c in &got.contexts {
            // Community reports and analysts' points are not passages: Recall@k ranks the
            // passages a method retrieved.
            if matches!(c.kind.as_str(), "report" | "point") {
                continue;
            }
            if !seen.insert(c.source.clone()) {
                continue;
            }
            if !docs.contains_key(&c.source) {
                let d = store.find_document(&c.source)?;
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
                None => extractive_answer(embedder.as_ref(), &q.question, &got.contexts,
                    app.config.retrieval.answer_sentences, 3)?,
            };
            ems.push(exact_match(&a, &q.answers));
            f1s.push(f1(&a, &q.answers));
        }
        progress.advance(1);
    }
    progress.finish();
    let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
    let recall: BTreeMap<String, f64> = recalls.iter().map(|(k, v)| (k.to_string(), mean(v))).collect();
    let mut out = json!({
        "questions": qs.len(),
        "method": method,
        "recall": recall,
        "latency_ms": {"p50": percentile(&latency, 50.0), "p95": percentile(&latency, 95.0)},
    });
    if answers {
        out["answers"] = json!({"kind": "extractive", "em": mean(&ems), "f1": mean(&f1s)});
    }
    if app.json {
        return print_json(&out);
    }
    println!("{} questions, method {}", qs.len(), method);
    for (k, v) in &recall {
        println!("Recall@{k}: {v:.4}");
    }
    println!("latency p50 {:.1} ms, p95 {:.1} ms", percentile(&latency, 50.0), percentile(&latency, 95.0));
    if answers {
        println!("extractive answers: EM {:.4}, F1 {:.4}", mean(&ems), mean(&f1s));
    }
    Ok(())
}
