//! Tidying extracted text and holding it to [`Limits::max_text`].

use crate::{nfc, Limits, ReadError, Result};

/// `s` in NFC with each line's runs of whitespace collapsed to one space and trimmed,
/// control characters dropped, and at most one blank line between paragraphs.
pub(crate) fn tidy(s: &str) -> String {
    let s = nfc(s);
    let mut out = String::with_capacity(s.len());
    let mut blank = false;
    let mut line = String::new();
    for raw in s.split(['\n', '\r', '\u{2028}', '\u{2029}']) {
        line.clear();
        let mut space = false;
        for c in raw.chars() {
            if c.is_whitespace() {
                space = true;
            } else if !c.is_control() && c != '\u{feff}' {
                if space && !line.is_empty() {
                    line.push(' ');
                }
                space = false;
                line.push(c);
            }
        }
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        blank = false;
        out.push_str(&line);
    }
    out
}

/// Fails once `text` holds more than [`Limits::max_text`] characters.
/// `s` when it is an ISO 8601 date or time (`YYYY-MM-DD` with a real month and day,
/// anything after it kept up to 40 characters), else None.
pub(crate) fn iso_date(s: &str) -> Option<String> {
    let s = s.trim();
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r.clone()).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if !(digits(0..4) && b.get(4) == Some(&b'-') && digits(5..7) && b.get(7) == Some(&b'-') && digits(8..10)) {
        return None;
    }
    let (month, day): (u32, u32) = (s[5..7].parse().ok()?, s[8..10].parse().ok()?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || (b.len() > 10 && b[10] != b'T' && b[10] != b' ') {
        return None;
    }
    Some(s.chars().take(40).collect())
}

pub(crate) fn check_len(text: &str, limits: &Limits) -> Result<()> {
    // Bytes bound characters from above: count only when the bytes could be too many.
    if text.len() > limits.max_text && text.chars().count() > limits.max_text {
        return Err(too_much_text(limits));
    }
    Ok(())
}

/// A cheap check while text accumulates: more than two bytes per allowed character is
/// taken as too much (text of three- and four-byte characters is refused a little early,
/// and memory stays within a few times the limit).
pub(crate) fn check_growing(len: usize, limits: &Limits) -> Result<()> {
    if len / 2 > limits.max_text {
        return Err(too_much_text(limits));
    }
    Ok(())
}

fn too_much_text(limits: &Limits) -> ReadError {
    ReadError::TooLarge(format!("more than {} characters of text", limits.max_text))
}

/// Fails when a file has more pages (slides, sheets, chapters) than allowed.
pub(crate) fn check_pages(count: usize, limits: &Limits) -> Result<()> {
    if count > limits.max_pages as usize {
        return Err(ReadError::TooLarge(format!("{count} pages, more than the {} allowed", limits.max_pages)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_iso_or_none() {
        assert_eq!(iso_date(" 2024-03-01T09:30:00Z ").as_deref(), Some("2024-03-01T09:30:00Z"));
        assert_eq!(iso_date("2024-03-01").as_deref(), Some("2024-03-01"));
        for bad in ["2024-13-01", "2024-03-00", "03/01/2024", "2024-3-1", "2024-03-01x", ""] {
            assert_eq!(iso_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn tidies_spaces_and_blank_lines() {
        let s = "  a \t b  \r\n\n\n\nc\u{a0}\u{a0}d\n \n";
        assert_eq!(tidy(s), "a b\n\nc d");
        assert_eq!(tidy("x\ny"), "x\ny");
        // Decomposed Vietnamese becomes composed.
        assert_eq!(tidy("Ha\u{300} N\u{1ed9}i"), "Hà Nội");
    }
}
