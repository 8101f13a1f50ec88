//! Cue words per language. English and Vietnamese cues match whole words (Vietnamese
//! also without diacritics); Chinese cues match as substrings.
//!
//! Layout: `lists` (the [`Cues`] type), `en`, `vi` and `zh` (each language's lists).

mod en;
mod lists;
mod vi;
mod zh;

use super::Lang;
pub(crate) use lists::Cues;

pub(crate) fn cues(lang: Lang) -> &'static Cues {
    match lang {
        Lang::En => &en::EN,
        Lang::Vi => &vi::VI,
        Lang::Zh => &zh::ZH,
    }
}
