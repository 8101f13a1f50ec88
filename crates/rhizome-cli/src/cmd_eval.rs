//! `rhizome eval`: Recall@k of supporting passages, latency, EM/F1.

use std::path::Path;

use anyhow::Result;

use crate::app::{print_json, App};
use crate::cmd_query::parse_method;

pub fn eval(app: App, questions: &Path, method: &str, ks: &[usize], answers: bool, limit: Option<usize>) -> Result<()> {
    let method = parse_method(method)?;
    let o = app.engine()?.eval(questions, method, ks, answers, limit, &app.progress())?;
    if app.json {
        return print_json(&o);
    }
    println!("{} questions, method {}", o.questions, o.method);
    for (k, v) in &o.recall {
        println!("Recall@{k}: {v:.4}");
    }
    println!("latency p50 {:.1} ms, p95 {:.1} ms", o.latency_ms["p50"], o.latency_ms["p95"]);
    if let Some(a) = &o.answers {
        println!(
            "extractive answers: EM {:.4}, F1 {:.4}, gold answer contained {:.2}",
            a["em"].as_f64().unwrap_or(0.0),
            a["f1"].as_f64().unwrap_or(0.0),
            a["contains_gold"].as_f64().unwrap_or(0.0)
        );
    }
    Ok(())
}
