//! Communities of the entity graph: hierarchical Leiden clustering ([`leiden`],
//! [`hierarchy`]), communities as records ([`build`]), and their reports — written by the
//! LLM from material under a token budget ([`context`], [`report_llm`]) or extractively
//! ([`report_extractive`]) — kept current by [`reports::refresh`], and written for a
//! question's scope of documents by [`scoped_reports`].

pub mod build;
pub mod context;
pub mod hierarchy;
pub mod leiden;
mod material;
pub mod report_extractive;
pub mod report_llm;
pub mod reports;
pub mod scoped;

pub use reports::{refresh, CommunityOutcome};
pub use scoped::scoped_reports;
