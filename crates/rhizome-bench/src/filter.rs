//! `rhizome bench filter`: questions asked with a document filter against the same
//! questions without it, per method, in the same run: p50 and p95 of each through the
//! whole query path (retrieval and the answer; the filter's scope is built by the first
//! question and kept, as in a server), and the ratio of the filtered p50 to the
//! unfiltered one. Each question is asked both ways one after the other, the order
//! alternating, so that drift on a shared machine touches both alike.

use std::path::Path;
use std::time::Instant;

use rhizome_core::DocFilter;
use rhizome_engine::{Method, QueryRequest};
use rhizome_eval::{load_questions, percentile};
use serde_json::json;

use crate::common::{bail, parse_methods, print_json, Bench, Result};

pub fn filter(bench: Bench, questions: &Path, filter: &[String], methods: &[String], limit: usize) -> Result<()> {
    let mut qs = load_questions(questions)?;
    qs.truncate(limit.max(1));
    let parsed = DocFilter::parse(filter)?;
    if parsed.is_empty() {
        bail!("give a filter to time, e.g. --filter type=article");
    }
    let methods: Vec<Method> =
        if methods.is_empty() { vec![Method::Basic, Method::Hippo] } else { parse_methods(methods)? };
    let engine = bench.reading_engine()?;
    let matching = match_cost(&engine, &parsed)?;
    let ask = |method: Method, q: &str, filtered: bool| -> Result<(f64, String)> {
        let mut req = QueryRequest::new(q, method);
        if filtered {
            req.filter = parsed.clone();
        }
        let t = Instant::now();
        let out = engine.query(&req, None)?;
        let note = out.notes.iter().find(|n| n.starts_with("filter ")).cloned().unwrap_or_default();
        Ok((t.elapsed().as_secs_f64() * 1e3, note))
    };
    let mut rows = Vec::new();
    for &m in &methods {
        // Untimed: the graph, the scope and the caches are made once.
        ask(m, &qs[0].question, false)?;
        let (_, scope) = ask(m, &qs[0].question, true)?;
        let (mut plain, mut filtered) = (Vec::new(), Vec::new());
        for (i, q) in qs.iter().enumerate() {
            let order = if i % 2 == 1 { [true, false] } else { [false, true] };
            for f in order {
                let (ms, _) = ask(m, &q.question, f)?;
                if f {
                    filtered.push(ms);
                } else {
                    plain.push(ms);
                }
            }
        }
        let p = |v: &[f64], q: f64| percentile(v, q);
        rows.push(json!({
            "method": m.as_str(), "scope": scope,
            "p50_ms": p(&plain, 50.0), "p95_ms": p(&plain, 95.0),
            "filtered_p50_ms": p(&filtered, 50.0), "filtered_p95_ms": p(&filtered, 95.0),
            "filtered_p50_vs_unfiltered": p(&filtered, 50.0) / p(&plain, 50.0).max(1e-9),
        }));
    }
    let out = json!({"questions": qs.len(), "filter": parsed.describe(), "matching": matching, "methods": rows});
    if bench.json {
        return print_json(&out);
    }
    println!("{} questions, filter {}", qs.len(), parsed.describe());
    let f = |k: &str| matching[k].as_f64().unwrap_or(0.0);
    println!(
        "matching it: {} of {} documents; reading every document {:.2} ms, the document index {:.2} ms ({:.1}x)",
        matching["matched"],
        matching["documents"],
        f("scan_ms"),
        f("index_ms"),
        f("scan_ms") / f("index_ms").max(1e-9)
    );
    println!(
        "{:<12} {:>9} {:>9} {:>13} {:>13} {:>10}",
        "method", "p50 ms", "p95 ms", "filtered p50", "filtered p95", "ratio"
    );
    for r in &rows {
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        println!(
            "{:<12} {:>9.2} {:>9.2} {:>13.2} {:>13.2} {:>9.2}x",
            r["method"].as_str().unwrap_or(""),
            f("p50_ms"),
            f("p95_ms"),
            f("filtered_p50_ms"),
            f("filtered_p95_ms"),
            f("filtered_p50_vs_unfiltered")
        );
    }
    if let Some(s) = rows.first().and_then(|r| r["scope"].as_str()) {
        println!("{s}");
    }
    Ok(())
}

/// What matching `filter` costs, median of 7 runs each: reading every document and
/// testing each (how filters were matched before the document index), against the range
/// reads of the document index the engine makes; both must find the same documents.
fn match_cost(engine: &rhizome_engine::Engine, filter: &DocFilter) -> Result<serde_json::Value> {
    let store = engine.reader()?;
    let scan = || -> Result<std::collections::HashSet<String>> {
        let docs = store.documents(None, 0, usize::MAX)?;
        Ok(docs
            .iter()
            .filter(|d| {
                filter.matches(&rhizome_core::filter::DocFacets {
                    source: &d.source,
                    aliases: &d.aliases,
                    language: d.language.as_deref(),
                    indexed_at: d.indexed_at,
                    meta: &d.meta,
                })
            })
            .map(|d| d.id.clone())
            .collect())
    };
    let (mut scan_ms, mut index_ms) = (Vec::new(), Vec::new());
    let (mut by_scan, mut by_index) = Default::default();
    for _ in 0..7 {
        let t = Instant::now();
        by_scan = scan()?;
        scan_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        by_index = rhizome_engine::matching_documents(&*store, filter)?;
        index_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    if by_scan != by_index {
        bail!("the document index matched {} documents, reading every one {}", by_index.len(), by_scan.len());
    }
    Ok(json!({
        "documents": store.document_count(None)?, "matched": by_index.len(),
        "scan_ms": percentile(&scan_ms, 50.0), "index_ms": percentile(&index_ms, 50.0),
    }))
}
