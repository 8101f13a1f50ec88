//! Self-attention of one (sequence, head) in one pass on AVX-512, for heads 32 wide (e5-small
//! and MiniLM): `softmax(Q Kᵀ) V` with the keys transposed into a small buffer, the scores of
//! four query rows at a time kept in registers and then in a few cache lines, the softmax
//! normalisation folded into the output (each row's weighted sum of values is divided by its
//! sum of exponentials once, at the end).
//!
//! Why not two `gemm` calls per head (what [`crate::attention`] does elsewhere): for the
//! short sequences of entity names and facts (8-16 tokens) a call is mostly `gemm`'s own
//! dispatch and packing, and for passages (~120 tokens) the scores make three trips through
//! memory (written, softmaxed, read). Measured with `examples/openie_mix.rs` on the MuSiQue
//! OpenIE strings: see [`crate::attention`]'s notes.
//!
//! The result is the same sums as the `gemm` path in another order (float rounding apart).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Width of a head this kernel handles.
pub(crate) const HEAD_DIM: usize = 32;

/// Query rows per register block.
const ROWS: usize = 4;

/// Whether this CPU runs [`head`] (x86-64 with AVX-512 F).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Floats of scratch [`head`] needs for a sequence of `n` tokens.
pub(crate) fn scratch_len(n: usize) -> usize {
    let np = n.div_ceil(16) * 16;
    HEAD_DIM * np + ROWS * np
}

/// `out = softmax(Q Kᵀ) V` for one head of one sequence of `n >= 1` tokens. `q`, `k` and `v`
/// point at the head's first column in the sequence's first row (the query pre-scaled by
/// `1/sqrt(HEAD_DIM)`); rows are `stride` floats apart. `out` points at the head's first
/// column in the first output row; output rows are `out_stride` apart. `scratch` holds at
/// least [`scratch_len`]`(n)` floats.
///
/// # Safety
/// [`available`] must be true; the `n` rows of `HEAD_DIM` floats at `q`, `k`, `v` must be
/// readable and those at `out` writable, and not overlap the scratch.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn head(
    q: *const f32,
    k: *const f32,
    v: *const f32,
    stride: usize,
    n: usize,
    out: *mut f32,
    out_stride: usize,
    scratch: &mut [f32],
) {
    let np = n.div_ceil(16) * 16;
    assert!(n >= 1 && scratch.len() >= scratch_len(n), "attention: scratch too small");
    let (kt, s) = scratch.split_at_mut(HEAD_DIM * np);
    // Keys transposed, 16 keys x 16 dimensions at a time in registers: kt[d * np + j] =
    // k[j][d]; the padding keys are zero (their scores are masked out below).
    for kb in 0..np / 16 {
        for half in 0..HEAD_DIM / 16 {
            // Rows past the sequence are zero (not masked loads: on AMD a masked-off load
            // that would touch an unmapped page is slow).
            let mut r: [__m512; 16] = std::array::from_fn(|a| {
                if kb * 16 + a < n {
                    _mm512_loadu_ps(k.add((kb * 16 + a) * stride + half * 16))
                } else {
                    _mm512_setzero_ps()
                }
            });
            transpose16(&mut r);
            for (c, col) in r.iter().enumerate() {
                _mm512_storeu_ps(kt.as_mut_ptr().add((half * 16 + c) * np + kb * 16), *col);
            }
        }
    }
    let mut i = 0;
    while i + ROWS <= n {
        block::<ROWS>(q.add(i * stride), v, stride, n, np, out.add(i * out_stride), out_stride, kt, s);
        i += ROWS;
    }
    let (qi, oi) = (q.add(i * stride), out.add(i * out_stride));
    match n - i {
        0 => {}
        1 => block::<1>(qi, v, stride, n, np, oi, out_stride, kt, s),
        2 => block::<2>(qi, v, stride, n, np, oi, out_stride, kt, s),
        _ => block::<3>(qi, v, stride, n, np, oi, out_stride, kt, s), // ROWS = 4: at most 3 left
    }
}

