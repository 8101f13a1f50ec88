//! HTML to text, by hand and tolerant of markup that is not well-formed (web pages, EPUB
//! chapters, mail bodies): the one converter for `.html` files, e-book chapters and HTML
//! mail.
//!
//! Paragraphs (`p`, headings, `blockquote`, `pre`) are set apart by a blank line, other
//! blocks (`div`, `li`, `tr`, `br`, ...) start a line, table cells of a row are joined by
//! ` | `; whitespace runs collapse to one space except line breaks inside `pre`; scripts,
//! styles and other non-text elements are dropped; entities are decoded. Namespaced names
//! (`<html:p>` in XHTML) count by their local part. Every step moves forward through the
//! input, and the look-ahead past a quoted `>` is bounded, so the cost is linear in the
//! input's length whatever it holds.

use std::borrow::Cow;

/// Elements whose content is not text.
const SKIPPED: &[&str] = &["script", "style", "svg", "math", "template", "noscript", "iframe", "object"];

/// Elements set apart by a blank line.
const PARAGRAPHS: &[&str] = &["p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"];

/// Elements that start and end a line.
const BLOCKS: &[&str] = &[
    "div",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "tr",
    "table",
    "thead",
    "tbody",
    "tfoot",
    "caption",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
    "hr",
    "figure",
    "figcaption",
    "form",
    "address",
    "body",
    "html",
    "head",
    "option",
    "details",
    "summary",
    "fieldset",
    "legend",
];

/// Bytes looked at past a tag's first `>` for the end of a quoted attribute value.
const QUOTE_SPAN: usize = 4096;

/// Longest character reference looked at (`&` to `;`).
const MAX_REFERENCE: usize = 32;

/// What [`html_to_text`] reads from a page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HtmlText {
    /// The text (NFC, lines trimmed, at most one blank line between paragraphs).
    pub text: String,
    /// The `<title>`, whitespace collapsed, if any.
    pub title: Option<String>,
    /// The first heading's (`h1`..`h6`) text, if any.
    pub heading: Option<String>,
}

/// The text, title and first heading of `html`.
pub fn html_to_text(html: &str) -> HtmlText {
    let lower = html.to_ascii_lowercase(); // same byte offsets as `html`
    let b = lower.as_bytes();
    let mut out = Out::default();
    let (mut title, mut heading) = (None, None);
    let mut heading_start: Option<usize> = None;
    let mut budget = html.len(); // look-ahead past first `>`s, shared by every tag
    let mut no_gt = false; // no `>` is left: every later `<` is text
    let mut i = 0;
    while let Some(lt) = lower[i..].find('<').map(|p| p + i) {
        out.text(&html[i..lt]);
        let rest = &lower[lt..];
        if rest.starts_with("<!--") {
            i = rest.find("-->").map_or(html.len(), |p| lt + p + 3);
            continue;
        }
        if rest.starts_with("<![cdata[") {
            let end = rest.find("]]>").map_or(html.len(), |p| lt + p);
            out.raw(&html[lt + 9..end]);
            i = (end + 3).min(html.len());
            continue;
        }
        let closing = b.get(lt + 1) == Some(&b'/');
        let name_start = lt + 1 + usize::from(closing);
        let opens = b.get(lt + 1).is_some_and(|c| matches!(c, b'!' | b'?'))
            || b.get(name_start).is_some_and(u8::is_ascii_alphabetic);
        let first_gt = if no_gt || !opens { None } else { lower[lt..].find('>').map(|p| lt + p) };
        let Some(first_gt) = first_gt else {
            // A `<` that opens no tag (`a < b` in a mail) is text.
            no_gt |= opens;
            out.text("<");
            i = lt + 1;
            continue;
        };
        if !b[lt + 1].is_ascii_alphabetic() && !closing {
            i = first_gt + 1; // <!DOCTYPE ..>, <?xml ..?>
            continue;
        }
        let name_len =
            b[name_start..].iter().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b':' | b'-')).count();
        let name = &lower[name_start..name_start + name_len];
        let name = name.rsplit(':').next().unwrap_or(name);
        let end = tag_end(b, name_start + name_len, first_gt, &mut budget);
        i = end;
        let self_closing = lower[lt..end].ends_with("/>");
        if !closing && !self_closing && (SKIPPED.contains(&name) || name == "title") {
            let (content_end, after) = element_end(&lower, end, name, &mut budget);
            if name == "title" && title.is_none() {
                let mut t = Out::default();
                t.text(&html[end..content_end]);
                title = Some(t.s.trim().to_string()).filter(|t| !t.is_empty());
            }
            i = after;
            continue;
        }
        if name == "br" {
            out.newline();
        } else if PARAGRAPHS.contains(&name) {
            out.paragraph();
            out.pre = match (name, closing) {
                ("pre", false) => out.pre + 1,
                ("pre", true) => out.pre.saturating_sub(1),
                _ => out.pre,
            };
        } else if BLOCKS.contains(&name) {
            out.line();
        } else if matches!(name, "td" | "th") && !closing {
            out.cell();
        }
        if matches!(name.as_bytes(), [b'h', b'1'..=b'6']) && heading.is_none() {
            match (closing, heading_start) {
                (false, None) => heading_start = Some(out.s.len()),
                (true, Some(start)) => {
                    let h = crate::text::tidy(&out.s[start..]).replace('\n', " ");
                    heading = Some(h).filter(|h| !h.is_empty());
                    heading_start = None;
                }
                _ => {}
            }
        }
    }
    out.text(&html[i.min(html.len())..]);
    HtmlText { text: crate::text::tidy(&out.s), title, heading }
}

