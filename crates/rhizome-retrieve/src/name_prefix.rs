//! [`NamePrefixes`]: every entity's name, found by the beginning of the name or of one of
//! its words without looking at the other names: what a viewer's name search reads on an
//! index whose whole graph is not held ([`crate::graph::GraphCache::name_prefixes`]).

use rhizome_core::text::fold_diacritics;
use rhizome_core::EntityRow;

/// The key a viewer matches a name by: lowercased, without diacritics.
pub fn name_key(s: &str) -> String {
    fold_diacritics(&s.to_lowercase())
}

/// Strings one after another in one buffer (one allocation instead of one per string).
#[derive(Debug, Default)]
pub(crate) struct Packed {
    text: String,
    ends: Vec<u32>,
}

impl Packed {
    pub(crate) fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len() as u32);
    }
    pub(crate) fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }
}

/// Every entity's id and name key ([`name_key`]), numbered in id order (the whole graph's
/// entity numbers), with the keys sorted from each of their words on: the entities whose
/// name or a word of it starts with a prefix are one binary search and a run of that
/// list. At a million entities of names like MuSiQue's (20-byte ids, 18-byte names of
/// 2.7 words) it holds about 60 MB, read once per graph version from the entity rows.
#[derive(Debug, Default)]
pub struct NamePrefixes {
    ids: Packed,
    keys: Packed,
    /// (entity, byte offset of a word in its key), by the key from that word on.
    words: Vec<(u32, u32)>,
}

impl NamePrefixes {
    /// From every entity's row, in id order.
    pub fn new(rows: Vec<EntityRow>) -> NamePrefixes {
        let mut n = NamePrefixes::default();
        for (i, row) in rows.iter().enumerate() {
            n.ids.push(&row.id);
            let key = name_key(&row.name);
            let mut at_word = true;
            for (pos, c) in key.char_indices() {
                if c.is_whitespace() {
                    at_word = true;
                } else if at_word {
                    n.words.push((i as u32, pos as u32));
                    at_word = false;
                }
            }
            n.keys.push(&key);
        }
        let mut words = std::mem::take(&mut n.words);
        words.sort_unstable_by(|a, b| n.word_on(*a).cmp(n.word_on(*b)).then(a.cmp(b)));
        n.words = words;
        n
    }

    fn word_on(&self, (e, pos): (u32, u32)) -> &str {
        &self.keys.get(e)[pos as usize..]
    }

    /// How many entities it holds.
    pub fn len(&self) -> usize {
        self.ids.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of entity `e`.
    pub fn id(&self, e: u32) -> &str {
        self.ids.get(e)
    }

    /// The number of the entity `id` (ids are numbered in byte order).
    pub fn number(&self, id: &str) -> Option<u32> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.ids.get(mid as u32).cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u32),
            }
        }
        None
    }

    /// The name key of entity `e`.
    pub fn key(&self, e: u32) -> &str {
        self.keys.get(e)
    }

    /// The entities whose key, from the start of one of its words on, starts with `prefix`
    /// (a key): every entity whose key or a word of it starts with `prefix`, and others
    /// when `prefix` holds a space. Sorted, each once.
    pub fn starting(&self, prefix: &str) -> Vec<u32> {
        let from = self.words.partition_point(|&w| self.word_on(w) < prefix);
        let mut out: Vec<u32> =
            self.words[from..].iter().take_while(|&&w| self.word_on(w).starts_with(prefix)).map(|&(e, _)| e).collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, name: &str) -> EntityRow {
        EntityRow { id: id.into(), name: name.into(), entity_type: "T".into() }
    }

    #[test]
    fn names_are_found_by_the_start_of_any_word() {
        let n = NamePrefixes::new(vec![
            row("e1", "Aage Bohr"),
            row("e2", "Niels Bohr"),
            row("e3", "Bohrium"),
            row("e4", "Hà Nội"),
            row("e5", ""),
        ]);
        assert_eq!(n.len(), 5);
        assert_eq!(n.starting("bohr"), vec![0, 1, 2]);
        assert_eq!(n.starting("niels b"), vec![1]);
        assert_eq!(n.starting("noi"), vec![3]);
        assert_eq!(n.starting("ha n"), vec![3]);
        assert!(n.starting("ohr").is_empty());
        assert!(n.starting("zz").is_empty());
        assert_eq!((n.id(3), n.key(3)), ("e4", "ha noi"));
        assert_eq!(n.key(4), "");
        assert_eq!((n.number("e1"), n.number("e5"), n.number("e3")), (Some(0), Some(4), Some(2)));
        assert_eq!((n.number("e0"), n.number("e6"), n.number("e")), (None, None, None));
    }
}
