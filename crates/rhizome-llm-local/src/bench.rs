//! Raw speed of a loaded model: prompt processing and generation, in tokens per second.

use std::time::Instant;

use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::sampling::LlamaSampler;
use serde::{Deserialize, Serialize};

use rhizome_core::Result;

use crate::generate::{decode_one, decode_prompt};
use crate::{llm_err, LocalChat};

/// What [`bench`] measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// `local/<model name>`.
    pub model: String,
    /// Decode threads.
    pub threads: usize,
    /// Context size in tokens.
    pub n_ctx: u32,
    /// Prompt tokens decoded (in batches).
    pub prompt_tokens: usize,
    /// Tokens generated one at a time (greedy; end-of-generation tokens do not stop it).
    pub gen_tokens: usize,
    /// Wall time of the prompt decode, seconds.
    pub prompt_secs: f64,
    /// Wall time of generation (decode + sampling), seconds.
    pub gen_secs: f64,
    /// Prompt processing speed.
    pub prompt_tok_per_s: f64,
    /// Generation speed.
    pub gen_tok_per_s: f64,
}

/// Measure `chat`'s prompt processing (a prompt of `prompt_tokens` tokens, decoded in
/// batches) and generation (`gen_tokens` more tokens, each decoded alone after a greedy
/// pick). `prompt_tokens + gen_tokens` must fit the context. Holds the model's lock for
/// the duration (other calls wait).
pub fn bench(chat: &LocalChat, prompt_tokens: usize, gen_tokens: usize) -> Result<BenchReport> {
    let id = rhizome_core::llm::ChatProvider::id(chat);
    let model = chat.model();
    let mut ctx = chat.lock()?;
    let n_ctx = ctx.n_ctx();
    if prompt_tokens == 0 || prompt_tokens + gen_tokens > n_ctx as usize {
        return Err(llm_err(
            &id,
            format!("bench needs 1 <= prompt_tokens and prompt_tokens + gen_tokens <= n_ctx ({n_ctx})"),
        ));
    }
    // A prompt of ordinary prose, repeated to length.
    let filler = "The river carries silt from the mountains to the delta, where farmers have \
                  grown rice for centuries. Each flood renews the soil, and each dry season \
                  the villages repair the dikes that keep the water in its channels. ";
    let unit = model.vocab().tokenize(filler.as_bytes(), false, false);
    if unit.is_empty() {
        return Err(llm_err(&id, "the tokenizer produced no tokens for the bench prompt"));
    }
    let tokens: Vec<_> = unit.iter().copied().cycle().take(prompt_tokens).collect();

    ctx.clear_kv_cache();
    let t0 = Instant::now();
    let n_batch = ctx.n_batch() as usize;
    let mut idx = decode_prompt(&mut ctx, &tokens, n_batch)?;
    let prompt_secs = t0.elapsed().as_secs_f64();

    let mut sampler = LlamaSampler::greedy();
    let mut batch = LlamaBatch::new(1, 1);
    let t1 = Instant::now();
    for i in 0..gen_tokens {
        let tok = sampler.sample(&ctx, idx);
        decode_one(&mut ctx, &mut batch, tok, prompt_tokens + i)?;
        idx = 0;
    }
    let gen_secs = t1.elapsed().as_secs_f64();
    ctx.clear_kv_cache();

    let rate = |n: usize, s: f64| if s > 0.0 { n as f64 / s } else { 0.0 };
    Ok(BenchReport {
        model: id,
        threads: chat.threads(),
        n_ctx,
        prompt_tokens,
        gen_tokens,
        prompt_secs,
        gen_secs,
        prompt_tok_per_s: rate(prompt_tokens, prompt_secs),
        gen_tok_per_s: rate(gen_tokens, gen_secs),
    })
}