/// Text as it is built: whitespace collapsed as it is appended.
#[derive(Default)]
struct Out {
    s: String,
    /// Depth of `pre` elements, where line breaks are kept.
    pre: usize,
    /// A cell began after text on its line: ` | ` goes before the next text.
    cell: bool,
}

impl Out {
    /// Appends `raw` with its character references decoded.
    fn text(&mut self, raw: &str) {
        if !raw.is_empty() {
            self.raw(&decode_entities(raw));
        }
    }

    /// Appends `s` as it is (no references), whitespace collapsed.
    fn raw(&mut self, s: &str) {
        for c in s.chars() {
            if c == '\n' && self.pre > 0 {
                self.newline();
            } else if c.is_whitespace() {
                if !self.s.is_empty() && !self.s.ends_with([' ', '\n']) {
                    self.s.push(' ');
                }
            } else {
                if std::mem::take(&mut self.cell) {
                    self.s.truncate(self.s.trim_end_matches(' ').len());
                    self.s.push_str(" | ");
                }
                self.s.push(c);
            }
        }
    }

    /// A line break (`br`, or a new line in `pre`).
    fn newline(&mut self) {
        self.cell = false;
        self.s.push('\n');
    }

    /// Starts a line unless at the start of one.
    fn line(&mut self) {
        self.cell = false;
        if !self.s.is_empty() && !self.s.ends_with('\n') {
            self.s.push('\n');
        }
    }

    /// Starts a paragraph: a blank line after what came before.
    fn paragraph(&mut self) {
        self.line();
        if !self.s.is_empty() && !self.s.ends_with("\n\n") {
            self.s.push('\n');
        }
    }

    /// A table cell: apart from the text before it on its line (an empty cell adds
    /// nothing).
    fn cell(&mut self) {
        self.cell = !self.s.is_empty() && !self.s.ends_with('\n');
    }
}

/// Index after the `>` ending the tag whose attributes start at `from`. A quote opened
/// right after `=` hides a `>` until it closes, looked for at most [`QUOTE_SPAN`] bytes
/// past `first_gt` and within `budget` (spent by every such look-ahead); past that, the
/// tag ends at `first_gt`.
fn tag_end(b: &[u8], from: usize, first_gt: usize, budget: &mut usize) -> usize {
    let limit = b.len().min(first_gt + 1 + QUOTE_SPAN.min(*budget));
    let mut quote = None;
    let mut prev = b' ';
    for (k, &c) in b.iter().enumerate().take(limit).skip(from) {
        match (quote, c) {
            (None, b'"' | b'\'') if prev == b'=' => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, b'>') => {
                *budget = budget.saturating_sub(k.saturating_sub(first_gt));
                return k + 1;
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            prev = c;
        }
    }
    *budget = budget.saturating_sub(limit.saturating_sub(first_gt + 1));
    first_gt + 1
}

/// Where the content of element `name` opened before `from` ends (its end tag, matched
/// case-insensitively in `lower`) and the index after that end tag; the end of the input
/// for both when it has none.
fn element_end(lower: &str, from: usize, name: &str, budget: &mut usize) -> (usize, usize) {
    let b = lower.as_bytes();
    let mut at = from;
    while let Some(p) = lower[at..].find("</").map(|p| at + p) {
        let n = p + 2;
        let local = b[n..].iter().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b':' | b'-')).count();
        let tag = &lower[n..n + local];
        if tag.rsplit(':').next() == Some(name) {
            let after = match lower[n..].find('>') {
                Some(gt) => tag_end(b, n + local, n + gt, budget),
                None => lower.len(),
            };
            return (p, after);
        }
        at = n;
    }
    (lower.len(), lower.len())
}

/// `s` with its character references decoded: numeric (`&#233;`, `&#x1EA1;`; not NUL) and
/// the common named ones ([`entity`]); anything unknown or invalid is left as written.
pub fn decode_entities(s: &str) -> Cow<'_, str> {
    if !s.contains('&') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let semi = rest.bytes().take(MAX_REFERENCE).position(|b| b == b';');
        match semi.and_then(|e| entity(&rest[1..e]).map(|c| (e, c))) {
            Some((e, c)) => {
                out.push_str(&c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The text of an entity or character reference's name (`amp`, `#233`, `#x1EA1`).
pub(crate) fn entity(name: &str) -> Option<Cow<'static, str>> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code).filter(|&c| c != '\0').map(|c| c.to_string().into());
    }
    let s = match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        "nbsp" | "ensp" | "emsp" | "thinsp" => " ",
        "shy" | "zwnj" | "zwj" => "",
        "ndash" => "\u{2013}",
        "mdash" => "\u{2014}",
        "lsquo" => "\u{2018}",
        "rsquo" => "\u{2019}",
        "ldquo" => "\u{201c}",
        "rdquo" => "\u{201d}",
        "laquo" => "\u{ab}",
        "raquo" => "\u{bb}",
        "hellip" => "\u{2026}",
        "bull" => "\u{2022}",
        "middot" => "\u{b7}",
        "copy" => "\u{a9}",
        "reg" => "\u{ae}",
        "trade" => "\u{2122}",
        "deg" => "\u{b0}",
        "euro" => "\u{20ac}",
        "pound" => "\u{a3}",
        "yen" => "\u{a5}",
        "cent" => "\u{a2}",
        "sect" => "\u{a7}",
        "para" => "\u{b6}",
        "times" => "\u{d7}",
        "divide" => "\u{f7}",
        _ => return None,
    };
    Some(s.into())
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
