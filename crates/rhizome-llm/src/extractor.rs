//! The LLM extractor: entities (typed by a schema, described, with importance), relations
//! (typed, described, with strength) and OpenIE facts per chunk, with optional gleaning
//! passes, and claims about the entities when asked (one more call, `extract_claims`).
//! Output is parsed robustly ([`crate::parse`]); a chunk whose call fails after retries gets
//! an error (the pipeline keeps the chunk and reports it), never a panic. A claims reply
//! that cannot be read is counted, and the chunk keeps its entities without claims.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rhizome_core::llm::{cache_key, ChatMessage, ChatProvider, ChatRequest};
use rhizome_core::{Chunk, Error, Extraction, Extractor, ExtractorCounts, Result};
use serde::Serialize;

use crate::parse::{parse_claims, parse_extraction};
use crate::prompt::Prompts;
use crate::wrappers::estimate_tokens;

pub struct LlmExtractor {
    pub provider: Arc<dyn ChatProvider>,
    pub prompts: Arc<Prompts>,
    pub schema: Vec<String>,
    pub gleanings: u32,
    pub temperature: f32,
    pub max_tokens: u32,
    pub runtime: tokio::runtime::Handle,
    /// Ask for claims too, with this description of what a claim is (`extract.claims`).
    pub claims: Option<String>,
    /// Parser warnings, counted (for the end-of-run report).
    pub parse_warnings: AtomicU64,
    /// Claim replies with no claims list in them.
    pub claims_unreadable: AtomicU64,
}

/// Most entity names listed in a claims prompt (the most important first).
const MAX_CLAIM_ENTITIES: usize = 60;

/// What a run with this extractor would cost, before spending anything.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExtractionPlan {
    pub chunks: u64,
    pub calls: u64,
    pub cached_calls: u64,
    pub estimated_prompt_tokens: u64,
    pub estimated_completion_tokens: u64,
}

impl LlmExtractor {
    /// A JSON-mode request of this extractor's settings, counted under `stage`.
    fn request(&self, messages: Vec<ChatMessage>, stage: &str) -> ChatRequest {
        ChatRequest {
            messages,
            temperature: self.temperature,
            max_tokens: Some(self.max_tokens),
            json_mode: true,
            stage: stage.into(),
            ..ChatRequest::default()
        }
    }

    fn first_request(&self, chunk: &Chunk) -> Result<ChatRequest> {
        let messages =
            self.prompts.render("extract_entities", &[("schema", &self.schema.join(", ")), ("text", &chunk.text)])?;
        Ok(self.request(messages, "extract"))
    }

    async fn extract_one(&self, chunk: &Chunk) -> Result<Extraction> {
        let req = self.first_request(chunk)?;
        let resp = self.provider.chat(&req, None).await?;
        let mut outcome = parse_extraction(&resp.text, &self.schema);
        self.count_warnings(outcome.warnings.len());
        let mut messages = req.messages.clone();
        messages.push(ChatMessage::assistant(resp.text));
        for _ in 0..self.gleanings {
            let more = self.prompts.render("glean", &[("schema", &self.schema.join(", "))])?;
            messages.extend(more.into_iter().filter(|m| m.role != rhizome_core::llm::Role::System));
            let req = ChatRequest { messages: messages.clone(), stage: "glean".into(), ..req.clone() };
            let resp = self.provider.chat(&req, None).await?;
            let extra = parse_extraction(&resp.text, &self.schema);
            self.count_warnings(extra.warnings.len());
            if extra.extraction.entities.is_empty() && extra.extraction.relations.is_empty() {
                break;
            }
            merge(&mut outcome.extraction, extra.extraction);
            messages.push(ChatMessage::assistant(resp.text));
        }
        if let Some(description) = &self.claims {
            outcome.extraction.claims = self.claims_of(chunk, &outcome.extraction, description).await?;
        }
        Ok(outcome.extraction)
    }

