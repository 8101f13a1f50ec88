//! The attention of [`crate::attention_fused`] with its two products in bf16 on AVX-512
//! BF16: `vdpbf16ps` multiplies 16 pairs of bf16 and adds them to 16 f32 sums, 32
//! multiply-adds per instruction against 16 for an f32 FMA, at the same rate on the
//! development machine (Zen 4, both ~1 per cycle). Queries, keys, values and the softmax
//! numerators are rounded to bf16 (8 bits of mantissa, nearest even); sums, the softmax and
//! its normalisation stay f32.
//!
//! Used from [`FROM_TOKENS`] tokens on, where the products are most of the work (a passage
//! of ~120 tokens: ~60,000 f32 FMAs per head); below, rounding the inputs costs about what
//! the products save.
//!
//! Layouts: the keys as 16 rows of pairs (`kt[p * np + j]` = dimensions `2p, 2p+1` of key
//! `j`, built by converting each key row to 16 pairs and transposing 16 keys at a time), the
//! values as key pairs (`vt[m * 32 + d]` = dimension `d` of keys `2m, 2m+1`), a query row
//! and a numerator row as pairs of consecutive elements (as they lie in memory).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use crate::attention_fused::HEAD_DIM;
#[cfg(target_arch = "x86_64")]
use crate::attention_fused::{softmax_rows, transpose16};

/// Sequences from this many tokens on take the bf16 path.
pub(crate) const FROM_TOKENS: usize = 32;

/// Query rows per register block.
const ROWS: usize = 4;

/// Whether this CPU runs [`head`] (x86-64 with AVX-512 F, BW and BF16).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Padded widths for `n` tokens: keys to 16, numerator rows to 32 (whole conversions).
fn widths(n: usize) -> (usize, usize) {
    (n.div_ceil(16) * 16, n.div_ceil(32) * 32)
}

/// Floats (4-byte words) of scratch [`head`] needs for a sequence of `n` tokens.
pub(crate) fn scratch_len(n: usize) -> usize {
    let (np, npp) = widths(n);
    // keys, values (as many pairs as keys, rounded up), scores, numerator pairs, query pairs
    16 * np + HEAD_DIM * (npp / 2) + ROWS * np + ROWS * npp / 2 + ROWS * 16
}

/// `out = softmax(Q Kᵀ) V` for one head of one sequence of `n >= 1` tokens, with the same
/// arguments and layout as [`crate::attention_fused::head`].
///
/// # Safety
/// [`available`] must be true; the `n` rows of `HEAD_DIM` floats at `q`, `k`, `v` must be
/// readable and those at `out` writable, and not overlap the scratch.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
#[allow(clippy::too_many_arguments)]
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
    let (np, npp) = widths(n);
    assert!(n >= 1 && scratch.len() >= scratch_len(n), "attention: scratch too small");
    let (kt, rest) = scratch.split_at_mut(16 * np);
    let (vt, rest) = rest.split_at_mut(HEAD_DIM * (npp / 2));
    let (s, rest) = rest.split_at_mut(ROWS * np);
    let (p2, qp) = rest.split_at_mut(ROWS * npp / 2);
    // Keys: each row as 16 pairs, 16 rows transposed at a time; padding keys are zero.
    for kb in 0..np / 16 {
        let mut r: [__m512; 16] = std::array::from_fn(|a| {
            if kb * 16 + a < n {
                pairs(k.add((kb * 16 + a) * stride))
            } else {
                _mm512_setzero_ps()
            }
        });
        transpose16(&mut r);
        for (c, col) in r.iter().enumerate() {
            _mm512_storeu_ps(kt.as_mut_ptr().add(c * np + kb * 16), *col);
        }
    }
    // Values: dimension d of keys 2m and 2m + 1 side by side; a missing last key is zero.
    let interleave = _mm512_set_epi16(
        31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1,
        16, 0,
    );
    for m in 0..npp / 2 {
        for half in 0..2 {
            let row = |j: usize| {
                if j < n {
                    _mm512_loadu_ps(v.add(j * stride + half * 16))
                } else {
                    _mm512_setzero_ps()
                }
            };
            let both: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(row(2 * m + 1), row(2 * m)));
            let mixed = _mm512_permutexvar_epi16(interleave, both);
            _mm512_storeu_si512(vt.as_mut_ptr().add(m * HEAD_DIM + half * 16) as *mut _, mixed);
        }
    }
    let mut i = 0;
    while i + ROWS <= n {
        block::<ROWS>(q.add(i * stride), stride, n, out.add(i * out_stride), out_stride, kt, vt, s, p2, qp);
        i += ROWS;
    }
    let (qi, oi) = (q.add(i * stride), out.add(i * out_stride));
    match n - i {
        0 => {}
        1 => block::<1>(qi, stride, n, oi, out_stride, kt, vt, s, p2, qp),
        2 => block::<2>(qi, stride, n, oi, out_stride, kt, vt, s, p2, qp),
        _ => block::<3>(qi, stride, n, oi, out_stride, kt, vt, s, p2, qp), // ROWS = 4: at most 3 left
    }
}

