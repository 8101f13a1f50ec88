//! Try a local model: `local_llm <model> [bench <prompt_tokens> <gen_tokens> | [json:]<prompt>]`.
//! The model is fetched into the models dir if missing. `RHIZOME_LLAMA_THREADS` sets threads.

use rhizome_core::llm::{ChatMessage, ChatRequest, TokenSink};
use rhizome_llm_local::{bench, LocalChat, LocalOptions};
use rhizome_models as models;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map(String::as_str).unwrap_or("smollm2-135m");
    let spec = models::find_llm(name).ok_or("unknown model")?;
    let dir = models::models_dir();
    models::fetch(spec, &dir)?;
    let t = std::time::Instant::now();
    let chat = LocalChat::load_installed(name, &dir, LocalOptions::default())?;
    eprintln!("loaded {name} in {:.2}s ({} threads)", t.elapsed().as_secs_f64(), chat.threads());
    if args.get(1).map(String::as_str) == Some("bench") {
        let p = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(512);
        let g = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(128);
        let rep = bench(&chat, p, g)?;
        println!("{}", serde_json::to_string_pretty(&rep)?);
        return Ok(());
    }
    let prompt = args.get(1).cloned().unwrap_or_else(|| "Reply with the word hello.".into());
    // A `json:` prefix asks for JSON mode.
    let (json_mode, prompt) = match prompt.strip_prefix("json:") {
        Some(p) => (true, p.to_string()),
        None => (false, prompt),
    };
    let req = ChatRequest {
        messages: vec![ChatMessage::user(prompt)],
        max_tokens: Some(256),
        json_mode,
        ..Default::default()
    };
    let sink = |s: &str| {
        use std::io::Write;
        print!("{s}");
        let _ = std::io::stdout().flush();
    };
    let t = std::time::Instant::now();
    let r = block_on(rhizome_core::llm::ChatProvider::chat(&chat, &req, Some(&sink as &TokenSink)))?;
    println!("\n-- {:?} in {:.2}s", r.usage, t.elapsed().as_secs_f64());
    Ok(())
}

/// The future decodes synchronously and never pends: one poll completes it.
fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::pin!(fut).poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("local chat future pended"),
    }
}
