//! Int8 matmuls for the e5 weights: `y = x Wᵀ` with `W` as int8 with one f32 scale per row
//! and [`SEG`] inputs (re-expressed once at load from the file's 4-bit Q4_0 blocks, see
//! [`I8Matrix::from_q4`]) and `x` quantised on the fly to int8 with one f32 scale per [`AB`]
//! inputs (round-half-even of `x * 127 / max|x|`). The integer products run on AVX-512 VNNI
//! (`vpdpbusd`: 64 multiply-adds per instruction, against 16 for an f32 FMA), 4 tokens x 32
//! output rows per register tile.
//!
//! Why these block sizes: per block of activations, each (token, 16 outputs) sum is converted
//! to float and multiplied into its total, on the same pipes as `vpdpbusd`. With 32-input
//! weight and activation blocks (the file's own, and the reference engine's Q8_0) that is a
//! conversion and two float operations per 8 `vpdpbusd`; with 64-input activation blocks and
//! 128-input weight segments it is one multiply-add per 16 `vpdpbusd` plus one per segment
//! (the ignored test `q8i8_timing` times the kernel). The price is precision: `tests/e5.rs` holds the
//! vectors' cosine to the reference engine's above its floor; the f32 path, which quantises
//! nothing but the file's weights, stays closer.
//!
//! Only used where the CPU has AVX-512 F/BW/VNNI ([`I8Matrix::available`]); elsewhere the
//! encoder runs its f32 path.

use candle_core::{bail, CpuStorage, CustomOp1, Layout, Shape};
use rayon::prelude::*;

use crate::e5_file::{dequantize_q4, Q4_BLOCK, Q4_BLOCK_BYTES};

/// Output rows per register tile (one 512-bit lane each).
const ROWS: usize = 16;
/// Tokens per register tile.
const TOKENS: usize = 4;
/// Row groups per register tile.
const GROUPS: usize = 2;
/// Inputs per activation scale (a multiple of 32).
const AB: usize = 64;
/// Inputs per weight scale (a multiple of `AB`): every matrix's input width must be one.
const SEG: usize = 128;
/// Tokens per parallel task.
const TASK_TOKENS: usize = 64;

/// An `[out, in]` matrix of int8 weights with one f32 scale per output row and [`SEG`]
/// inputs, laid out for VNNI: per group of 16 rows, per block of 32 inputs, 8 chunks of 64
/// bytes whose 32-bit lane `r` holds row `r`'s 4 weights of that chunk (inputs `4k..4k+4` of
/// the block); per group and activation block ([`AB`] inputs) the 16 rows'
/// `-128 * sum(weights)`, the integer sums' starting value; per group and segment the 16
/// rows' scales.
///
/// Re-expressing the 4-bit weights: each segment of a row is rounded to the nearest multiple
/// of `max|segment| / 127`, an added error of at most half a step, a sixteenth of the Q4_0
/// step of the segment's widest block. A byte per weight (~21 MB for the 12 layers, against
/// ~10.5 MB packed as nibbles): no unpacking per call.
///
/// Why signed weights and a per-row correction: `vpdpbusd` multiplies unsigned by signed
/// bytes. Activations are stored `q + 128` (unsigned), so `Σ (q+128)·w = Σ q·w + 128·Σ w`; the
/// second term depends on the weights only, so it is precomputed and used as the starting
/// value of the integer accumulator.
pub struct I8Matrix {
    nout: usize,
    nin: usize,
    q: Vec<i8>,
    d: Vec<f32>,
    corr: Vec<i32>,
}

impl I8Matrix {
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

