//! `rhizome bench retrieval`: per-method retrieval latency on an existing index.
//!
//! Every method runs every question. A method's time is split into question embedding
//! (every `embed*` timing the method reports) and the rest; p50/p95 of both and of the
//! whole are printed, with the ratio to `basic` measured in the same run (shared machines
//! are noisy: compare ratios, not milliseconds). The graph is loaded before timing starts
//! (its load time is reported on its own). For `hippo`, the PPR step's share of the
//! non-embedding time is reported too, and hippo's previous approaches run as rows of
//! their own so that its speed-up is measured in the same run: [`Hippo::previous`]
//! (before its speed work) and [`Hippo::over_relaxed`] (PageRank by
//! over-relaxed sweeps, before forward push). On every question, hippo's passages are
//! compared with those of the previous approach (its exact PageRank solver): the count
//! of questions whose top-k list is identical is printed.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use rhizome_eval::{load_questions, percentile};
use rhizome_retrieve::{retriever, Hippo, Method, Retriever};
use serde_json::json;

use crate::common::{bail, parse_methods, print_json, Bench, Result};

pub fn retrieval(bench: Bench, questions: &Path, methods: &[String], limit: usize) -> Result<()> {
    let mut qs = load_questions(questions)?;
    qs.truncate(limit.max(1));
    let methods: Vec<Method> = if methods.is_empty() {
        Method::ALL.iter().copied().filter(|m| *m != Method::Auto).collect()
    } else {
        parse_methods(methods)?
    };
    if !methods.contains(&Method::Basic) {
        bail!("--methods must include basic: it is the baseline every figure is compared with");
    }
    let engine = bench.reading_engine()?;
    let (graph_load_ms, rows, same) = engine.with_env(None, |env| {
        let t = Instant::now();
        env.graph()?;
        let graph_load_ms = t.elapsed().as_secs_f64() * 1e3;

        let mut rows = BTreeMap::new();
        let mut base = (0.0, 0.0);
        let mut runs: Vec<(String, Box<dyn Retriever>)> =
            methods.iter().map(|&m| (m.as_str().to_string(), retriever(m))).collect();
        if methods.contains(&Method::Hippo) {
            runs.push((SWEEPS_HIPPO.to_string(), Box::new(Hippo::over_relaxed())));
            runs.push((PREVIOUS_HIPPO.to_string(), Box::new(Hippo::previous())));
        }
        // Per run, the passages returned for each question (hippo's are compared with the
        // exact solver's).
        let mut returned: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
        for (name, r) in &runs {
            // One untimed run warms caches (vector matrices, per-graph indexes).
            r.retrieve(env, &qs[0].question)?;
            let (mut total, mut embed, mut rest, mut ppr) = (vec![], vec![], vec![], vec![]);
            let ids = returned.entry(name.clone()).or_default();
            for q in &qs {
                let t = Instant::now();
                let got = r.retrieve(env, &q.question)?;
                let ms = t.elapsed().as_secs_f64() * 1e3;
                let e: f64 = got.timings_ms.iter().filter(|(k, _)| k.starts_with("embed")).map(|(_, v)| v).sum();
                total.push(ms);
                embed.push(e);
                rest.push((ms - e).max(0.0));
                if let Some(p) = got.timings_ms.get("ppr") {
                    ppr.push(*p);
                }
                ids.push(got.contexts.iter().map(|c| c.id.clone()).collect());
            }
            let p = |v: &[f64], q: f64| percentile(v, q);
            if name == "basic" {
                base = (p(&total, 50.0), p(&rest, 50.0));
            }
            let mut row = json!({
                "p50_ms": p(&total, 50.0), "p95_ms": p(&total, 95.0),
                "embed_p50_ms": p(&embed, 50.0),
                "without_embed_p50_ms": p(&rest, 50.0), "without_embed_p95_ms": p(&rest, 95.0),
                "p50_vs_basic": p(&total, 50.0) / base.0.max(1e-9),
                "without_embed_p50_vs_basic": p(&rest, 50.0) / base.1.max(1e-9),
            });
            if !ppr.is_empty() {
                let share = ppr.iter().sum::<f64>() / rest.iter().sum::<f64>().max(1e-9);
                row["ppr_p50_ms"] = json!(p(&ppr, 50.0));
                row["ppr_share_of_retrieval"] = json!(share);
            }
            rows.insert(name.clone(), row);
        }
        let same = match (returned.get("hippo"), returned.get(PREVIOUS_HIPPO)) {
            (Some(a), Some(b)) => Some(a.iter().zip(b).filter(|(x, y)| x == y).count()),
            _ => None,
        };
        Ok((graph_load_ms, rows, same))
    })?;
    let mut out = json!({"questions": qs.len(), "graph_load_ms": graph_load_ms, "methods": rows});
    if let Some(same) = same {
        out["hippo_same_passages_as_exact"] = json!(same);
    }
    if bench.json {
        return print_json(&out);
    }
    println!("{} questions; graph loaded in {graph_load_ms:.0} ms (not counted below)", qs.len());
    println!(
        "{:<15} {:>9} {:>9} {:>10} {:>12} {:>12} {:>9}",
        "method", "p50 ms", "p95 ms", "embed p50", "rest p50", "rest p95", "vs basic"
    );
    let previous = [SWEEPS_HIPPO, PREVIOUS_HIPPO].into_iter().filter(|n| rows.contains_key(*n));
    let names = methods.iter().map(|m| m.as_str()).chain(previous);
    for name in names {
        let r = &rows[name];
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        println!(
            "{:<15} {:>9.2} {:>9.2} {:>10.2} {:>12.2} {:>12.2} {:>8.2}x",
            name,
            f("p50_ms"),
            f("p95_ms"),
            f("embed_p50_ms"),
            f("without_embed_p50_ms"),
            f("without_embed_p95_ms"),
            f("p50_vs_basic")
        );
        if let Some(s) = r.get("ppr_share_of_retrieval") {
            println!(
                "{:<15} PPR p50 {:.3} ms, {:.0}% of retrieval without embedding",
                "",
                f("ppr_p50_ms"),
                s.as_f64().unwrap_or(0.0) * 100.0
            );
        }
    }
    if let (Some(now), Some(before)) = (rows.get("hippo"), rows.get(PREVIOUS_HIPPO)) {
        let f = |r: &serde_json::Value, k: &str| r[k].as_f64().unwrap_or(0.0);
        println!(
            "hippo against its previous approach ({PREVIOUS_HIPPO}: Gauss-Seidel f64 PPR at 1e-8, facts \
            linked that cannot seed), same run: p50 {:.2}x faster, without embedding {:.2}x, PPR {:.2}x",
            f(before, "p50_ms") / f(now, "p50_ms").max(1e-9),
            f(before, "without_embed_p50_ms") / f(now, "without_embed_p50_ms").max(1e-9),
            f(before, "ppr_p50_ms") / f(now, "ppr_p50_ms").max(1e-9)
        );
    }
    if let (Some(now), Some(sweeps)) = (rows.get("hippo"), rows.get(SWEEPS_HIPPO)) {
        let f = |r: &serde_json::Value, k: &str| r[k].as_f64().unwrap_or(0.0);
        println!(
            "hippo's PPR by forward push against over-relaxed sweeps ({SWEEPS_HIPPO}), same run: PPR p50 \
            {:.3} ms vs {:.3} ms = {:.2}x faster; hippo p50 {:.2}x",
            f(now, "ppr_p50_ms"),
            f(sweeps, "ppr_p50_ms"),
            f(sweeps, "ppr_p50_ms") / f(now, "ppr_p50_ms").max(1e-9),
            f(sweeps, "p50_ms") / f(now, "p50_ms").max(1e-9)
        );
    }
    if let Some(same) = same {
        println!(
            "hippo returned the same passages in the same order as {PREVIOUS_HIPPO} (exact PageRank) on \
            {same} of {} questions",
            qs.len()
        );
    }
    Ok(())
}

/// The row of [`Hippo::previous`].
const PREVIOUS_HIPPO: &str = "hippo-before";
/// The row of [`Hippo::over_relaxed`].
const SWEEPS_HIPPO: &str = "hippo-sweeps";
