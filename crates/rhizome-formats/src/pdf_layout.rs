//! Laying out the glyphs of PDF pages as text: glyphs grouped into lines by baseline,
//! words and table cells by the gaps between them, two columns read one after the other,
//! running headers, footers and page numbers dropped, lines joined into paragraphs
//! (hyphenated words rejoined).

use std::collections::HashMap;

/// One glyph as drawn: its origin (PDF user space, y up), advance width and font size.
#[derive(Debug, Clone)]
pub(crate) struct Glyph {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub size: f64,
    pub text: String,
    /// The PDF drew a space character just before it.
    pub space_before: bool,
}

/// The glyphs of one page and its media box.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawPage {
    pub bottom: f64,
    pub top: f64,
    pub left: f64,
    pub right: f64,
    pub glyphs: Vec<Glyph>,
}

/// A run of words on a line, separated from the next run by a wide gap (a table cell).
#[derive(Debug, Clone)]
struct Seg {
    x0: f64,
    x1: f64,
    text: String,
}

/// One line: its baseline, font size and runs in x order.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    y: f64,
    size: f64,
    segs: Vec<Seg>,
}

impl Line {
    fn text(&self) -> String {
        self.segs.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join(" | ")
    }
}

/// A gap between glyphs wider than this many ems is a word space. Typesetters that place
/// words without space characters (TeX, FOP) leave about a quarter to a third of an em,
/// shrunk further on justified lines; kerning moves glyphs by a few hundredths. Poppler
/// starts its own word breaks at a tenth.
const WORD_GAP: f64 = 0.12;
/// A gap wider than this many ems separates table cells.
const CELL_GAP: f64 = 2.0;
/// Header and footer bands: this share of the page height at the top and the bottom.
const MARGIN_BAND: f64 = 0.08;

/// Whether `c` is written without spaces between words (Han, kana, Hangul, CJK punctuation).
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFFEF | 0x20000..=0x3FFFF)
}

/// Ligature glyphs as the letters they stand for.
pub(crate) fn expand_ligature(c: char) -> Option<&'static str> {
    Some(match c {
        'ﬀ' => "ff",
        'ﬁ' => "fi",
        'ﬂ' => "fl",
        'ﬃ' => "ffi",
        'ﬄ' => "ffl",
        'ﬅ' | 'ﬆ' => "st",
        _ => return None,
    })
}

/// The page's glyphs as lines, top to bottom.
pub(crate) fn lines(page: &RawPage) -> Vec<Line> {
    let mut glyphs: Vec<&Glyph> = page.glyphs.iter().filter(|g| g.x.is_finite() && g.y.is_finite()).collect();
    glyphs.sort_by(|a, b| b.y.total_cmp(&a.y).then(a.x.total_cmp(&b.x)));
    let mut groups: Vec<Vec<&Glyph>> = Vec::new();
    let mut line_y = f64::NAN;
    for g in glyphs {
        let tol = 0.5 * g.size.max(1.0);
        match groups.last_mut() {
            Some(cur) if (line_y - g.y).abs() <= tol => cur.push(g),
            _ => {
                line_y = g.y;
                groups.push(vec![g]);
            }
        }
    }
    groups.into_iter().filter_map(make_line).collect()
}

