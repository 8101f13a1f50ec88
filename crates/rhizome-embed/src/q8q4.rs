//! Int8 x int4 matmuls for the 4-bit e5 weights: `y = x Wᵀ` with `W` kept in Q4_0 (as stored
//! in the `E5S1` file, not re-quantised) and `x` quantised on the fly to Q8_0 (int8 per block of
//! 32, one f32 scale per block, round-half-even of `x * 127 / max|x|`, as the reference engine
//! does). The integer products run on AVX-512 VNNI (`vpdpbusd`: 64 multiply-adds per
//! instruction, against 16 for an f32 FMA), 8 tokens x 16 output rows per register tile.
//!
//! Only used where the CPU has AVX-512 F/BW/VNNI ([`Q4Matrix::available`]); elsewhere the
//! encoder runs its f32 path.

use candle_core::{bail, CpuStorage, CustomOp1, Layout, Shape};
use rayon::prelude::*;

use crate::e5_file::{f16_to_f32, Q4_BLOCK, Q4_BLOCK_BYTES};

/// Output rows per register tile (one 512-bit lane each).
const ROWS: usize = 16;
/// Tokens per register tile.
const TOKENS: usize = 4;
/// Row groups per register tile.
const GROUPS: usize = 2;
/// Tokens per parallel task.
const TASK_TOKENS: usize = 64;

/// A Q4_0 `[out, in]` matrix repacked for VNNI, still half a byte per weight: per group of
/// 16 rows, per block of 32 inputs, 4 chunks of 64 bytes whose 32-bit lane `r` holds bytes
/// `4m..4m+4` of row `r`'s block as stored (low nibbles: inputs `4m..4m+4`, high nibbles:
/// inputs `16+4m..`); the f32 block scales, per group and block, 16 rows contiguous; and per
/// group and block the 16 rows' `-128 * sum(weights)`. The kernel unpacks a pair of row
/// groups at a time to signed bytes (`nibble - 8`) into a small buffer that all its token
/// tiles then read.
///
/// Why packed: a single question is partly bound by streaming the weights (21 MB at a byte
/// per weight, 10.5 MB packed), most of all when other work between questions has evicted
/// them (hippo's PPR): `bench retrieval` embed p50, 4 runs back to back, hippo 5.91 ->
/// 5.31 ms, basic 4.47 -> 4.58 ms; big batches within noise. The resident weights halve.
///
/// Why signed weights and a per-row correction: `vpdpbusd` multiplies unsigned by signed
/// bytes. Activations are stored `q + 128` (unsigned), so `Σ (q+128)·w = Σ q·w + 128·Σ w`; the
/// second term depends on the weights only, so it is precomputed and used as the starting
/// value of the integer accumulator. The integer dot product is exactly the one of the
/// unsigned-weights form (`Σ q·nibble - 8·Σ q`), without its per-token subtraction.
pub struct Q4Matrix {
    nout: usize,
    nin: usize,
    q: Vec<u8>,
    d: Vec<f32>,
    corr: Vec<i32>,
}

impl Q4Matrix {
    /// Whether this CPU runs the int8 kernel (x86-64 with AVX-512 F, BW and VNNI).
    pub fn available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vnni")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// Repack `rows` (Q4_0 blocks of `[nout, nin]` matrices stacked along the output
    /// dimension, each with a factor applied to its scales) into one matrix. `nout` in total
    /// must be a multiple of 16 and `nin` of 32.
    pub fn from_q4(parts: &[(&[u8], usize, f32)], nin: usize) -> Result<Self, String> {
        let nout: usize = parts.iter().map(|p| p.1).sum();
        let nb = nin / Q4_BLOCK;
        if nout % ROWS != 0 || nin % Q4_BLOCK != 0 || nin == 0 {
            return Err(format!("q8q4: {nout} x {nin} is not made of 16 x 32 tiles"));
        }
        let row_bytes = nb * Q4_BLOCK_BYTES;
        let mut rows: Vec<(&[u8], f32)> = Vec::with_capacity(nout);
        for &(blocks, n, scale) in parts {
            if blocks.len() != n * row_bytes {
                return Err(format!("q8q4: {} bytes for {n} rows of {row_bytes}", blocks.len()));
            }
            rows.extend(blocks.chunks_exact(row_bytes).map(|r| (r, scale)));
        }
        let mut q = vec![0u8; nout * nin / 2];
        let mut d = vec![0f32; nout * nb];
        let mut corr = vec![0i32; nout * nb];
        for (row, (blocks, scale)) in rows.iter().enumerate() {
            let (g, r) = (row / ROWS, row % ROWS);
            for (b, blk) in blocks.chunks_exact(Q4_BLOCK_BYTES).enumerate() {
                let at = (g * nb + b) * ROWS + r;
                d[at] = f16_to_f32(u16::from_le_bytes([blk[0], blk[1]])) * scale;
                for (j, &byte) in blk[2..].iter().enumerate() {
                    // Chunk m, lane r: bytes 4m..4m+4 of the row's block as stored (low
                    // nibbles: inputs 4m.., high nibbles: inputs 16+4m..).
                    q[((g * nb + b) * 4 + j / 4) * 64 + r * 4 + j % 4] = byte;
                    corr[at] -= 128 * ((byte & 0x0f) as i32 - 8 + (byte >> 4) as i32 - 8);
                }
            }
        }
        Ok(Q4Matrix { nout, nin, q, d, corr })
    }

