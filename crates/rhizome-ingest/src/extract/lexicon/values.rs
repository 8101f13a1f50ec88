//! Words around dates, numbers and money: months, weekdays, scale and currency words.

use super::sets::{set, Set};

/// Months, full and abbreviated.
pub static MONTHS: Set = set![
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
];

/// Days of the week.
pub static WEEKDAYS: Set = set!["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// Number scale words ("10 billion").
pub static SCALES: Set = set![
    "hundred", "thousand", "million", "billion", "trillion", "bn", "mn", "percent", "triệu", "tỷ", "nghìn", "ngàn",
];

/// Currency words after a number ("10 dollars").
pub static CURRENCY_WORDS: Set = set![
    "dollar", "dollars", "usd", "eur", "euro", "euros", "pound", "pounds", "gbp", "yen", "yuan", "rmb", "renminbi",
    "đồng", "vnd", "rupee", "rupees", "franc", "francs", "marks", "cents",
];

/// Currency symbols before a number ("$10").
pub const CURRENCY_SYMBOLS: [&str; 8] = ["$", "€", "£", "¥", "₫", "₹", "₩", "₽"];