    /// Re-express `parts` (Q4_0 blocks of `[nout, nin]` matrices stacked along the output
    /// dimension, each with a factor applied to its weights) as one int8 matrix with a scale
    /// per row and [`SEG`] inputs: each row is dequantised, then each segment rounded to the
    /// nearest multiple of `max|segment| / 127`. `nout` in total must be a multiple of 16 and
    /// `nin` of [`SEG`].
    pub fn from_q4(parts: &[(&[u8], usize, f32)], nin: usize) -> Result<Self, String> {
        let nout: usize = parts.iter().map(|p| p.1).sum();
        let nb = nin / Q4_BLOCK;
        if !nout.is_multiple_of(ROWS) || !nin.is_multiple_of(SEG) || nin == 0 {
            return Err(format!("q8i8: {nout} x {nin} is not made of 16 x {SEG} tiles"));
        }
        let row_bytes = nb * Q4_BLOCK_BYTES;
        let mut rows: Vec<(&[u8], f32)> = Vec::with_capacity(nout);
        for &(blocks, n, scale) in parts {
            if blocks.len() != n * row_bytes {
                return Err(format!("q8i8: {} bytes for {n} rows of {row_bytes}", blocks.len()));
            }
            rows.extend(blocks.chunks_exact(row_bytes).map(|r| (r, scale)));
        }
        let segs = nin / SEG;
        let mut q = vec![0i8; nout * nin];
        let mut d = vec![0f32; nout * segs];
        let mut corr = vec![0i32; nout * (nin / AB)];
        let mut w = vec![0f32; nin];
        for (row, (blocks, scale)) in rows.iter().enumerate() {
            let (g, r) = (row / ROWS, row % ROWS);
            dequantize_q4(blocks, &mut w);
            for (sg, seg) in w.chunks_exact(SEG).enumerate() {
                let amax = seg.iter().fold(0f32, |m, v| m.max(v.abs()));
                let step = amax / 127.0;
                let inv = if step > 0.0 { 1.0 / step } else { 0.0 };
                d[(g * segs + sg) * ROWS + r] = step * scale;
                for (o, &v) in seg.iter().enumerate() {
                    let i = sg * SEG + o;
                    let (b, k, m) = (i / Q4_BLOCK, i % Q4_BLOCK / 4, i % 4);
                    let v = (v * inv).round().clamp(-127.0, 127.0) as i8;
                    q[((g * nb + b) * 8 + k) * 64 + r * 4 + m] = v;
                    corr[(g * (nin / AB) + i / AB) * ROWS + r] -= 128 * v as i32;
                }
            }
        }
        Ok(I8Matrix { nout, nin, q, d, corr })
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
        assert!(Self::available(), "q8i8 matmul needs AVX-512 VNNI");
        assert_eq!(x.len() % self.nin, 0, "q8i8: input is not rows of {}", self.nin);
        let tokens = x.len() / self.nin;
        assert_eq!(y.len(), tokens * self.nout, "q8i8: output is not {tokens} rows of {}", self.nout);
        assert!(bias.is_none_or(|b| b.len() == self.nout), "q8i8: bias is not {} wide", self.nout);
        let nb = self.nin / AB;
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
impl CustomOp1 for I8Matrix {
    fn name(&self) -> &'static str {
        "q8i8-matmul"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = match (s, l.contiguous_offsets()) {
            (CpuStorage::F32(v), Some((a, b))) => &v[a..b],
            _ => bail!("q8i8-matmul: expected a contiguous f32 tensor"),
        };
        if x.len() % self.nin != 0 || !Self::available() {
            bail!("q8i8-matmul: {} values are not rows of {} (or no AVX-512 VNNI)", x.len(), self.nin);
        }
        let tokens = x.len() / self.nin;
        Ok((CpuStorage::F32(self.matmul(x)), Shape::from((tokens, self.nout))))
    }
}

/// Int8 activations of a run of tokens, stored `q + 128` (unsigned, see [`I8Matrix`]), with
/// one f32 scale per block of [`AB`]. A reusable buffer: [`I8Matrix::matmul_into`] resizes it.
#[derive(Default)]
pub struct Q8 {
    q: Vec<u8>,
    d: Vec<f32>,
}

impl Q8 {
    fn resize(&mut self, blocks: usize) {
        self.q.resize(blocks * AB, 0);
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

/// Quantise `x` (whole blocks of [`AB`]) to int8 into `q` (stored `q + 128`) and `d`, a
/// block per step in AVX-512 registers.
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
    const V: usize = AB / 16;
    let blocks = x.len() / AB;
    assert!(q.len() >= blocks * AB && d.len() >= blocks);
    let (lo, hi, off) = (_mm512_set1_epi32(-128), _mm512_set1_epi32(127), _mm512_set1_epi32(128));
    for i in 0..blocks {
        let p = x.as_ptr().add(i * AB);
        let v: [__m512; V] = std::array::from_fn(|c| _mm512_loadu_ps(p.add(16 * c)));
        let mut m = _mm512_abs_ps(v[0]);
        for c in 1..V {
            m = _mm512_max_ps(m, _mm512_abs_ps(v[c]));
        }
        let amax = _mm512_reduce_max_ps(m);
        let di = amax / 127.0;
        let id = _mm512_set1_ps(if di > 0.0 { 1.0 / di } else { 0.0 });
        let dst = q.as_mut_ptr().add(i * AB) as *mut __m128i;
        for c in 0..V {
            let qc = _mm512_cvt_roundps_epi32::<NEAREST>(_mm512_mul_ps(v[c], id));
            let qc = _mm512_min_epi32(_mm512_max_epi32(qc, lo), hi);
            _mm_storeu_si128(dst.add(c), _mm512_cvtepi32_epi8(_mm512_add_epi32(qc, off)));
        }
        d[i] = di;
    }
}

/// `y = x Wᵀ (+ bias)` for the quantised tokens `a`, output row groups `groups` (16 outputs
/// each); `y` is row-major `[tokens, nout]`. Pairs of row groups, then a single one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn kernel(w: &I8Matrix, a: Q8View, bias: Option<&[f32]>, y: *mut f32, groups: std::ops::Range<usize>) {
    let tokens = a.q.len() / w.nin;
    let mut g = groups.start;
    while g < groups.end {
        let n = GROUPS.min(groups.end - g);
        if n == GROUPS {
            tiles::<GROUPS>(w, a, bias, y, g, tokens);
        } else {
            tiles::<1>(w, a, bias, y, g, tokens);
        }
        g += n;
    }
}

/// All tokens for row groups `g..g + G`: tiles of [`TOKENS`], then one of the remainder.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn tiles<const G: usize>(w: &I8Matrix, a: Q8View, bias: Option<&[f32]>, y: *mut f32, g: usize, tokens: usize) {
    let mut t = 0;
    while t + TOKENS <= tokens {
        tile::<G, TOKENS>(w, a, bias, y, g, t);
        t += TOKENS;
    }
    match tokens - t {
        0 => {}
        1 => tile::<G, 1>(w, a, bias, y, g, t),
        2 => tile::<G, 2>(w, a, bias, y, g, t),
        _ => tile::<G, 3>(w, a, bias, y, g, t), // TOKENS = 4: at most 3 left
    }
}

