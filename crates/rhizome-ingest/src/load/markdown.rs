//! Markdown to plain text: the words stay, the markup goes.

/// Plain text of Markdown `md`, and its title (front-matter `title:`, else the first
/// heading). Removes heading `#`s and setext underlines, emphasis and code markers, code
/// fence lines (their content is kept), link targets and image URLs (link text and alt text
/// are kept), list and quote markers, table pipes, reference definitions, inline HTML tags
/// and YAML front matter.
pub fn markdown_to_text(md: &str) -> (Option<String>, String) {
    let lines: Vec<&str> = md.lines().collect();
    let mut title: Option<String> = None;
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    // YAML front matter.
    if lines.first().is_some_and(|l| l.trim_end() == "---") {
        let end = lines.iter().skip(1).position(|l| matches!(l.trim_end(), "---" | "..."));
        // Only YAML-looking lines in between (else it is a horizontal rule).
        let yaml = |l: &&str| l.trim().is_empty() || l.contains(':') || l.starts_with([' ', '-', '#']);
        if let Some(end) = end.filter(|&e| lines[1..=e].iter().all(yaml)) {
            for l in &lines[1..=end] {
                if let Some(v) = l.strip_prefix("title:") {
                    let v = v.trim().trim_matches(|c| c == '"' || c == '\'').trim();
                    if !v.is_empty() {
                        title = Some(v.to_string());
                    }
                }
            }
            i = end + 2;
        }
    }
    let mut fence: Option<(char, usize)> = None;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        i += 1;
        if let Some((c, n)) = fence {
            if indent < 4
                && trimmed.starts_with(&c.to_string().repeat(n))
                && trimmed.trim_start_matches(c).trim().is_empty()
            {
                fence = None;
            } else {
                out.push(line.to_string());
            }
            continue;
        }
        if indent < 4 {
            if let Some(c) = ['`', '~'].into_iter().find(|c| trimmed.starts_with(&c.to_string().repeat(3))) {
                fence = Some((c, trimmed.len() - trimmed.trim_start_matches(c).len()));
                continue;
            }
        }
        if trimmed.is_empty() {
            out.push(String::new());
            continue;
        }
        // ATX heading.
        if indent < 4 && trimmed.starts_with('#') {
            let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
            let rest = &trimmed[hashes..];
            if hashes <= 6 && (rest.is_empty() || rest.starts_with([' ', '\t'])) {
                let text = strip_inline(rest.trim().trim_end_matches('#').trim());
                heading(&mut title, &text);
                out.push(text);
                continue;
            }
        }
        // Setext heading: a text line underlined by === or ---.
        if let Some(next) = lines.get(i) {
            let n = next.trim();
            if n.len() >= 2 && (n.bytes().all(|b| b == b'=') || n.bytes().all(|b| b == b'-')) && !is_list_item(trimmed)
            {
                let text = strip_inline(trimmed.trim());
                heading(&mut title, &text);
                out.push(text);
                i += 1;
                continue;
            }
        }
        if is_table_separator(trimmed) {
            continue;
        }
        if is_rule(trimmed) || is_reference_definition(trimmed) {
            out.push(String::new());
            continue;
        }
        let mut body = trimmed;
        while let Some(rest) = body.strip_prefix('>') {
            body = rest.trim_start();
        }
        body = strip_list_marker(body);
        let mut text = strip_inline(body);
        if text.contains('|') {
            text = text.split('|').map(str::trim).filter(|c| !c.is_empty()).collect::<Vec<_>>().join(" ");
        }
        out.push(text.trim_end().to_string());
    }
    (title, tidy(&out))
}

fn heading(title: &mut Option<String>, text: &str) {
    if title.is_none() && !text.trim().is_empty() {
        *title = Some(text.trim().to_string());
    }
}

/// Joins lines, dropping leading/trailing blank lines and runs of blank lines.
fn tidy(lines: &[String]) -> String {
    let mut out = String::new();
    let mut blank = false;
    for l in lines {
        if l.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        out.push_str(l);
        blank = false;
    }
    out
}

fn is_rule(t: &str) -> bool {
    let t: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    t.len() >= 3 && ["-", "*", "_"].iter().any(|c| t.chars().all(|x| x.to_string() == *c))
}

fn is_reference_definition(t: &str) -> bool {
    t.starts_with('[') && t.find("]:").is_some_and(|p| p > 1 && !t[p + 2..].trim().is_empty())
}