    /// Output width.
    pub fn nout(&self) -> usize {
        self.nout
    }

    /// Input width.
    pub fn nin(&self) -> usize {
        self.nin
    }

    /// `x Wᵀ` for `x` row-major `[tokens, nin]`; returns row-major `[tokens, nout]`. Must only
    /// be called when [`available`](Self::available) (it checks and panics otherwise).
    pub fn matmul(&self, x: &[f32]) -> Vec<f32> {
        let mut y = vec![0f32; x.len() / self.nin.max(1) * self.nout];
        self.matmul_into(x, None, &mut y, &mut Q8::default(), true);
        y
    }

    /// `y = x Wᵀ (+ bias)` for `x` row-major `[tokens, nin]` into `y` (`[tokens, nout]`),
    /// quantising `x` into the reusable `q8`. With `par`, tokens are split into rayon tasks of
    /// 64; without, all runs on the calling thread. The result does not depend on `par`:
    /// every output is the same sum over the same blocks in the same order.
    ///
    /// Must only be called when [`available`](Self::available), with whole rows (it checks
    /// and panics otherwise).
    pub fn matmul_into(&self, x: &[f32], bias: Option<&[f32]>, y: &mut [f32], q8: &mut Q8, par: bool) {
        assert!(Self::available(), "q8q4 matmul needs AVX-512 VNNI");
        assert_eq!(x.len() % self.nin, 0, "q8q4: input is not rows of {}", self.nin);
        let tokens = x.len() / self.nin;
        assert_eq!(y.len(), tokens * self.nout, "q8q4: output is not {tokens} rows of {}", self.nout);
        assert!(bias.is_none_or(|b| b.len() == self.nout), "q8q4: bias is not {} wide", self.nout);
        let nb = self.nin / Q4_BLOCK;
        q8.resize(tokens * nb);
        let groups = self.nout / ROWS;
        #[cfg(target_arch = "x86_64")]
        {
            if !par {
                // SAFETY: `available()` checked the CPU features the kernels are compiled for;
                // `y` holds `tokens` rows of `nout`.
                unsafe {
                    quantize(x, &mut q8.q, &mut q8.d);
                    kernel(self, q8.view(), bias, y.as_mut_ptr(), 0..groups);
                }
            } else {
                q8.q.par_chunks_mut(TASK_TOKENS * self.nin)
                    .zip(q8.d.par_chunks_mut(TASK_TOKENS * nb))
                    .zip(x.par_chunks(TASK_TOKENS * self.nin))
                    .zip(y.par_chunks_mut(TASK_TOKENS * self.nout))
                    .for_each(|(((q, d), x), y)| {
                        // SAFETY: as above; each task has its own rows of `y` and `q8`.
                        unsafe {
                            quantize(x, q, d);
                            kernel(self, Q8View { q, d }, bias, y.as_mut_ptr(), 0..groups);
                        }
                    });
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (x, y, bias, par, groups);
    }
}

/// As a candle op: `(tokens, nin)` contiguous f32 -> `(tokens, nout)`.
impl CustomOp1 for Q4Matrix {
    fn name(&self) -> &'static str {
        "q8q4-matmul"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = match (s, l.contiguous_offsets()) {
            (CpuStorage::F32(v), Some((a, b))) => &v[a..b],
            _ => bail!("q8q4-matmul: expected a contiguous f32 tensor"),
        };
        if x.len() % self.nin != 0 || !Self::available() {
            bail!("q8q4-matmul: {} values are not rows of {} (or no AVX-512 VNNI)", x.len(), self.nin);
        }
        let tokens = x.len() / self.nin;
        Ok((CpuStorage::F32(self.matmul(x)), Shape::from((tokens, self.nout))))
    }
}

/// Q8_0 activations of a run of tokens, stored `q + 128` (unsigned, see [`Q4Matrix`]), with
/// one f32 scale per block of 32. A reusable buffer: [`Q4Matrix::matmul_into`] resizes it.
#[derive(Default)]
pub struct Q8 {
    q: Vec<u8>,
    d: Vec<f32>,
}

impl Q8 {
    fn resize(&mut self, blocks: usize) {
        self.q.resize(blocks * Q4_BLOCK, 0);
        self.d.resize(blocks, 0.0);
    }

