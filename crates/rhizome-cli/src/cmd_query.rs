//! `rhizome query`: parse, ask the engine, print (the LLM's answer streams to the
//! terminal as it is written, unless JSON was asked for).

use std::path::Path;

use anyhow::Result;
use rhizome_engine::{Method, QueryRequest};
use serde_json::json;

use crate::app::{print_json, App};

pub fn parse_method(m: &str) -> Result<Method> {
    m.parse::<Method>().map_err(anyhow::Error::msg)
}

pub fn query(app: App, question: &str, method: &str, history: Option<&Path>, filter: &[String]) -> Result<()> {
    let method = parse_method(method)?;
    let engine = app.engine()?;
    let mut req = QueryRequest::new(question, method);
    req.filter = rhizome_core::DocFilter::parse(filter)?;
    if let Some(h) = history {
        req.history = crate::cmd_analyze::read_history(h)?;
    }
    let streamed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = streamed.clone();
    let sink = move |piece: &str| {
        use std::io::Write;
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
        print!("{piece}");
        let _ = std::io::stdout().flush();
    };
    let r = engine.query(&req, if app.json { None } else { Some(&sink) })?;
    if let Some(s) = &r.standalone_question {
        eprintln!("follow-up, asked as: {s}");
    }
    if app.json {
        return print_json(&json!({
            "question": r.standalone_question.as_deref().unwrap_or(&r.question),
            "method": r.method,
            "answer": r.answer,
            "answer_kind": r.answer_kind,
            "contexts": r.contexts,
            "paths": r.paths,
            "notes": r.notes,
            "extra": r.extra,
            "timings_ms": r.timings_ms,
        }));
    }
    if streamed.load(std::sync::atomic::Ordering::Relaxed) {
        println!("\n");
    } else {
        println!("{}\n", r.answer);
    }
    for (i, c) in r.contexts.iter().enumerate() {
        let snippet: String = c.text.chars().take(160).collect();
        let title = if c.title.is_empty() { String::new() } else { format!("{} — ", c.title) };
        println!("[{}] {title}{} (score {:.4})\n    {}", i + 1, c.cite(), c.score, snippet.replace('\n', " "));
    }
    Ok(())
}