fn make_line(mut glyphs: Vec<&Glyph>) -> Option<Line> {
    glyphs.sort_by(|a, b| a.x.total_cmp(&b.x));
    let size = median(glyphs.iter().map(|g| g.size).collect()).max(1.0);
    let y = glyphs.first()?.y;
    let mut segs: Vec<Seg> = Vec::new();
    let mut prev: Option<&Glyph> = None;
    for g in glyphs {
        if let (Some(p), Some(seg)) = (prev, segs.last_mut()) {
            let gap = g.x - (p.x + p.w);
            // Overprinted duplicates (fake bold) are drawn once.
            if gap < -0.3 * p.w.max(0.1) && g.text == p.text && (g.x - p.x).abs() < 0.2 * size {
                continue;
            }
            if gap <= CELL_GAP * size {
                let cjk = p.text.chars().last().is_some_and(is_cjk) && g.text.chars().next().is_some_and(is_cjk);
                let space = if cjk { gap > size } else { gap > WORD_GAP * size || g.space_before };
                if space && !seg.text.ends_with(' ') {
                    seg.text.push(' ');
                }
                seg.text.push_str(&g.text);
                seg.x1 = seg.x1.max(g.x + g.w);
                prev = Some(g);
                continue;
            }
        }
        segs.push(Seg { x0: g.x, x1: g.x + g.w, text: g.text.clone() });
        prev = Some(g);
    }
    for s in &mut segs {
        s.text = s.text.trim().to_string();
    }
    segs.retain(|s| !s.text.is_empty());
    (!segs.is_empty()).then_some(Line { y, size, segs })
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A line of the top or bottom band that is only a page number: `7`, `Page 7`,
/// `Page 7 of 9`, `- 7 -`, `7 / 9`.
fn is_page_number(text: &str) -> bool {
    let lower = text.to_lowercase();
    let rest: String =
        lower.replace("page", "").replace("of", "").chars().filter(|c| !"-–—/|. ".contains(*c)).collect();
    !rest.is_empty() && rest.len() <= 12 && rest.chars().all(|c| c.is_ascii_digit())
}

fn masked(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect::<String>().trim().to_string()
}

fn in_band(page: &RawPage, line: &Line) -> bool {
    let h = (page.top - page.bottom).abs().max(1.0);
    line.y > page.top - MARGIN_BAND * h || line.y < page.bottom + MARGIN_BAND * h
}

/// Drops running headers and footers and page numbers. A band line is running when its
/// text, digits masked, repeats on at least half the pages and on three of them (or on
/// both pages of two), or on three pages within five: a chapter's title, changing from one
/// chapter to the next, or on every other page of a book.
pub(crate) fn drop_running(pages: &[RawPage], lines: &mut [Vec<Line>]) {
    let n = lines.len();
    let mut seen: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, (page, ls)) in pages.iter().zip(lines.iter()).enumerate() {
        let mut keys: Vec<String> = ls.iter().filter(|l| in_band(page, l)).map(|l| masked(&l.text())).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            seen.entry(k).or_default().push(i);
        }
    }
    let running = |k: &str| {
        let on = seen.get(k).map_or(&[][..], Vec::as_slice);
        let c = on.len();
        (n >= 3 && c >= 3 && 2 * c >= n) || (n == 2 && c == 2) || on.windows(3).any(|w| w[2] - w[0] <= 4)
    };
    for (page, ls) in pages.iter().zip(lines.iter_mut()) {
        ls.retain(|l| !(in_band(page, l) && (is_page_number(&l.text()) || running(&masked(&l.text())))));
    }
}

/// The page's text: its lines in reading order (two columns one after the other) joined
/// into paragraphs.
pub(crate) fn page_text(page: &RawPage, lines: &[Line]) -> String {
    let Some(gutter) = gutter(page, lines) else {
        return paragraphs(lines);
    };
    let mut out = String::new();
    // A line across the gutter (a title, a wide caption) ends the columns above it.
    let (mut left, mut right): (Vec<Line>, Vec<Line>) = (Vec::new(), Vec::new());
    let flush = |left: &mut Vec<Line>, right: &mut Vec<Line>, out: &mut String| {
        for block in [&*left, &*right] {
            let t = paragraphs(block);
            if !t.is_empty() {
                out.push_str(&t);
                out.push_str("\n\n");
            }
        }
        left.clear();
        right.clear();
    };
    for line in lines {
        if line.segs.iter().any(|s| s.x0 < gutter && s.x1 > gutter) {
            flush(&mut left, &mut right, &mut out);
            out.push_str(&line.text());
            out.push_str("\n\n");
            continue;
        }
        let (l, r): (Vec<Seg>, Vec<Seg>) = line.segs.iter().cloned().partition(|s| s.x1 <= gutter);
        if !l.is_empty() {
            left.push(Line { segs: l, ..*line });
        }
        if !r.is_empty() {
            right.push(Line { segs: r, ..*line });
        }
    }
    flush(&mut left, &mut right, &mut out);
    out
}