    fn view(&self) -> Q8View<'_> {
        Q8View { q: &self.q, d: &self.d }
    }
}

/// Borrowed quantised activations (whole tokens).
#[derive(Clone, Copy)]
struct Q8View<'a> {
    q: &'a [u8],
    d: &'a [f32],
}

/// Quantise `x` (whole blocks of 32) to Q8_0 into `q` (stored `q + 128`) and `d`, 32
/// values per step in AVX-512 registers.
///
/// Bit-identical to the scalar definition (`amax = max|x|`, `d = amax / 127`,
/// `q = clamp(round_half_even(x * (1 / d)), -128, 127)`): the same IEEE operations, done 16
/// lanes at a time. The scalar loop did not vectorise (`round_ties_even` + `clamp` + cast)
/// and took ~30% of the encoder's time, as much as the matmul kernel itself.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[allow(clippy::needless_range_loop)] // block i indexes x, q and d alike
unsafe fn quantize(x: &[f32], q: &mut [u8], d: &mut [f32]) {
    use std::arch::x86_64::*;
    const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    let blocks = x.len() / Q4_BLOCK;
    assert!(q.len() >= blocks * Q4_BLOCK && d.len() >= blocks);
    let (lo, hi, off) = (_mm512_set1_epi32(-128), _mm512_set1_epi32(127), _mm512_set1_epi32(128));
    for i in 0..blocks {
        let p = x.as_ptr().add(i * Q4_BLOCK);
        let (v0, v1) = (_mm512_loadu_ps(p), _mm512_loadu_ps(p.add(16)));
        let amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        let di = amax / 127.0;
        let id = _mm512_set1_ps(if di > 0.0 { 1.0 / di } else { 0.0 });
        let q0 = _mm512_cvt_roundps_epi32::<NEAREST>(_mm512_mul_ps(v0, id));
        let q1 = _mm512_cvt_roundps_epi32::<NEAREST>(_mm512_mul_ps(v1, id));
        let q0 = _mm512_min_epi32(_mm512_max_epi32(q0, lo), hi);
        let q1 = _mm512_min_epi32(_mm512_max_epi32(q1, lo), hi);
        let dst = q.as_mut_ptr().add(i * Q4_BLOCK) as *mut __m128i;
        _mm_storeu_si128(dst, _mm512_cvtepi32_epi8(_mm512_add_epi32(q0, off)));
        _mm_storeu_si128(dst.add(1), _mm512_cvtepi32_epi8(_mm512_add_epi32(q1, off)));
        d[i] = di;
    }
}

/// `y = x Wᵀ (+ bias)` for the quantised tokens `a`, output row groups `groups` (16 outputs
/// each); `y` is row-major `[tokens, nout]`. Tiles of 8 tokens, then one of the remainder.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn kernel(w: &Q4Matrix, a: Q8View, bias: Option<&[f32]>, y: *mut f32, groups: std::ops::Range<usize>) {
    let tokens = a.q.len() / w.nin;
    let nb = w.nin / Q4_BLOCK;
    let mut unpacked = vec![0i8; GROUPS * nb * 8 * 64];
    let mut g = groups.start;
    while g < groups.end {
        let n = GROUPS.min(groups.end - g);
        unpack(w, g, n, &mut unpacked);
        if n == GROUPS {
            tiles::<GROUPS>(w, &unpacked, a, bias, y, g, tokens);
        } else {
            tiles::<1>(w, &unpacked, a, bias, y, g, tokens);
        }
        g += n;
    }
}