/// The 32 floats at `p` as 16 bf16 pairs (lane `i`: elements `2i`, `2i + 1`), as a register.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
#[inline]
unsafe fn pairs(p: *const f32) -> __m512 {
    std::mem::transmute(_mm512_cvtne2ps_pbh(_mm512_loadu_ps(p.add(16)), _mm512_loadu_ps(p)))
}

/// Query rows `0..R` against all `n` keys and values (see [`head`] for the layouts).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
#[inline]
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
unsafe fn block<const R: usize>(
    q: *const f32,
    stride: usize,
    n: usize,
    out: *mut f32,
    out_stride: usize,
    kt: &[f32],
    vt: &[f32],
    s: &mut [f32],
    p2: &mut [f32],
    qp: &mut [f32],
) {
    let (np, npp) = widths(n);
    for r in 0..R {
        _mm512_storeu_ps(qp.as_mut_ptr().add(r * 16), pairs(q.add(r * stride)));
    }
    let qp = qp.as_ptr() as *const i32;
    // Scores, 16 keys at a time: each key-pair load feeds R dot products.
    for c in 0..np / 16 {
        let mut acc = [_mm512_setzero_ps(); R];
        for p in 0..HEAD_DIM / 2 {
            let kv: __m512bh = std::mem::transmute(_mm512_loadu_ps(kt.as_ptr().add(p * np + c * 16)));
            for r in 0..R {
                let qv: __m512bh = std::mem::transmute(_mm512_set1_epi32(*qp.add(r * 16 + p)));
                acc[r] = _mm512_dpbf16_ps(acc[r], kv, qv);
            }
        }
        for r in 0..R {
            _mm512_storeu_ps(s.as_mut_ptr().add(r * np + c * 16), acc[r]);
        }
    }
    let inv = softmax_rows::<R>(s, n, np);
    // Numerators as pairs of consecutive keys (zero past the last key).
    for r in 0..R {
        let row = s.as_ptr().add(r * np);
        for b in 0..npp / 32 {
            let lo = _mm512_loadu_ps(row.add(b * 32));
            let hi = if b * 32 + 16 < np { _mm512_loadu_ps(row.add(b * 32 + 16)) } else { _mm512_setzero_ps() };
            let both: __m512 = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
            _mm512_storeu_ps(p2.as_mut_ptr().add(r * npp / 2 + b * 16), both);
        }
    }
    let p2 = p2.as_ptr() as *const i32;
    // Weighted sums of the value pairs: each pair (two registers) feeds 2R dot products.
    let mut acc = [[_mm512_setzero_ps(); 2]; R];
    for m in 0..n.div_ceil(2) {
        let v0: __m512bh = std::mem::transmute(_mm512_loadu_ps(vt.as_ptr().add(m * HEAD_DIM)));
        let v1: __m512bh = std::mem::transmute(_mm512_loadu_ps(vt.as_ptr().add(m * HEAD_DIM + 16)));
        for r in 0..R {
            let pv: __m512bh = std::mem::transmute(_mm512_set1_epi32(*p2.add(r * npp / 2 + m)));
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], v0, pv);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], v1, pv);
        }
    }
    for r in 0..R {
        let f = _mm512_set1_ps(inv[r]);
        _mm512_storeu_ps(out.add(r * out_stride), _mm512_mul_ps(acc[r][0], f));
        _mm512_storeu_ps(out.add(r * out_stride + 16), _mm512_mul_ps(acc[r][1], f));
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::attention_fused::tests::{reference, uniform};

    /// Within bf16 rounding of the f64 result at lengths around every padding boundary
    /// (odd and even, 16 and 32 multiples), and the scratch beyond its length untouched.
    #[test]
    fn matches_plain_attention_within_bf16_rounding() {
        if !available() {
            eprintln!("no AVX-512 BF16: skipped");
            return;
        }
        let mut next = uniform(5);
        let stride = 3 * 64;
        for n in [1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 120, 130] {
            // Queries scaled by 1/sqrt(32) as the encoder's are: scores of a few units.
            let data: Vec<f32> =
                (0..n * stride).map(|i| if i % stride < 64 { next() * 0.177 } else { next() }).collect();
            let (q, k, v) = (&data[..], &data[64..], &data[128..]);
            let mut out = vec![f32::NAN; n * HEAD_DIM];
            let len = scratch_len(n);
            let mut scratch = vec![f32::NAN; len + 16];
            scratch[len..].fill(7.0);
            unsafe { head(q.as_ptr(), k.as_ptr(), v.as_ptr(), stride, n, out.as_mut_ptr(), HEAD_DIM, &mut scratch) };
            assert!(scratch[len..].iter().all(|&x| x == 7.0), "n = {n}: wrote past the scratch");
            let want = reference(q, k, v, stride, n);
            // bf16 keeps 8 bits of mantissa (relative rounding <= 2^-9 per input): measured
            // at most ~0.007 here for values in [-2, 2] (the f32 kernel: < 1e-5).
            let err = out.iter().zip(&want).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
            eprintln!("n = {n}: max error {err}");
            assert!(err < 0.015, "n = {n}: max error {err}");
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod timing {
    use super::*;

    /// Not a check: ns per (sequence, head) call of this kernel and of the f32 one,
    /// alternated, best of 5 (`cargo test --release -p rhizome-embed --lib bf16_timing --
    /// --ignored --nocapture`).
    #[test]
    #[ignore]
    fn bf16_timing() {
        if !available() {
            return;
        }
        let stride = 3 * 384;
        for n in [16, 24, 32, 48, 64, 120, 256] {
            let data: Vec<f32> = (0..n * stride).map(|i| ((i * 7919) % 2001) as f32 / 4000.0 - 0.25).collect();
            let mut out = vec![0f32; n * 384];
            let mut scratch = vec![0f32; scratch_len(n).max(crate::attention_fused::scratch_len(n))];
            let reps = 4_000_000 / (n * n) + 10;
            let mut best = [f64::INFINITY; 2];
            for _ in 0..5 {
                for (which, b) in best.iter_mut().enumerate() {
                    let t = std::time::Instant::now();
                    for r in 0..reps {
                        let h = (r % 12) * 32;
                        let (q, k, v) = (data[h..].as_ptr(), data[384 + h..].as_ptr(), data[768 + h..].as_ptr());
                        unsafe {
                            if which == 0 {
                                crate::attention_fused::head(
                                    q,
                                    k,
                                    v,
                                    stride,
                                    n,
                                    out.as_mut_ptr().add(h),
                                    384,
                                    &mut scratch,
                                )
                            } else {
                                head(q, k, v, stride, n, out.as_mut_ptr().add(h), 384, &mut scratch)
                            }
                        };
                    }
                    *b = b.min(t.elapsed().as_nanos() as f64 / reps as f64);
                }
            }
            println!("n = {n}: f32 {:.0} ns, bf16 {:.0} ns per head: {:.2}x", best[0], best[1], best[0] / best[1]);
        }
    }
}