    /// The names a claims prompt lists: the chunk's entities, the most important first.
    fn claim_subjects(ex: &Extraction) -> Vec<String> {
        let mut entities: Vec<_> = ex.entities.iter().collect();
        entities.sort_by(|a, b| b.importance.unwrap_or(0.0).total_cmp(&a.importance.unwrap_or(0.0)));
        entities.into_iter().take(MAX_CLAIM_ENTITIES).map(|e| e.name.clone()).collect()
    }

    fn claims_request(&self, chunk: &Chunk, names: &[String], description: &str) -> Result<ChatRequest> {
        let messages = self.prompts.render(
            "extract_claims",
            &[("entities", &names.join(", ")), ("description", description), ("text", &chunk.text)],
        )?;
        Ok(self.request(messages, "claims"))
    }

    /// Claims about the chunk's entities: one call (none when it has no entities).
    async fn claims_of(
        &self,
        chunk: &Chunk,
        ex: &Extraction,
        description: &str,
    ) -> Result<Vec<rhizome_core::ExtractedClaim>> {
        let names = Self::claim_subjects(ex);
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let req = self.claims_request(chunk, &names, description)?;
        let resp = self.provider.chat(&req, None).await?;
        let out = parse_claims(&resp.text, &names, &chunk.text);
        if !out.readable {
            self.claims_unreadable.fetch_add(1, Ordering::Relaxed);
        }
        Ok(out.claims)
    }

    fn count_warnings(&self, n: usize) {
        self.parse_warnings.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Calls and tokens a run over `chunks` would need; cached calls cost nothing.
    /// (Gleaning calls are estimated as one more call of the same size per pass.)
    pub fn plan(&self, chunks: &[&Chunk], cache: Option<&dyn rhizome_core::llm::LlmCache>) -> Result<ExtractionPlan> {
        let mut p = ExtractionPlan::default();
        let id = self.provider.id();
        for c in chunks {
            p.chunks += 1;
            let req = self.first_request(c)?;
            let cached = match cache {
                Some(cache) => cache.get(&cache_key(&id, &req))?.is_some(),
                None => false,
            };
            if cached {
                p.cached_calls += 1;
                continue;
            }
            let prompt: u64 = req.messages.iter().map(|m| estimate_tokens(&m.content)).sum();
            // A typical extraction answer is about as long as the chunk, capped by max_tokens.
            let completion = estimate_tokens(&c.text).min(self.max_tokens as u64);
            // Gleaning passes, and the claims call (about as large as the extraction call).
            let passes = 1 + self.gleanings as u64 + self.claims.is_some() as u64;
            p.calls += passes;
            p.estimated_prompt_tokens += prompt * passes;
            p.estimated_completion_tokens += completion * passes;
        }
        Ok(p)
    }
}

fn merge(into: &mut Extraction, more: Extraction) {
    use rhizome_core::ids::normalize_name;
    for e in more.entities {
        if !into.entities.iter().any(|x| normalize_name(&x.name) == normalize_name(&e.name)) {
            into.entities.push(e);
        }
    }
    into.relations.extend(more.relations);
    into.facts.extend(more.facts);
}

impl Extractor for LlmExtractor {
    fn name(&self) -> &str {
        "llm"
    }

    fn extract(&self, chunk: &Chunk) -> Result<Extraction> {
        self.extract_batch(&[chunk]).pop().unwrap_or(Err(Error::Cancelled))
    }

    fn extract_batch(&self, chunks: &[&Chunk]) -> Vec<Result<Extraction>> {
        let futs = chunks.iter().map(|c| self.extract_one(c));
        self.runtime.block_on(futures_util::future::join_all(futs))
    }

    fn counts(&self) -> ExtractorCounts {
        ExtractorCounts {
            parse_warnings: self.parse_warnings.load(Ordering::Relaxed),
            claim_replies_unreadable: self.claims_unreadable.load(Ordering::Relaxed),
        }
    }
}