/// The x of a gutter between two text columns, if the page has two: a band near the
/// middle that almost no line crosses, with lines of running text (not table cells) on
/// both sides.
fn gutter(page: &RawPage, lines: &[Line]) -> Option<f64> {
    if lines.len() < 6 {
        return None;
    }
    let (x_min, x_max) =
        lines.iter().flat_map(|l| &l.segs).fold((f64::MAX, f64::MIN), |(a, b), s| (a.min(s.x0), b.max(s.x1)));
    let width = (page.right - page.left).abs().max(x_max - x_min);
    if !(width.is_finite() && x_max > x_min) {
        return None;
    }
    let mid = (x_min + x_max) / 2.0;
    let span = 0.2 * (x_max - x_min);
    let crossing = |x: f64| lines.iter().filter(|l| l.segs.iter().any(|s| s.x0 < x && s.x1 > x)).count();
    // The clearest 1-pt position within 20% of the middle of the text.
    let steps = (2.0 * span).ceil().min(2000.0) as usize;
    let (best, cross) = (0..=steps)
        .map(|i| mid - span + i as f64)
        .map(|x| (x, crossing(x)))
        .min_by(|a, b| a.1.cmp(&b.1).then((a.0 - mid).abs().total_cmp(&(b.0 - mid).abs())))?;
    if cross * 5 > lines.len() {
        return None;
    }
    // Running text fills its column: most runs on each side span half its width.
    let full = |segs: Vec<&Seg>, w: f64| {
        let long = segs.iter().filter(|s| s.x1 - s.x0 >= 0.5 * w).count();
        segs.len() >= 3 && long * 2 >= segs.len()
    };
    let all: Vec<&Seg> = lines.iter().flat_map(|l| &l.segs).collect();
    let left: Vec<&Seg> = all.iter().copied().filter(|s| s.x1 <= best).collect();
    let right: Vec<&Seg> = all.iter().copied().filter(|s| s.x0 >= best).collect();
    (full(left, best - x_min) && full(right, x_max - best)).then_some(best)
}

/// Lines of one column, top to bottom, as paragraphs: a line break inside a paragraph
/// becomes a space (or nothing, after a hyphen that splits a word or between CJK
/// characters); a wider vertical gap, a blank line. Table rows keep their own lines.
fn paragraphs(lines: &[Line]) -> String {
    let gaps: Vec<f64> =
        lines.windows(2).map(|w| w[0].y - w[1].y).filter(|d| *d > 0.0 && *d < 3.0 * lines[0].size).collect();
    let line_h = if gaps.is_empty() { 1.2 * lines.first().map_or(10.0, |l| l.size) } else { median(gaps) };
    let mut out = String::new();
    let mut prev: Option<&Line> = None;
    for line in lines {
        let text = line.text();
        if let Some(p) = prev {
            let dy = p.y - line.y;
            let table = p.segs.len() > 1 || line.segs.len() > 1;
            if dy > 1.45 * line_h.max(0.5 * line.size) || dy < -line.size {
                out.push_str("\n\n");
            } else if table {
                out.push('\n');
            } else {
                let last = out.chars().last();
                let before = out.chars().rev().nth(1);
                let first = text.chars().next();
                if last == Some('-') && before.is_some_and(char::is_alphabetic) && first.is_some_and(char::is_lowercase)
                {
                    out.pop();
                } else if !(last.is_some_and(is_cjk) || first.is_some_and(is_cjk)) {
                    out.push(' ');
                }
            }
        }
        out.push_str(&text);
        prev = Some(line);
    }
    out
}
