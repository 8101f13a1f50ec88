//! A word set: its type, the two ways the lists are written (`set!` and [`words`]) and
//! the membership test that ignores a trailing `.`.

use std::collections::HashSet;
use std::sync::LazyLock;

pub(super) type Set = LazyLock<HashSet<&'static str>>;

/// The set of the whitespace-separated words of `list`.
pub(crate) fn words(list: &'static str) -> HashSet<&'static str> {
    list.split_whitespace().collect()
}

macro_rules! set {
    ($($w:expr),* $(,)?) => { std::sync::LazyLock::new(|| [$($w),*].into_iter().collect()) };
}
pub(super) use set;

/// True if `w` (lowercase) is in `set`, ignoring a trailing `.`.
pub fn has(set: &HashSet<&'static str>, w: &str) -> bool {
    set.contains(w) || w.strip_suffix('.').is_some_and(|x| set.contains(x))
}
