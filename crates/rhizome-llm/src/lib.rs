//! LLM support: providers, wrappers, prompts, output parsing, the LLM extractor.
//!
//! - [`openai`]: the OpenAI-compatible HTTP provider (chat and embeddings).
//! - [`wrappers`]: [`Cached`], [`Retry`], [`Limited`], [`Metered`] — composable around any
//!   provider.
//! - [`prompt`]: prompt files, built in and overridable.
//! - [`parse`]: robust parsing of extraction output.

pub mod answer;
pub mod blocking;
pub mod extractor;
pub mod openai;
pub mod parse;
pub mod prompt;
pub mod summarize;
pub mod wrappers;

pub use blocking::BlockingLlm;
pub use extractor::{ExtractionPlan, LlmExtractor};
pub use openai::{OpenAiConfig, OpenAiProvider};
pub use summarize::LlmSummarizer;
pub use wrappers::{estimate_tokens, Cached, Limited, Metered, Retry, StageUsage};