/// Weights of row groups `g..g + n` as signed bytes (`nibble - 8`), per group, block and
/// chunk `k` of 4 inputs: the layout the tiles read. Done once per group for all tokens, so
/// its cost (4 vector ops per 64 stored bytes) is shared by every tile, while the matrix in
/// memory stays at half a byte per weight (a call streams half the bytes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn unpack(w: &Q4Matrix, g: usize, n: usize, out: &mut [i8]) {
    use std::arch::x86_64::*;
    let nb = w.nin / Q4_BLOCK;
    let (mask, eight) = (_mm512_set1_epi8(0x0f), _mm512_set1_epi8(8));
    for gb in 0..n * nb {
        let src = w.q.as_ptr().add((g * nb + gb) * 4 * 64);
        let dst = out.as_mut_ptr().add(gb * 8 * 64);
        for m in 0..4 {
            let v = _mm512_loadu_si512(src.add(m * 64) as *const _);
            let lo = _mm512_sub_epi8(_mm512_and_si512(v, mask), eight);
            let hi = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16::<4>(v), mask), eight);
            _mm512_storeu_si512(dst.add(m * 64) as *mut _, lo);
            _mm512_storeu_si512(dst.add((m + 4) * 64) as *mut _, hi);
        }
    }
}

/// All tokens for row groups `g..g + G`: tiles of [`TOKENS`], then one of the remainder.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn tiles<const G: usize>(w: &Q4Matrix, wq: &[i8], a: Q8View, bias: Option<&[f32]>, y: *mut f32, g: usize, tokens: usize) {
    let mut t = 0;
    while t + TOKENS <= tokens {
        tile::<G, TOKENS>(w, wq, a, bias, y, g, t);
        t += TOKENS;
    }
    match tokens - t {
        0 => {}
        1 => tile::<G, 1>(w, wq, a, bias, y, g, t),
        2 => tile::<G, 2>(w, wq, a, bias, y, g, t),
        _ => tile::<G, 3>(w, wq, a, bias, y, g, t), // TOKENS = 4: at most 3 left
    }
}

