//! Token-based chunking with overlap ([`TokenChunker`]).

use rhizome_core::text::token_spans;
use rhizome_core::{ids, Chunk, Chunker, Document};

/// Splits a document into windows of at most `size` chunking tokens
/// ([`rhizome_core::text::token_spans`]: words, numbers, punctuation, single CJK
/// characters), consecutive windows sharing `overlap` tokens.
///
/// A window prefers to end at a sentence end (`.` `!` `?` `。` `！` `？`, a closing quote
/// or bracket right after one, or a line break) found in its last quarter. A chunk's text
/// is the document text from its first token's start to its last token's end, so spacing
/// is kept. A document of at most `size` tokens is one chunk (its trimmed text); an empty
/// one gives none. `overlap` is clamped below `size`, and `size` to at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenChunker {
    /// Most tokens per chunk.
    pub size: usize,
    /// Tokens shared by consecutive chunks.
    pub overlap: usize,
}

impl TokenChunker {
    /// A chunker of windows of `size` tokens overlapping by `overlap`.
    pub fn new(size: usize, overlap: usize) -> Self {
        TokenChunker { size, overlap }
    }

    /// Token windows `(first, end)` (end exclusive) over `text`'s token spans.
    pub fn windows(&self, text: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let n = spans.len();
        let size = self.size.max(1);
        let overlap = self.overlap.min(size - 1);
        let mut out = Vec::new();
        if n == 0 {
            return out;
        }
        let min_end = size - size / 4; // a sentence end at or past this offset is preferred
        let mut start = 0;
        loop {
            let full = (start + size).min(n);
            if full == n {
                out.push((start, n));
                return out;
            }
            let mut end = full;
            for e in (start + min_end.max(1)..full).rev() {
                // The window [start, e) ends after token e-1; the next starts at e-overlap.
                if e > start + overlap && sentence_end(text, spans, e - 1) {
                    end = e;
                    break;
                }
            }
            out.push((start, end));
            start = end - overlap;
        }
    }
}

impl Default for TokenChunker {
    /// The defaults of [`rhizome_core::config::ChunkConfig`]: 256 tokens, 32 overlap.
    fn default() -> Self {
        TokenChunker { size: 256, overlap: 32 }
    }
}

/// True if token `i` ends a sentence: a terminator, a closer right after one, or a token
/// followed by a line break.
fn sentence_end(text: &str, spans: &[(usize, usize)], i: usize) -> bool {
    let tok = &text[spans[i].0..spans[i].1];
    if matches!(tok, "." | "!" | "?" | "。" | "！" | "？" | "…") {
        return true;
    }
    if matches!(tok, "\"" | "'" | "”" | "’" | ")" | "」" | "』" | "»")
        && i > 0
        && matches!(&text[spans[i - 1].0..spans[i - 1].1], "." | "!" | "?" | "。" | "！" | "？")
    {
        return true;
    }
    spans.get(i + 1).is_some_and(|next| text[spans[i].1..next.0].contains('\n'))
}

impl Chunker for TokenChunker {
    fn chunk(&self, doc: &Document) -> Vec<Chunk> {
        let spans = token_spans(&doc.text);
        if spans.is_empty() {
            return Vec::new();
        }
        // Chunk boundaries as character offsets (for provenance): one pass over the text.
        let mut bounds: Vec<usize> = spans.iter().flat_map(|&(a, b)| [a, b]).collect();
        let trimmed = doc.text.trim();
        let trim_start = trimmed.as_ptr() as usize - doc.text.as_ptr() as usize;
        bounds.extend([trim_start, trim_start + trimmed.len()]);
        let chars = CharOffsets::new(&doc.text, bounds);
        let make = |ordinal: u32, a: usize, b: usize, tokens: usize| {
            let text = &doc.text[a..b];
            let (start, end) = (chars.at(a), chars.at(b));
            Chunk {
                id: ids::chunk_id(&doc.id, ordinal, text),
                doc_id: doc.id.clone(),
                ordinal,
                text: text.to_string(),
                tokens: tokens as u32,
                start,
                end,
                pages: doc.pages_of(start, end),
            }
        };
        // A paged document is chunked page by page: a chunk never spans a page break, so
        // that a citation names the page its evidence is on.
        let segments = match &doc.pages {
            Some(p) if p.pages.len() > 1 => page_segments(&doc.text, &spans, p),
            _ => vec![(0, spans.len())],
        };
        if segments.len() == 1 && spans.len() <= self.size.max(1) {
            return vec![make(0, trim_start, trim_start + trimmed.len(), spans.len())];
        }
        let mut out = Vec::new();
        for (from, to) in segments {
            let seg = &spans[from..to];
            for (a, b) in self.windows(&doc.text, seg) {
                out.push(make(out.len() as u32, seg[a].0, seg[b - 1].1, b - a));
            }
        }
        out
    }
}