/// Query rows `0..R` (from `q`, output at `out`) against all `n` keys and values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
unsafe fn block<const R: usize>(
    q: *const f32,
    v: *const f32,
    stride: usize,
    n: usize,
    np: usize,
    out: *mut f32,
    out_stride: usize,
    kt: &[f32],
    s: &mut [f32],
) {
    // Scores, 16 keys at a time: each key column load feeds R multiply-adds.
    for c in 0..np / 16 {
        let mut acc = [_mm512_setzero_ps(); R];
        for d in 0..HEAD_DIM {
            let kv = _mm512_loadu_ps(kt.as_ptr().add(d * np + c * 16));
            for r in 0..R {
                acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(*q.add(r * stride + d)), kv, acc[r]);
            }
        }
        for r in 0..R {
            _mm512_storeu_ps(s.as_mut_ptr().add(r * np + c * 16), acc[r]);
        }
    }
    let inv = softmax_rows::<R>(s, n, np);
    // Weighted sums of the value rows: each value row (two registers) feeds 2R multiply-adds.
    let mut acc = [[_mm512_setzero_ps(); 2]; R];
    for j in 0..n {
        let (v0, v1) = (_mm512_loadu_ps(v.add(j * stride)), _mm512_loadu_ps(v.add(j * stride + 16)));
        for r in 0..R {
            let p = _mm512_set1_ps(*s.get_unchecked(r * np + j));
            acc[r][0] = _mm512_fmadd_ps(p, v0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(p, v1, acc[r][1]);
        }
    }
    for r in 0..R {
        let f = _mm512_set1_ps(inv[r]);
        _mm512_storeu_ps(out.add(r * out_stride), _mm512_mul_ps(acc[r][0], f));
        _mm512_storeu_ps(out.add(r * out_stride + 16), _mm512_mul_ps(acc[r][1], f));
    }
}

/// Softmax numerators in place for `R` score rows of `np` columns (`n` valid; the padding
/// columns become 0), and each row's `1 / sum`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(clippy::needless_range_loop)] // row r of `s` and `inv` alike
pub(crate) unsafe fn softmax_rows<const R: usize>(s: &mut [f32], n: usize, np: usize) -> [f32; R] {
    let last = n - (np - 16); // valid lanes of the last 16
    let last_mask: __mmask16 = if last == 16 { 0xffff } else { (1u16 << last) - 1 };
    let mut inv = [0f32; R];
    for r in 0..R {
        let row = s.as_mut_ptr().add(r * np);
        let mut m = _mm512_set1_ps(f32::NEG_INFINITY);
        for c in 0..np / 16 {
            let mask = if (c + 1) * 16 == np { last_mask } else { 0xffff };
            m = _mm512_mask_max_ps(m, mask, m, _mm512_loadu_ps(row.add(c * 16)));
        }
        let m = _mm512_set1_ps(_mm512_reduce_max_ps(m));
        let mut sum = _mm512_setzero_ps();
        for c in 0..np / 16 {
            let mask = if (c + 1) * 16 == np { last_mask } else { 0xffff };
            let e = _mm512_maskz_mov_ps(mask, exp512(_mm512_sub_ps(_mm512_loadu_ps(row.add(c * 16)), m)));
            _mm512_storeu_ps(row.add(c * 16), e);
            sum = _mm512_add_ps(sum, e);
        }
        inv[r] = 1.0 / _mm512_reduce_add_ps(sum);
    }
    inv
}

/// Transpose 16 rows of 16 floats in registers: afterwards `r[c]` holds column `c`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(crate) unsafe fn transpose16(r: &mut [__m512; 16]) {
    // Within each 128-bit lane L: pairs of rows interleaved, then 4 rows' column 4L + m
    // gathered into u[4i + m]; last, the 4 x 4 blocks of 128-bit lanes transposed.
    let mut t = [_mm512_setzero_ps(); 16];
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    let pd = _mm512_castps_pd;
    for i in 0..4 {
        let (a, b, c, d) = (t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(a), pd(c)));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(a), pd(c)));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(b), pd(d)));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(b), pd(d)));
    }
    let u = *r;
    for m in 0..4 {
        let (a, b, c, d) = (u[m], u[4 + m], u[8 + m], u[12 + m]);
        let x0 = _mm512_shuffle_f32x4::<0x44>(a, b);
        let x1 = _mm512_shuffle_f32x4::<0xEE>(a, b);
        let y0 = _mm512_shuffle_f32x4::<0x44>(c, d);
        let y1 = _mm512_shuffle_f32x4::<0xEE>(c, d);
        r[m] = _mm512_shuffle_f32x4::<0x88>(x0, y0);
        r[4 + m] = _mm512_shuffle_f32x4::<0xDD>(x0, y0);
        r[8 + m] = _mm512_shuffle_f32x4::<0x88>(x1, y1);
        r[12 + m] = _mm512_shuffle_f32x4::<0xDD>(x1, y1);
    }
}

