//! Extractors: find entities, relations and facts in chunks. [`NlpExtractor`] is the
//! LLM-free, deterministic one (name `nlp`), for English, Vietnamese and Chinese text.
//!
//! Layout: `tokens` (a sentence as tokens), `lexicon` (cue word lists), `mention` (a
//! span and how a detector claims it), `spans` (quoted terms, money, dates, capitalised
//! names, numbers), `chinese` (CJK dates, money and names), `zh_tags` (Chinese names from
//! jieba's part-of-speech tags), `classify` (types of capitalised names), `en_pos` (the
//! English part-of-speech tagger) and `en_phrases` (lower-case English noun phrases from
//! its tags), `nlp` (the extractor).

mod chinese;
mod classify;
pub mod en_phrases;
pub mod en_pos;
mod lexicon;
mod mention;
mod nlp;
mod spans;
mod tokens;
mod zh_tags;

pub use mention::Mention;
pub use nlp::NlpExtractor;
pub use spans::sentence_mentions;
