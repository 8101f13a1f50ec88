//! Chinese names from jieba's part-of-speech tags ([`rhizome_core::text::zh::tag`]):
//! `nr`/`nrt`/`nrfg` person, `ns` place, `nt` organisation, `nz` other proper noun.
//! Runs after the date, cue and suffix rules of `chinese.rs`, on the characters they
//! left; Latin-script names inside Chinese text ("OpenAI", "Sam Altman", jieba's `eng`)
//! are found by the capitalised-span rules.

use rhizome_core::text::{stop::ZH_STOP, zh};

use super::mention::{push, Mention};
use super::tokens::Sent;

/// Words the tagger marks as names that are generic nouns, or verbs it mistakes for
/// given names.
const NOT_NAMES: [&str; 24] = [
    "城市", "国家", "地方", "农村", "世界", "全球", "国际", "中央", "地区", "当地", "各地", "海外", "加薪", "升职",
    "中外", "东西", "南北", "全国", "本地", "外地", "内地", "首都", "省会", "乡村",
];

/// The entity type for a jieba tag, if it tags a name.
fn name_type(tag: &str) -> Option<&'static str> {
    match tag {
        "nr" | "nrt" | "nrfg" => Some("PERSON"),
        "ns" => Some("LOCATION"),
        "nt" => Some("ORGANIZATION"),
        "nz" => Some("ENTITY"),
        _ => None,
    }
}

/// Claims the words jieba tags as names: Han words of 2 to 12 characters whose
/// characters are all still free, generic nouns and stop words left out.
pub(crate) fn tagged_names(s: &mut Sent, out: &mut Vec<Mention>) {
    let text = s.text;
    for w in zh::tag(text) {
        let Some(ty) = name_type(w.tag) else { continue };
        let chars = w.word.chars().count();
        if !(2..=12).contains(&chars)
            || !w.word.chars().all(rhizome_core::lang::is_han)
            || NOT_NAMES.contains(&w.word)
            || ZH_STOP.contains(&w.word)
        {
            continue;
        }
        let (a, b) = s.tokens_in(w.start, w.end);
        if a < b && s.bytes(a, b) == (w.start, w.end) && s.all_free(a, b) {
            push(s, out, a, b, ty);
        }
    }
}
