//! The shape of a name: Vietnamese heads that take lowercase syllables inside, heads that
//! take a possessive inside, and words after which a name may take a year.

use std::collections::HashSet;
use std::sync::LazyLock;

use super::orgs::ORG_WORDS;
use super::places::LOC_WORDS;
use super::sets::{set, Set};

/// First syllables of Vietnamese names of prizes and institutions, which may take a
/// lowercase connector inside ("Giải Nguyên tử vì Hòa bình", "Bộ Giáo dục và Đào tạo").
pub static VI_NAME_HEADS: Set = set![
    "giải",
    "huy",
    "viện",
    "bộ",
    "đại",
    "trường",
    "hội",
    "quỹ",
    "công",
    "ngân",
    "học",
    "ủy",
    "ban",
    "sở",
    "cục",
    "tổng",
    "liên",
    "tập",
    "nhà",
    "bảo",
    "thư",
];

/// Last words of a name that takes a possessive inside ("St Paul's Cathedral").
pub static POSSESSIVE_HEADS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    let extra = [
        "cathedral",
        "chapel",
        "abbey",
        "parish",
        "witnesses",
        "day",
        "prize",
        "cup",
        "studies",
        "hospital",
        "college",
        "church",
        "island",
        "bay",
        "point",
        "inn",
        "restaurant",
    ];
    ORG_WORDS.iter().chain(LOC_WORDS.iter()).copied().chain(extra).collect()
});

/// Vietnamese two-syllable heads written with a lowercase second syllable inside names,
/// as (first, second): "Đại học Copenhagen", "Huy chương Rutherford", "Vật lý".
pub const VI_COMPOUNDS: &[(&str, &str)] = &[
    ("đại", "học"),
    ("huy", "chương"),
    ("dự", "án"),
    ("công", "ty"),
    ("ngân", "hàng"),
    ("thành", "phố"),
    ("bệnh", "viện"),
    ("tập", "đoàn"),
    ("học", "viện"),
    ("vật", "lý"),
    ("hóa", "học"),
    ("hoá", "học"),
    ("y", "học"),
    ("văn", "học"),
    ("hòa", "bình"),
    ("kinh", "tế"),
    ("toán", "học"),
    ("sinh", "học"),
    ("nguyên", "tử"),
    ("quốc", "gia"),
    ("trường", "đại"),
    ("ủy", "ban"),
    ("chính", "phủ"),
    ("quốc", "hội"),
    ("giáo", "dục"),
    ("đào", "tạo"),
    ("khoa", "học"),
    ("công", "nghệ"),
    ("y", "tế"),
    ("ngoại", "giao"),
    ("quốc", "phòng"),
    ("văn", "hóa"),
    ("văn", "hoá"),
    ("thể", "thao"),
    ("du", "lịch"),
    ("nông", "nghiệp"),
    ("tài", "chính"),
    ("xã", "hội"),
    ("nhân", "dân"),
    ("bảo", "tàng"),
    ("thư", "viện"),
];

/// Words after which a span may take a trailing year ("Giải Nobel Vật lý 1975").
pub static EVENT_WORDS: Set = set![
    "nobel",
    "giải",
    "prize",
    "award",
    "cup",
    "olympics",
    "games",
    "expo",
    "championship",
    "championships",
    "festival",
    "election",
    "census",
];
