//! One chat completion: render → tokenize → decode the prompt → sample, stream and stop.

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatMessage, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use rhizome_core::llm::{ChatMessage, ChatRequest, ChatResponse, TokenSink, Usage};
use rhizome_core::Result;

use crate::text::{chatml, role_name, StopText, Utf8Decoder};
use crate::{llm_err, LocalOptions};

/// One JSON object, optional whitespace between tokens (llama.cpp's `grammars/json.gbnf`).
const JSON_GBNF: &str = r#"
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
"#;

/// The prompt text for `messages`: the GGUF's chat template applied by llama.cpp, or ChatML
/// if the GGUF has no template (or one llama.cpp does not recognise).
pub(crate) fn render(model: &LlamaModel, messages: &[ChatMessage]) -> String {
    // NUL bytes cannot cross the C API; they carry no meaning in a prompt.
    let msgs: Option<Vec<LlamaChatMessage>> = messages
        .iter()
        .map(|m| LlamaChatMessage::new(role_name(m.role).into(), m.content.replace('\0', "")).ok())
        .collect();
    if let (Ok(tmpl), Some(msgs)) = (model.chat_template(None), msgs) {
        if let Ok(p) = model.apply_chat_template(&tmpl, &msgs, true) {
            return p;
        }
    }
    chatml(messages)
}

/// Decode `tokens` (positions from 0) in batches of `n_batch`, with logits for the last
/// token only; returns that token's index in the last batch.
pub(crate) fn decode_prompt(ctx: &mut LlamaContext<'_>, tokens: &[LlamaToken], n_batch: usize) -> Result<i32> {
    let n_batch = n_batch.max(1);
    let mut batch = LlamaBatch::new(n_batch, 1);
    let mut last = 0;
    for (c, chunk) in tokens.chunks(n_batch).enumerate() {
        batch.clear();
        let final_chunk = (c + 1) * n_batch >= tokens.len();
        for (i, &t) in chunk.iter().enumerate() {
            let logits = final_chunk && i + 1 == chunk.len();
            batch
                .add(t, (c * n_batch + i) as i32, &[0], logits)
                .map_err(|e| llm_err("local", format!("batch: {e}")))?;
        }
        ctx.decode(&mut batch).map_err(|e| llm_err("local", format!("decoding the prompt: {e}")))?;
        last = chunk.len() as i32 - 1;
    }
    Ok(last)
}

/// Decode one token at position `pos` (logits on); the next sample reads index 0.
pub(crate) fn decode_one(
    ctx: &mut LlamaContext<'_>,
    batch: &mut LlamaBatch,
    tok: LlamaToken,
    pos: usize,
) -> Result<()> {
    batch.clear();
    batch.add(tok, pos as i32, &[0], true).map_err(|e| llm_err("local", format!("batch: {e}")))?;
    ctx.decode(batch).map_err(|e| llm_err("local", format!("decoding: {e}")))
}

/// Token choice: greedy or seeded temperature sampling, optionally constrained by a grammar.
pub(crate) struct Sampler {
    base: LlamaSampler,
    grammar: Option<LlamaSampler>,
}

impl Sampler {
    /// Greedy when `temperature` is 0 (or not a positive number); otherwise llama.cpp's
    /// usual chain (top-k 40, top-p 0.95, min-p 0.05, temperature, seeded draw).
    pub(crate) fn new(model: &LlamaModel, temperature: f32, seed: u64, json: bool) -> Result<Self> {
        let base = if temperature > 0.0 && temperature.is_finite() {
            let seed = (seed ^ (seed >> 32)) as u32;
            LlamaSampler::chain_simple([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::min_p(0.05, 1),
                LlamaSampler::temp(temperature),
                LlamaSampler::dist(seed),
            ])
        } else {
            LlamaSampler::greedy()
        };
        let grammar = if json {
            Some(
                LlamaSampler::grammar(model, JSON_GBNF, "root")
                    .map_err(|e| llm_err("local", format!("JSON grammar: {e}")))?,
            )
        } else {
            None
        };
        Ok(Sampler { base, grammar })
    }

    /// The next token from the logits at `idx`. With a grammar, the unconstrained choice is
    /// tried first and kept if the grammar allows it (cheap); only otherwise is the grammar
    /// applied to the whole vocabulary and the choice made again (llama.cpp does the same).
    pub(crate) fn sample(&mut self, ctx: &LlamaContext<'_>, idx: i32) -> LlamaToken {
        let tok = self.base.sample(ctx, idx);
        let Some(g) = self.grammar.as_mut() else { return tok };
        let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(tok, 1.0, 0.0)], false);
        g.apply(&mut one);
        let tok = if one.data.first().is_some_and(|d| d.logit().is_finite()) {
            tok
        } else {
            let mut all = ctx.token_data_array_ith(idx);
            g.apply(&mut all);
            self.base.apply(&mut all);
            all.selected_token().unwrap_or(tok)
        };
        g.accept(tok);
        tok
    }
}

/// Run `req` on `ctx` (whose KV cache is cleared first).
pub(crate) fn run(
    model: &LlamaModel,
    ctx: &mut LlamaContext<'_>,
    opts: &LocalOptions,
    req: &ChatRequest,
    stream: Option<&TokenSink>,
) -> Result<ChatResponse> {
    let vocab = model.vocab();
    let prompt = render(model, &req.messages);
    let tokens = vocab.tokenize(prompt.as_bytes(), true, true);
    let n_ctx = ctx.n_ctx() as usize;
    if tokens.is_empty() {
        return Err(llm_err("local", "the prompt rendered to no tokens"));
    }
    if tokens.len() >= n_ctx {
        return Err(llm_err(
            "local",
            format!(
                "the prompt is {} tokens but the context holds {n_ctx} (including the answer): \
                 shorten the input or load the model with a larger context (n_ctx)",
                tokens.len()
            ),
        ));
    }
    let max_new = (req.max_tokens.unwrap_or(opts.default_max_tokens) as usize).min(n_ctx - tokens.len());

    ctx.clear_kv_cache();
    let mut idx = decode_prompt(ctx, &tokens, ctx.n_batch() as usize)?;
    let mut sampler = Sampler::new(model, req.temperature, req.seed.unwrap_or(opts.seed), req.json_mode)?;
    let mut batch = LlamaBatch::new(1, 1);
    let mut utf8 = Utf8Decoder::default();
    let mut text = StopText::new(&req.stop);
    let emit = |s: &str| {
        if let (Some(sink), false) = (stream, s.is_empty()) {
            sink(s);
        }
    };
    let mut generated = 0usize;
    let mut pos = tokens.len();
    while generated < max_new {
        let tok = sampler.sample(ctx, idx);
        if vocab.is_eog(tok) {
            break;
        }
        generated += 1;
        let piece = vocab.token_to_piece(tok, false, None);
        emit(text.push(&utf8.push(&piece)));
        if text.stopped() || generated == max_new {
            break;
        }
        decode_one(ctx, &mut batch, tok, pos)?;
        pos += 1;
        idx = 0;
    }
    if !text.stopped() {
        let rest = utf8.finish();
        emit(text.push(&rest));
    }
    emit(text.finish());
    Ok(ChatResponse {
        text: text.into_text(),
        usage: Usage { prompt_tokens: tokens.len() as u64, completion_tokens: generated as u64 },
        cached: false,
    })
}
