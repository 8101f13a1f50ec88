//! Small word lists the heuristics use (lowercase). No gazetteer beyond a few dozen
//! country and continent names.
//!
//! Layout: `sets` (the set type and its helpers), `function_words` (starters, particles,
//! abbreviations), `names` (the shape of a name), `orgs`, `places` and `persons` (cues for
//! each kind of name), `values` (dates, numbers and money).

mod function_words;
mod names;
mod orgs;
mod persons;
mod places;
mod sets;
mod values;

pub use function_words::{ABBREVIATIONS, PARTICLES, STARTERS, VI_COMMON};
pub use names::{EVENT_WORDS, POSSESSIVE_HEADS, VI_COMPOUNDS, VI_NAME_HEADS};
pub use orgs::{ORG_WORDS, VI_ORG_HEADS};
pub use persons::{HONORIFICS, NON_PERSON, PERSON_AFTER, PERSON_BEFORE, QUALIFIERS, ROLE_TITLES};
pub use places::{LOC_WORDS, PLACES, PLACE_BEFORE, VI_LOC_HEADS};
pub use sets::has;
pub(crate) use sets::words;
pub use values::{CURRENCY_SYMBOLS, CURRENCY_WORDS, MONTHS, SCALES, WEEKDAYS};
