//! The Neo4j-style modes' settings (`[modes]`): graph reasoning's seeds, depth and additions.
//! Every numeric and enum setting has a rule in [`Section::RULES`] and a `Valid: ...`
//! sentence in its doc comment (`tests/settings.rs` keeps the two in step).

use rhizome_core::config::Section;
use rhizome_core::config_rules::{int, Rule};
use serde::{Deserialize, Serialize};

/// The Neo4j-style modes (`chunk-only`, `entity-only`, `hybrid`, `graph-enhanced`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModesConfig {
    /// Top chunks graph reasoning expands from. Valid: an integer from 1 to 1000.
    pub seed_chunks: usize,
    /// Expansion depth through SIMILAR_TO and same-document links.
    /// Valid: an integer from 0 to 10.
    pub max_depth: usize,
    /// Most chunks graph reasoning adds. Valid: an integer from 0 to 1000.
    pub max_chunks: usize,
}

impl Default for ModesConfig {
    fn default() -> Self {
        ModesConfig { seed_chunks: 3, max_depth: 2, max_chunks: 10 }
    }
}

impl Section for ModesConfig {
    const NAME: &'static str = "modes";
    const RULES: &'static [Rule] =
        &[int("modes.seed_chunks", 1, 1000), int("modes.max_depth", 0, 10), int("modes.max_chunks", 0, 1000)];
}
