//! Markup to text, tolerant of HTML that is not well-formed XML (EPUB chapters, mail).

/// Elements whose start and end break the line.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "blockquote",
    "pre",
    "section",
    "article",
    "header",
    "footer",
    "aside",
    "nav",
    "figure",
    "figcaption",
    "hr",
    "title",
    "body",
    "td",
    "th",
    "address",
    "main",
];

/// Elements whose content is not text.
const SKIPPED: &[&str] = &["script", "style", "head", "svg", "math", "template", "noscript"];

/// The text of `html`: tags stripped, block elements as line breaks, entities decoded,
/// and the text of the first heading (`h1`..`h6`), if any.
pub(crate) fn to_text(html: &str) -> (String, Option<String>) {
    let mut out = String::with_capacity(html.len() / 2);
    let mut heading: Option<String> = None;
    let mut in_heading: Option<usize> = None; // where the first heading's text starts
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        push_text(&mut out, &rest[..lt]);
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let end = after.find("]]>").unwrap_or(after.len());
            out.push_str(&after[..end]);
            rest = after.get(end + 3..).unwrap_or("");
            continue;
        }
        let starts_tag = rest[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '!' || c == '?');
        let Some(gt) = tag_end(rest).filter(|_| starts_tag) else {
            // A `<` that opens no tag (`a < b` in a mail) is text.
            out.push('<');
            rest = &rest[1..];
            continue;
        };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == ':' || *c == '-')
            .collect::<String>()
            .to_ascii_lowercase();
        let local = name.rsplit(':').next().unwrap_or("");
        if !closing && !tag.ends_with('/') && SKIPPED.contains(&local) {
            rest = skip_element(rest, local);
            continue;
        }
        let is_heading = matches!(local, "h1" | "h2" | "h3" | "h4" | "h5" | "h6");
        if is_heading && heading.is_none() {
            if !closing && in_heading.is_none() {
                out.push('\n');
                in_heading = Some(out.len());
            } else if let (true, Some(start)) = (closing, in_heading) {
                let h = crate::text::tidy(&out[start..]).replace('\n', " ");
                if !h.is_empty() {
                    heading = Some(h);
                }
                in_heading = None;
            }
        }
        if BLOCKS.contains(&local) {
            out.push('\n');
        } else if matches!(local, "td" | "th") {
            out.push(' ');
        }
    }
    push_text(&mut out, rest);
    (out, heading)
}

/// Index of the `>` closing the tag at the start of `s`: the first `>`, unless it falls
/// inside a quoted attribute value, then the first outside quotes within a few KiB more
/// (so that a stray quote costs a bounded scan, not one to the end of the file).
fn tag_end(s: &str) -> Option<usize> {
    let first = s.find('>')?;
    let quotes = |q: u8| s.as_bytes()[..first].iter().filter(|b| **b == q).count();
    if quotes(b'"') % 2 == 0 && quotes(b'\'') % 2 == 0 {
        return Some(first);
    }
    let mut quote = None;
    for (i, b) in s.bytes().enumerate().take(first + 4096).skip(1) {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), _) if q == b => quote = None,
            (None, b'>') => return Some(i),
            _ => {}
        }
    }
    Some(first)
}

/// What follows the end tag of `name` (case-insensitive), or nothing when it has none.
fn skip_element<'a>(s: &'a str, name: &str) -> &'a str {
    let mut from = 0;
    while let Some(i) = s[from..].find("</").map(|i| from + i) {
        let after = &s.as_bytes()[i + 2..];
        if after.len() >= name.len() && after[..name.len()].eq_ignore_ascii_case(name.as_bytes()) {
            return s[i..].find('>').map_or("", |j| &s[i + j + 1..]);
        }
        from = i + 2;
    }
    ""
}

/// Appends `raw` text with its character and entity references decoded.
fn push_text(out: &mut String, raw: &str) {
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest.bytes().take(40).position(|b| b == b';');
        match end.and_then(|e| entity(&rest[1..e]).map(|c| (e, c))) {
            Some((e, c)) => {
                out.push_str(c.as_ref());
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
}

/// The text of an entity or character reference's name (`amp`, `#233`, `#x1EA1`).
pub(crate) fn entity(name: &str) -> Option<std::borrow::Cow<'static, str>> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code).map(|c| c.to_string().into());
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
        "sect" => "\u{a7}",
        "para" => "\u{b6}",
        "times" => "\u{d7}",
        "divide" => "\u{f7}",
        _ => return None,
    };
    Some(s.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_tags_and_decodes() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
            <h1 class=\"x\">Chapter <b>One</b></h1><p>A &amp; B&nbsp;&#233;&#x1EA1;</p>\
            <!-- note --><SCRIPT>var a = '<p>';</Script><p>C<br/>D</p><p>1 < 2 <3</p></body></html>";
        let (text, heading) = to_text(html);
        assert_eq!(crate::text::tidy(&text), "Chapter One\n\nA & B é\u{1ea1}\n\nC\nD\n\n1 < 2 <3");
        assert_eq!(heading.as_deref(), Some("Chapter One"));
    }
}
