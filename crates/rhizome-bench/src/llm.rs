//! `rhizome bench llm`: a local model's prompt processing and generation tokens/s.

use crate::common::{Bench, Result};

/// Local model throughput: prompt processing and generation tokens/s.
#[cfg(feature = "local-llm")]
pub fn llm(bench: Bench, prompt_tokens: usize, gen_tokens: usize) -> Result<()> {
    use std::time::Instant;

    use serde_json::json;

    use crate::common::{peak_rss_mib, print_json};

    let t = Instant::now();
    let chat = rhizome_engine::llm::load_local(&bench.config)?;
    let load_s = t.elapsed().as_secs_f64();
    let r = rhizome_llm_local::bench(&chat, prompt_tokens, gen_tokens)?;
    if bench.json {
        return print_json(&json!({"load_s": load_s, "bench": r, "peak_rss_mib": peak_rss_mib()}));
    }
    println!("{} ({} threads, loaded in {:.1} s)", r.model, r.threads, load_s);
    println!("prompt: {} tokens at {:.1} tokens/s", r.prompt_tokens, r.prompt_tok_per_s);
    println!("generation: {} tokens at {:.1} tokens/s", r.gen_tokens, r.gen_tok_per_s);
    Ok(())
}

/// Without llama.cpp in the build there is no local model to time.
#[cfg(not(feature = "local-llm"))]
pub fn llm(_bench: Bench, _prompt_tokens: usize, _gen_tokens: usize) -> Result<()> {
    Err(crate::common::Error::Failed(
        "rhizome bench llm: this build of rhizome has no local LLM (llama.cpp); build it with the `local-llm` \
         feature (`cargo build --release --features local-llm`)"
            .into(),
    ))
}