/// One register tile: tokens `t..t + N` x output rows `16 g..16 (g + G)`. Each activation
/// broadcast feeds `G` multiply-adds and each weight load `N`; per activation block, one
/// conversion and one float multiply-add (by the token's block scale) per 16 outputs and
/// token; per weight segment one more (by the rows' scales).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
#[allow(clippy::needless_range_loop)] // (group, token) index several arrays at once
unsafe fn tile<const G: usize, const N: usize>(
    w: &I8Matrix,
    a: Q8View,
    bias: Option<&[f32]>,
    y: *mut f32,
    g: usize,
    t: usize,
) {
    use std::arch::x86_64::*;
    let nb = w.nin / Q4_BLOCK;
    let na = w.nin / AB;
    let segs = w.nin / SEG;
    let mut acc = [[_mm512_setzero_ps(); N]; G];
    for sg in 0..segs {
        let mut part = [[_mm512_setzero_ps(); N]; G];
        for ab in sg * SEG / AB..(sg + 1) * SEG / AB {
            let b0 = ab * AB / Q4_BLOCK;
            let mut isum: [[__m512i; N]; G] = std::array::from_fn(|r| {
                [_mm512_loadu_si512(w.corr.as_ptr().add(((g + r) * na + ab) * ROWS) as *const _); N]
            });
            for k in 0..AB / 4 {
                let wv: [__m512i; G] = std::array::from_fn(|r| {
                    _mm512_loadu_si512(w.q.as_ptr().add((((g + r) * nb + b0) * 8 + k) * 64) as *const _)
                });
                for j in 0..N {
                    let p = a.q.as_ptr().add((t + j) * w.nin + ab * AB + k * 4) as *const i32;
                    let av = _mm512_set1_epi32(p.read_unaligned());
                    for r in 0..G {
                        isum[r][j] = _mm512_dpbusd_epi32(isum[r][j], av, wv[r]);
                    }
                }
            }
            for j in 0..N {
                let dx = _mm512_set1_ps(*a.d.get_unchecked((t + j) * na + ab));
                for r in 0..G {
                    part[r][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r][j]), dx, part[r][j]);
                }
            }
        }
        for r in 0..G {
            let dw = _mm512_loadu_ps(w.d.as_ptr().add(((g + r) * segs + sg) * ROWS));
            for j in 0..N {
                acc[r][j] = _mm512_fmadd_ps(part[r][j], dw, acc[r][j]);
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
            _mm512_storeu_ps(y.add((t + j) * w.nout + col), _mm512_add_ps(acc[r][j], bv));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::e5_file::dequantize_q4;

    #[test]
    fn matches_f32_reference() {
        if !I8Matrix::available() {
            eprintln!("no AVX-512 VNNI: skipped");
            return;
        }
        let (nout, nin, tokens) = (48, 384, 21);
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
        let m = I8Matrix::from_q4(
            &[(&blocks[..blocks.len() / 2], nout / 2, 2.0), (&blocks[blocks.len() / 2..], nout / 2, 1.0)],
            nin,
        )
        .unwrap();
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
    /// few token counts (`cargo test --release -p rhizome-embed q8i8_timing -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn q8i8_timing() {
        if !I8Matrix::available() {
            return;
        }
        let blocks = |nout: usize, nin: usize| -> Vec<u8> {
            (0..nout * nin / Q4_BLOCK)
                .flat_map(|i| [0x66, 0x2e].into_iter().chain((0..16).map(move |j| (i * 31 + j * 7) as u8)))
                .collect()
        };
        // 12 layers' worth of distinct matrices, as in the encoder: ~21 MB of weights, more
        // than L2 holds, so a pass streams them as a real forward pass does.
        let shapes = [(1152, 384), (384, 384), (1536, 384), (384, 1536)];
        let layers: Vec<Vec<I8Matrix>> = (0..12)
            .map(|_| shapes.iter().map(|&(o, i)| I8Matrix::from_q4(&[(&blocks(o, i), o, 1.0)], i).unwrap()).collect())
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
