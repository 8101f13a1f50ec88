//! Evaluation: question sets in the MuSiQue, HotpotQA and 2WikiMultiHopQA formats, and
//! the metrics `rhizome eval` reports (Recall@k of supporting passages as HippoRAG
//! defines it, latency percentiles, SQuAD-style EM/F1).

mod metrics;
mod questions;

pub use metrics::{contains_gold, exact_match, f1, percentile, recall_at_k};
pub use questions::{load_questions, PassageKey, Question};