/// `e^x` on 16 lanes for `x <= 0` (a score minus its row's maximum): the same range
/// reduction and polynomial as `ops::exp_f32` (relative error < 2e-7); 0 below -87.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn exp512(x_in: __m512) -> __m512 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    const ROUND: f32 = 12_582_912.0; // 1.5 * 2^23
    let low = _mm512_set1_ps(-87.0);
    let x = _mm512_max_ps(x_in, low);
    let vr = _mm512_fmadd_ps(x, _mm512_set1_ps(LOG2E), _mm512_set1_ps(ROUND));
    let nf = _mm512_sub_ps(vr, _mm512_set1_ps(ROUND));
    let ni = _mm512_sub_epi32(_mm512_castps_si512(vr), _mm512_set1_epi32(ROUND.to_bits() as i32));
    let r = _mm512_fnmadd_ps(nf, _mm512_set1_ps(LN2_LO), _mm512_fnmadd_ps(nf, _mm512_set1_ps(LN2_HI), x));
    let mut p = _mm512_set1_ps(1.0 / 720.0);
    for c in [1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0] {
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
    }
    let scale = _mm512_castsi512_ps(_mm512_slli_epi32::<23>(_mm512_add_epi32(ni, _mm512_set1_epi32(127))));
    let y = _mm512_mul_ps(p, scale);
    _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x_in, low), _mm512_setzero_ps())
}

#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) mod tests {
    use super::*;

    /// Plain f64 attention of one head, for comparison.
    pub(crate) fn reference(q: &[f32], k: &[f32], v: &[f32], stride: usize, n: usize) -> Vec<f32> {
        let mut out = vec![0f32; n * HEAD_DIM];
        for i in 0..n {
            let s: Vec<f64> = (0..n)
                .map(|j| (0..HEAD_DIM).map(|d| q[i * stride + d] as f64 * k[j * stride + d] as f64).sum())
                .collect();
            let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
            let z: f64 = e.iter().sum();
            for d in 0..HEAD_DIM {
                out[i * HEAD_DIM + d] = ((0..n).map(|j| e[j] * v[j * stride + d] as f64).sum::<f64>() / z) as f32;
            }
        }
        out
    }

    /// Deterministic values in [-2, 2).
    pub(crate) fn uniform(mut seed: u32) -> impl FnMut() -> f32 {
        move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 * 4.0 - 2.0
        }
    }

    #[test]
    fn matches_plain_attention_at_every_length() {
        if !available() {
            eprintln!("no AVX-512: skipped");
            return;
        }
        let mut next = uniform(11);
        let stride = 3 * 64; // rows wider than a head, as in the fused QKV buffer
        for n in [1, 2, 3, 4, 5, 7, 15, 16, 17, 31, 33, 64, 130] {
            let data: Vec<f32> = (0..n * stride).map(|_| next()).collect();
            let (q, k, v) = (&data[..], &data[64..], &data[128..]);
            let mut out = vec![f32::NAN; n * HEAD_DIM];
            let mut scratch = vec![f32::NAN; scratch_len(n)];
            unsafe { head(q.as_ptr(), k.as_ptr(), v.as_ptr(), stride, n, out.as_mut_ptr(), HEAD_DIM, &mut scratch) };
            let want = reference(q, k, v, stride, n);
            for (a, b) in out.iter().zip(&want) {
                assert!((a - b).abs() < 1e-5 * (1.0 + b.abs()), "n = {n}: {a} vs {b}");
            }
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod timing {
    use super::*;

    /// Not a check: ns per (sequence, head) call (`cargo test --release -p rhizome-embed
    /// --lib fused_timing -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn fused_timing() {
        if !available() {
            return;
        }
        let stride = 3 * 384;
        for n in [8, 16, 32, 120, 256] {
            let data: Vec<f32> = (0..n * stride).map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0).collect();
            let mut out = vec![0f32; n * 384];
            let mut scratch = vec![0f32; scratch_len(n)];
            let reps = 2_000_000 / (n * n) + 10;
            let t = std::time::Instant::now();
            for r in 0..reps {
                let h = (r % 12) * 32;
                unsafe {
                    head(
                        data.as_ptr().add(h),
                        data.as_ptr().add(384 + h),
                        data.as_ptr().add(768 + h),
                        stride,
                        n,
                        out.as_mut_ptr().add(h),
                        384,
                        &mut scratch,
                    )
                };
            }
            let ns = t.elapsed().as_nanos() as f64 / reps as f64;
            println!("n = {n}: {ns:.0} ns per head, {:.2} ns per n^2", ns / (n * n) as f64);
        }
    }
}
