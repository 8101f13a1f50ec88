//! `rhizome query`.

use anyhow::Result;
use rhizome_retrieve::{
    extractive_answer, retriever, Method, INSUFFICIENT_EVIDENCE,
};
use rhizome_llm::answer::{generate_answer, Evidence};
use serde_json::json;

use crate::app::{print_json, App};

pub fn parse_method(m: &str) -> Result<Method> {
    m.parse::<Method>().map_err(anyhow::Error::msg)
}

pub fn query(app: App, question: &str, method: &str) -> Result<()> {
    let method = parse_method(method)?;
    if question.trim().is_empty() {
        anyhow::bail!("the question is empty; ask something, e.g. rhizome query \"Who founded OpenAI?\"");
    }
    let setup = crate::query_setup::QuerySetup::open(&app)?;
    let env = setup.env();
    let (embedder, llm) = (&setup.embedder, &setup.llm);
    let t = std::time::Instant::now();
    let mut r = retriever(method).retrieve(&env, question)?;
    r.timings_ms.insert("retrieve".into(), t.elapsed().as_secs_f64() * 1e3);
    let t = std::time::Instant::now();
    // A method may say how many of its contexts go to the answer (hippo: qa_top_k).
    let n_answer = r.extra.get("qa_top_k").and_then(|v| v.as_u64()).map_or(r.contexts.len(), |n| n as usize);
    let answer_contexts = &r.contexts[..n_answer.min(r.contexts.len())];
    let mut streamed = false;
    let (answer, answer_kind) = if let Some(a) = r.answer.take() {
        // The method wrote its own answer (global's and drift's reduce, tog's path answer).
        (a, "llm")
    } else if r.contexts.is_empty() {
        (INSUFFICIENT_EVIDENCE.to_string(), "none")
    } else if let Some(llm) = &llm {
        let evidence: Vec<Evidence> =
            answer_contexts.iter().map(|c| Evidence { source: &c.source, text: &c.text }).collect();
        // Stream to the terminal as the model writes, unless JSON was asked for.
        let print = |piece: &str| {
            use std::io::Write;
            print!("{piece}");
            let _ = std::io::stdout().flush();
        };
        let sink: Option<&rhizome_core::llm::TokenSink> = if app.json { None } else { Some(&print) };
        streamed = sink.is_some();
        let c = &app.config.llm;
        let resp = llm.runtime.block_on(generate_answer(
            llm.stack.as_ref(), &llm.prompts, question, &evidence, sink, c.temperature, c.max_tokens,
        ))?;
        (resp.text, "llm")
    } else {
        let a = extractive_answer(embedder.as_ref(), question, answer_contexts, app.config.retrieval.answer_sentences, 3)?;
        (a, "extractive")
    };
    r.timings_ms.insert("answer".into(), t.elapsed().as_secs_f64() * 1e3);
    if app.json {
        return print_json(&json!({
            "question": question,
            "method": method,
            "answer": answer,
            "answer_kind": answer_kind,
            "contexts": r.contexts,
            "paths": r.paths,
            "notes": r.notes,
            "extra": r.extra,
            "timings_ms": r.timings_ms,
        }));
    }
    if streamed {
        println!("\n");
    } else {
        println!("{answer}\n");
    }
    for (i, c) in r.contexts.iter().enumerate() {
        let snippet: String = c.text.chars().take(160).collect();
        let title = if c.title.is_empty() { String::new() } else { format!("{} — ", c.title) };
        println!("[{}] {title}{} (score {:.4})\n    {}", i + 1, c.source, c.score, snippet.replace('\n', " "));
    }
    Ok(())
}
