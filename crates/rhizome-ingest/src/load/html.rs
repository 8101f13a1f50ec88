//! HTML to plain text, by hand: tags stripped, entities decoded, blocks on their own lines.

use std::borrow::Cow;

/// Elements whose content is not text.
const SKIPPED: [&str; 8] = ["script", "style", "head", "noscript", "template", "svg", "iframe", "object"];

/// Elements that start or end a line.
const BLOCKS: [&str; 40] = [
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
    "blockquote",
    "pre",
    "hr",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "form",
    "address",
    "body",
    "html",
    "option",
    "details",
    "summary",
    "caption",
    "thead",
    "tbody",
    "title",
];

/// Elements separating paragraphs (a blank line).
const PARAGRAPHS: [&str; 9] = ["p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"];

/// Plain text of `html` and its `<title>`. Drops `<head>` (except the title), scripts,
/// styles and comments; strips tags; decodes entities ([`decode_entities`]); collapses
/// whitespace; puts block elements (`p`, `div`, `br`, `li`, `h1`..) on their own lines and
/// table cells apart by spaces.
pub fn html_to_text(html: &str) -> (Option<String>, String) {
    let lower = html.to_ascii_lowercase(); // same byte offsets as `html`
    let title = find_title(html, &lower);
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0;
    while i < html.len() {
        let Some(lt) = lower[i..].find('<').map(|p| p + i) else {
            push_text(&mut out, &html[i..]);
            break;
        };
        push_text(&mut out, &html[i..lt]);
        let rest = &lower[lt..];
        if rest.starts_with("<!--") {
            i = rest.find("-->").map_or(html.len(), |p| lt + p + 3);
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            i = rest.find('>').map_or(html.len(), |p| lt + p + 1);
            continue;
        }
        let closing = rest.as_bytes().get(1) == Some(&b'/');
        let name_start = lt + 1 + usize::from(closing);
        let name_len = lower[name_start..].bytes().take_while(|b| b.is_ascii_alphanumeric()).count();
        if name_len == 0 || !lower.as_bytes()[name_start].is_ascii_alphabetic() {
            push_text(&mut out, "<");
            i = lt + 1;
            continue;
        }
        let name = &lower[name_start..name_start + name_len];
        let end = tag_end(&lower, name_start + name_len);
        i = end;
        if !closing && SKIPPED.contains(&name) && !lower[lt..end].ends_with("/>") {
            let close = format!("</{name}");
            i = match lower[end..].find(&close) {
                Some(p) => tag_end(&lower, end + p + close.len()),
                // An unclosed <head> ends where the body starts.
                None if name == "head" => lower[end..].find("<body").map_or(html.len(), |p| end + p),
                None => html.len(),
            };
            continue;
        }
        if PARAGRAPHS.contains(&name) {
            out.push_str("\n\n");
        } else if BLOCKS.contains(&name) {
            out.push('\n');
        } else if matches!(name, "td" | "th") && !out.ends_with([' ', '\n']) {
            out.push(' ');
        }
    }
    (title, tidy(&out))
}

/// Index after the `>` closing a tag whose attributes start at `from` (quotes respected).
fn tag_end(lower: &str, from: usize) -> usize {
    let mut quote = None;
    let mut prev = b' ';
    for (k, b) in lower.as_bytes()[from..].iter().enumerate() {
        match (quote, *b) {
            // A quote opens an attribute value only right after `=`.
            (None, b'"' | b'\'') if prev == b'=' => quote = Some(*b),
            (Some(q), c) if c == q => quote = None,
            (None, b'>') => return from + k + 1,
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            prev = *b;
        }
    }
    lower.len()
}

fn find_title(html: &str, lower: &str) -> Option<String> {
    let mut from = 0;
    while let Some(p) = lower[from..].find("<title") {
        let start = from + p;
        let after = lower.as_bytes().get(start + 6).copied();
        if matches!(after, Some(b'>' | b' ' | b'\t' | b'\n' | b'\r')) {
            let open_end = tag_end(lower, start + 6);
            let close = lower[open_end..].find("</title").map_or(html.len(), |p| open_end + p);
            let title = decode_entities(&html[open_end..close]).split_whitespace().collect::<Vec<_>>().join(" ");
            return (!title.is_empty()).then_some(title);
        }
        from = start + 6;
    }
    None
}

/// Appends decoded text with whitespace runs collapsed to one space.
fn push_text(out: &mut String, raw: &str) {
    if raw.is_empty() {
        return;
    }
    for c in decode_entities(raw).chars() {
        if c.is_whitespace() {
            if !out.ends_with([' ', '\n']) && !out.is_empty() {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
}

/// Lines trimmed, at most one blank line in a row, none at the ends.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blanks = 0;
    for line in s.split('\n') {
        let line = line.trim();
        if line.is_empty() {
            blanks += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blanks >= 2 { "\n\n" } else { "\n" });
        }
        out.push_str(line);
        blanks = 0;
    }
    out
}

/// Decodes HTML character references: `&amp; &lt; &gt; &quot; &apos; &#39; &nbsp;` (as a
/// space), a few common named ones (dashes, quotes, `&copy;`..) and numeric `&#NNN;` /
/// `&#xHH;`. Anything unknown or invalid is left as written.
pub fn decode_entities(s: &str) -> Cow<'_, str> {
    if !s.contains('&') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let semi = rest[1..].find(';').map(|p| p + 1).filter(|&p| p <= 12);
        let decoded = semi.and_then(|p| entity(&rest[1..p]).map(|c| (c, p)));
        match decoded {
            Some((c, p)) => {
                out.push(c);
                rest = &rest[p + 1..];
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

/// The character of an entity body (between `&` and `;`).
fn entity(body: &str) -> Option<char> {
    if let Some(num) = body.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse::<u32>().ok()?,
        };
        return char::from_u32(code).filter(|&c| c != '\0');
    }
    Some(match body {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" | "ensp" | "emsp" | "thinsp" => ' ',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "euro" => '€',
        "pound" => '£',
        "yen" => '¥',
        "cent" => '¢',
        "deg" => '°',
        "middot" => '·',
        "bull" => '•',
        "times" => '×',
        "shy" => '\u{ad}',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_text_and_title() {
        let html = "<!DOCTYPE html><html><head><title>Bohr &amp; Sons</title><style>p{}</style>\
            <script>var x = '<p>';</script></head><body><h1>Aage&nbsp;Bohr</h1><!-- note -->\
            <p>Won the <b>Nobel</b>   Prize&#44; 1975 &#x2014; physics.<br>Line two &lt;3</p>\
            <table><tr><td>a</td><td>b</td></tr></table><p>x &unknown; y & z</p></body></html>";
        let (title, text) = html_to_text(html);
        assert_eq!(title.as_deref(), Some("Bohr & Sons"));
        assert_eq!(text, "Aage Bohr\n\nWon the Nobel Prize, 1975 — physics.\nLine two <3\n\na b\n\nx &unknown; y & z");
        assert_eq!(html_to_text("a < b and c").1, "a < b and c");
        assert_eq!(decode_entities("&#0; &#99999999; &#65;"), "&#0; &#99999999; A");
    }
}
