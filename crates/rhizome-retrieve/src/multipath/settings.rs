//! `multipath`'s settings (`[multipath]`): how many entities, relations, chunks and facts each path keeps.
//! Each setting is one line of [`rhizome_core::section!`]: its default, and for numeric and
//! enum settings its rule and a `Valid: ...` sentence in its doc comment (`tests/settings.rs`
//! keeps the two in step).

use rhizome_core::section;

section! {
    "multipath",
    /// `multipath`: entity, relationship, chunk and fact discovery by several paths.
    pub struct MultipathConfig {
        /// Keywords taken from the question. Valid: an integer from 1 to 100.
        pub keyword_limit: usize = 10 => int(1, 100),
        /// Entities kept per discovery path. Valid: an integer from 1 to 1000.
        pub entity_top_k: usize = 5 => int(1, 1000),
        /// Valid: an integer from 1 to 10000.
        pub max_entities: usize = 30 => int(1, 10_000),
        /// Entities whose 2-hop neighbourhood is expanded. Valid: an integer from 0 to 1000.
        pub expand_entities: usize = 5 => int(0, 1000),
        /// Valid: an integer from 0 to 10000.
        pub max_relationships: usize = 20 => int(0, 10_000),
        /// Valid: an integer from 1 to 1000.
        pub chunk_top_k: usize = 15 => int(1, 1000),
        /// Valid: an integer from 0 to 1000.
        pub fact_top_k: usize = 15 => int(0, 1000),
        /// With an LLM configured: let it rerank the chunks.
        pub llm_rerank: bool = false,
    }
    impl {}
}