/// One register tile: tokens `t..t + N` x output rows `16 g..16 (g + G)`. Each activation
/// broadcast feeds `G` multiply-adds and each weight load `N`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
#[allow(clippy::needless_range_loop)] // (group, token) index several arrays at once
unsafe fn tile<const G: usize, const N: usize>(
    w: &Q4Matrix,
    wq: &[i8],
    a: Q8View,
    bias: Option<&[f32]>,
    y: *mut f32,
    g: usize,
    t: usize,
) {
    use std::arch::x86_64::*;
    let nb = w.nin / Q4_BLOCK;
    let mut acc = [[_mm512_setzero_ps(); N]; G];
    for b in 0..nb {
        let mut isum: [[__m512i; N]; G] = std::array::from_fn(|r| {
            [_mm512_loadu_si512(w.corr.as_ptr().add(((g + r) * nb + b) * ROWS) as *const _); N]
        });
        for k in 0..8 {
            let wv: [__m512i; G] =
                std::array::from_fn(|r| _mm512_loadu_si512(wq.as_ptr().add(((r * nb + b) * 8 + k) * 64) as *const _));
            for j in 0..N {
                let p = a.q.as_ptr().add((t + j) * w.nin + b * Q4_BLOCK + k * 4) as *const i32;
                let av = _mm512_set1_epi32(p.read_unaligned());
                for r in 0..G {
                    isum[r][j] = _mm512_dpbusd_epi32(isum[r][j], av, wv[r]);
                }
            }
        }
        for r in 0..G {
            let dw = _mm512_loadu_ps(w.d.as_ptr().add(((g + r) * nb + b) * ROWS));
            for j in 0..N {
                let scale = _mm512_mul_ps(dw, _mm512_set1_ps(*a.d.get_unchecked((t + j) * nb + b)));
                acc[r][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r][j]), scale, acc[r][j]);
            }
        }
    }
    for r in 0..G {
        let col = (g + r) * ROWS;
        let bv = match bias {
            Some(b) => _mm512_loadu_ps(b.as_ptr().add(col)),
            None => _mm512_setzero_ps(),
        };
        for j in 0..N {
            let v = if bias.is_some() { _mm512_add_ps(acc[r][j], bv) } else { acc[r][j] };
            _mm512_storeu_ps(y.add((t + j) * w.nout + col), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::e5_file::dequantize_q4;

    #[test]
    fn matches_f32_reference() {
        if !Q4Matrix::available() {
            eprintln!("no AVX-512 VNNI: skipped");
            return;
        }
        let (nout, nin, tokens) = (48, 96, 21);
        let mut s = 7u32;
        let mut next = || {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s >> 8
        };
        let mut blocks = Vec::new();
        for _ in 0..nout * nin / Q4_BLOCK {
            blocks.extend([0x66, 0x2e]); // d = 0.1
            blocks.extend((0..16).map(|_| next() as u8));
        }
        let x: Vec<f32> = (0..tokens * nin).map(|_| (next() % 2001) as f32 / 1000.0 - 1.0).collect();
        let m = Q4Matrix::from_q4(&[(&blocks[..blocks.len() / 2], nout / 2, 2.0), (&blocks[blocks.len() / 2..], nout / 2, 1.0)], nin).unwrap();
        let y = m.matmul(&x);
        let mut w = vec![0f32; nout * nin];
        dequantize_q4(&blocks, &mut w);
        let mut want = vec![0f32; tokens * nout];
        for t in 0..tokens {
            for o in 0..nout {
                let scale = if o < nout / 2 { 2.0 } else { 1.0 };
                want[t * nout + o] = (0..nin).map(|i| x[t * nin + i] * w[o * nin + i] * scale).sum();
            }
        }
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x * y) as f64).sum::<f64>();
        let cos = dot(&y, &want) / (dot(&y, &y) * dot(&want, &want)).sqrt();
        let max = want.iter().fold(0f32, |m, v| m.max(v.abs()));
        let err = y.iter().zip(&want).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(cos > 0.9995 && err < 0.02 * max, "cosine {cos}, max error {err} of {max}");
    }
}

#[cfg(test)]
mod timing {
    use super::*;

    /// Not a check: prints the best-of-20 time of the matmuls of 12 e5-shaped layers at a
    /// few token counts (`cargo test --release -p rhizome-embed q8q4_timing -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn q8q4_timing() {
        if !Q4Matrix::available() {
            return;
        }
        let blocks = |nout: usize, nin: usize| -> Vec<u8> {
            (0..nout * nin / Q4_BLOCK).flat_map(|i| [0x66, 0x2e].into_iter().chain((0..16).map(move |j| (i * 31 + j * 7) as u8))).collect()
        };
        // 12 layers' worth of distinct matrices, as in the encoder: ~21 MB of weights, more
        // than L2 holds, so a pass streams them as a real forward pass does.
        let shapes = [(1152, 384), (384, 384), (1536, 384), (384, 1536)];
        let layers: Vec<Vec<Q4Matrix>> = (0..12)
            .map(|_| shapes.iter().map(|&(o, i)| Q4Matrix::from_q4(&[(&blocks(o, i), o, 1.0)], i).unwrap()).collect())
            .collect();
        for tokens in [26, 64, 512] {
            let xs: Vec<Vec<f32>> = shapes
                .iter()
                .map(|&(_, nin)| (0..tokens * nin).map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0).collect())
                .collect();
            let mut ys: Vec<Vec<f32>> = shapes.iter().map(|&(nout, _)| vec![0f32; tokens * nout]).collect();
            let mut q8 = Q8::default();
            let best = (0..20)
                .map(|_| {
                    let t = std::time::Instant::now();
                    for layer in &layers {
                        for ((m, x), y) in layer.iter().zip(&xs).zip(&mut ys) {
                            m.matmul_into(x, None, y, &mut q8, false);
                        }
                    }
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min);
            let macs = 12.0 * tokens as f64 * (1152.0 + 384.0 + 1536.0 + 1536.0) * 384.0;
            println!("{tokens} tokens: 12 layers' matmuls {:.2} ms, {:.1} GMAC/s", best * 1e3, macs / best / 1e9);
        }
    }
}
