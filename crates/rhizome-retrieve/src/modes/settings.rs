//! The Neo4j-style modes' settings (`[modes]`): graph reasoning's seeds, depth and additions.
//! Each setting is one line of [`rhizome_core::section!`]: its default, and for numeric and
//! enum settings its rule and a `Valid: ...` sentence in its doc comment (`tests/settings.rs`
//! keeps the two in step).

use rhizome_core::section;

section! {
    "modes",
    /// The Neo4j-style modes (`chunk-only`, `entity-only`, `hybrid`, `graph-enhanced`).
    pub struct ModesConfig {
        /// Top chunks graph reasoning expands from. Valid: an integer from 1 to 1000.
        pub seed_chunks: usize = 3 => int(1, 1000),
        /// Expansion depth through SIMILAR_TO and same-document links.
        /// Valid: an integer from 0 to 10.
        pub max_depth: usize = 2 => int(0, 10),
        /// Most chunks graph reasoning adds. Valid: an integer from 0 to 1000.
        pub max_chunks: usize = 10 => int(0, 1000),
    }
    impl {}
}