fn is_table_separator(t: &str) -> bool {
    t.contains('-') && t.contains('|') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

fn is_list_item(t: &str) -> bool {
    strip_list_marker(t).len() != t.len()
}

/// Removes a leading `- `, `* `, `+ `, `1. ` or `1) ` bullet and a task box `[ ] `.
fn strip_list_marker(t: &str) -> &str {
    let rest = if let Some(r) = t.strip_prefix(['-', '*', '+']) {
        r
    } else {
        let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || digits > 9 {
            return t;
        }
        match t[digits..].strip_prefix(['.', ')']) {
            Some(r) => r,
            None => return t,
        }
    };
    if !rest.starts_with([' ', '\t']) {
        return t;
    }
    let rest = rest.trim_start();
    for box_ in ["[ ] ", "[x] ", "[X] "] {
        if let Some(r) = rest.strip_prefix(box_) {
            return r.trim_start();
        }
    }
    rest
}

/// Removes inline markup from one line.
fn strip_inline(line: &str) -> String {
    let c: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        match ch {
            '\\' if c.get(i + 1).is_some_and(|n| n.is_ascii_punctuation()) => {
                out.push(c[i + 1]);
                i += 2;
            }
            '!' if c.get(i + 1) == Some(&'[') => match link(&c, i + 1) {
                Some((text, end)) => {
                    out.push_str(&strip_inline(&text));
                    i = end;
                }
                None => {
                    out.push('!');
                    i += 1;
                }
            },
            '[' => match link(&c, i) {
                Some((text, end)) => {
                    out.push_str(&strip_inline(&text));
                    i = end;
                }
                None => {
                    out.push('[');
                    i += 1;
                }
            },
            '<' => match c[i + 1..].iter().position(|&x| x == '>' || x == '<') {
                Some(p) if c[i + 1 + p] == '>' && p > 0 => {
                    let inner: String = c[i + 1..i + 1 + p].iter().collect();
                    if inner.contains("://") || (inner.contains('@') && !inner.contains(' ')) {
                        out.push_str(&inner); // autolink
                    } else if !(inner.starts_with(|x: char| x.is_ascii_alphabetic() || x == '/' || x == '!')) {
                        out.push('<');
                        i += 1;
                        continue;
                    }
                    i += p + 2;
                }
                _ => {
                    out.push('<');
                    i += 1;
                }
            },
            '`' => i += 1,
            '*' | '~' | '_' => {
                let run = c[i..].iter().take_while(|&&x| x == ch).count();
                let prev = if i > 0 { c[i - 1] } else { ' ' };
                let next = c.get(i + run).copied().unwrap_or(' ');
                let keep = match ch {
                    '*' => prev.is_whitespace() && next.is_whitespace(),
                    '_' => prev.is_alphanumeric() && next.is_alphanumeric(),
                    _ => run == 1,
                };
                if keep {
                    out.extend(std::iter::repeat_n(ch, run));
                }
                i += run;
            }
            _ => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

/// A link `[text](target)`, `[text][ref]` or `[text]` followed by one of those at `c[start]`:
/// its text and the index after it. Plain `[text]` without a target is not a link.
fn link(c: &[char], start: usize) -> Option<(String, usize)> {
    let mut depth = 0;
    let mut close = None;
    for (k, &x) in c.iter().enumerate().skip(start) {
        match x {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(k);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let text: String = c[start + 1..close].iter().collect();
    let (open, shut) = match c.get(close + 1) {
        Some('(') => ('(', ')'),
        Some('[') => ('[', ']'),
        _ => return None,
    };
    let mut depth = 0;
    for (k, &x) in c.iter().enumerate().skip(close + 1) {
        if x == open {
            depth += 1;
        } else if x == shut {
            depth -= 1;
            if depth == 0 {
                return Some((text, k + 1));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_markup() {
        let md = "---\nlayout: post\n---\n# Niels *Bohr*\n\nSee [the **institute**](https://nbi.ku.dk) and ![a photo](p.png).\n\n- item one\n1. `code` two\n> quoted_name here\n\n```rust\nlet x = 1;\n```\n\n| a | b |\n|---|---|\n| c | d |\n\n[ref]: http://x\nSub\n---\n";
        let (title, text) = markdown_to_text(md);
        assert_eq!(title.as_deref(), Some("Niels Bohr"));
        assert_eq!(
            text,
            "Niels Bohr\n\nSee the institute and a photo.\n\nitem one\ncode two\nquoted_name here\n\nlet x = 1;\n\na b\nc d\n\nSub"
        );
        let (t, body) = markdown_to_text("---\ntitle: \"Front\"\n---\nText 2 * 3 <b>bold</b> <http://a.b>");
        assert_eq!(t.as_deref(), Some("Front"));
        assert_eq!(body, "Text 2 * 3 bold http://a.b");
        let (t, body) = markdown_to_text("---\nNot front matter\n---\nEnd");
        assert_eq!((t.as_deref(), body.as_str()), (Some("Not front matter"), "Not front matter\nEnd"));
    }
}