/// The token ranges `[from, to)` of `spans` that fall on each page of `pages` (a token
/// belongs to the page its start is on; tokens between pages to the next page), empty
/// ones left out.
fn page_segments(text: &str, spans: &[(usize, usize)], pages: &rhizome_core::Pagination) -> Vec<(usize, usize)> {
    // Page starts as byte offsets: one pass over the text's characters.
    let mut starts: Vec<usize> = Vec::with_capacity(pages.pages.len());
    let mut want = pages.pages.iter().map(|p| p.start as usize).skip(1).peekable();
    for (chars, (byte, _)) in text.char_indices().enumerate() {
        while want.peek().is_some_and(|&c| c <= chars) {
            want.next();
            starts.push(byte);
        }
    }
    starts.extend(want.map(|_| text.len()));
    let mut out = Vec::new();
    let mut from = 0;
    for boundary in starts {
        let to = from + spans[from..].partition_point(|s| s.0 < boundary);
        if to > from {
            out.push((from, to));
        }
        from = to;
    }
    if from < spans.len() {
        out.push((from, spans.len()));
    }
    out
}

/// Character offsets of chosen byte offsets of a text, found in one pass.
struct CharOffsets {
    /// (byte offset, char offset), sorted by byte offset.
    table: Vec<(usize, u32)>,
}

impl CharOffsets {
    fn new(text: &str, mut bytes: Vec<usize>) -> Self {
        bytes.sort_unstable();
        bytes.dedup();
        let mut table = Vec::with_capacity(bytes.len());
        let (mut at, mut chars) = (0usize, 0u32);
        for b in bytes {
            chars += text[at..b].chars().count() as u32;
            at = b;
            table.push((b, chars));
        }
        CharOffsets { table }
    }

    /// The character offset of byte offset `b` (one given to [`CharOffsets::new`]).
    fn at(&self, b: usize) -> u32 {
        match self.table.binary_search_by_key(&b, |&(x, _)| x) {
            Ok(i) => self.table[i].1,
            Err(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_overlap_and_prefer_sentence_ends() {
        let text = "a b c d e f. g h i j k l m n o p";
        let spans = token_spans(text);
        assert_eq!(spans.len(), 17);
        let w = TokenChunker::new(8, 2).windows(text, &spans);
        // The first window would hold 8 tokens; `.` (token 6) is in its last quarter.
        assert_eq!(w[0], (0, 7));
        for pair in w.windows(2) {
            assert_eq!(pair[1].0, pair[0].1 - 2);
        }
        assert_eq!(w.last().unwrap().1, 17);
        // Degenerate settings terminate.
        assert!(!TokenChunker::new(3, 10).windows(text, &spans).is_empty());
        assert_eq!(TokenChunker::new(0, 0).windows(text, &spans).len(), 17);
        // High overlap with sentence ends everywhere: still progresses.
        let dense = "a. b. c. d. e. f. g. h. i. j. k. l. m.";
        let spans = token_spans(dense);
        for (size, overlap) in [(8, 7), (8, 6), (5, 4), (16, 15)] {
            let w = TokenChunker::new(size, overlap).windows(dense, &spans);
            assert_eq!(w.last().unwrap().1, spans.len());
            assert!(w.windows(2).all(|p| p[1].0 > p[0].0 && p[1].0 == p[0].1 - overlap));
        }
    }

    #[test]
    fn chunks_keep_their_character_range_and_pages() {
        use rhizome_core::{PageRange, PageSpan, Pagination};
        let pages = ["Đại học Quốc gia Hà Nội được thành lập.", "微软宣布向OpenAI投资。", "The third page ends here."];
        let mut text = String::new();
        let mut spans = Vec::new();
        for (i, p) in pages.iter().enumerate() {
            if i > 0 {
                text.push_str("\n\n");
            }
            let start = text.chars().count() as u32;
            text.push_str(p);
            spans.push(PageSpan { number: i as u32 + 1, label: None, start, end: text.chars().count() as u32 });
        }
        let mut doc = Document::new("paged.pdf", "paged", text.clone());
        doc.pages = Some(Pagination { unit: "page".into(), pages: spans });
        let chars: Vec<char> = text.chars().collect();
        for (size, overlap) in [(4, 1), (8, 2), (1000, 0)] {
            let chunks = TokenChunker::new(size, overlap).chunk(&doc);
            assert!(!chunks.is_empty());
            for c in &chunks {
                let slice: String = chars[c.start as usize..c.end as usize].iter().collect();
                assert_eq!(slice, c.text, "size {size}");
                let p = c.pages.expect("a chunk of a paged document has pages");
                assert!(p.first == p.last && p.last <= 3, "a chunk stays on its page: {c:?}");
            }
            assert_eq!(chunks[0].pages.map(|p| p.first), Some(1));
            assert_eq!(chunks.last().unwrap().pages.map(|p| p.last), Some(3));
        }
        let small = TokenChunker::new(4, 0).chunk(&doc);
        for c in &small {
            let p = c.pages.unwrap();
            if c.text.contains("微软") {
                assert!(p.first <= 2 && p.last >= 2, "{c:?}");
            }
            if !c.text.contains("\n\n") {
                assert_eq!(p.first, p.last, "a chunk inside one page: {c:?}");
            }
        }
        assert!(small.iter().any(|c| c.pages == Some(PageRange { first: 2, last: 2 })));
        let whole = TokenChunker::new(1000, 0).chunk(&doc);
        assert_eq!(whole.len(), 3, "one chunk per page, however large the window");
        assert_eq!(whole.iter().map(|c| c.ordinal).collect::<Vec<_>>(), [0, 1, 2]);
        // No pages: ranges still kept, pages None.
        let plain = Document::new("plain.txt", "plain", "  Some text. More text.  ");
        let c = &TokenChunker::default().chunk(&plain)[0];
        assert_eq!((c.start, c.end, c.pages), (2, 23, None));
    }
}
