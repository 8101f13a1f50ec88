//! Fused CPU kernels for the encoders' non-matmul work: on plain slices (the e5 encoder) and
//! as candle custom ops (the BERT encoder).
//!
//! candle's generic element-wise ops allocate a new tensor per step and run on one thread;
//! with them the encoder spent more time adding biases, masking and computing `erf`/`exp`
//! than in its matmuls. These kernels work in place, fuse each chain of element-wise steps
//! into one pass, run rows in parallel (rayon) or on the calling thread, and are compiled
//! three times: generic, with AVX2+FMA and with AVX-512 enabled (picked at run time) so the
//! loops vectorise 8 or 16 wide. Every variant does the same IEEE operations in the same
//! order (Rust never contracts `a * b + c` into an FMA, and the sums' lanes are explicit),
//! so their results are identical; the exception is bias+GELU on AVX-512, written by hand
//! with multiply-adds and no division (`bias_gelu_512`), within 1e-6 of GELU in double
//! precision as the generic body is.
//! Attention is in [`crate::attention`].

use candle_core::{bail, CpuStorage, InplaceOp1, InplaceOp2, Layout, Result};
use rayon::prelude::*;

// ---------------------------------------------------------------------------------------
// Scalar maths written to vectorise (no libm calls, no branches).

/// `e^x` to ~2 ulp for x in [-87, 88]; 0 below, `e^88` above. Branch-free.
#[inline(always)]
fn exp_f32(x_in: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    const ROUND: f32 = 12_582_912.0; // 1.5 * 2^23: adding and subtracting rounds to integer
    let x = x_in.clamp(-87.0, 88.0);
    // n = round(x / ln 2), as a float and (from the same sum's low mantissa bits) as an
    // integer: no float-to-int cast, which would not vectorise.
    let v = x * LOG2E + ROUND;
    let n = v - ROUND;
    let n_int = v.to_bits() as i32 - ROUND.to_bits() as i32;
    let r = x - n * LN2_HI - n * LN2_LO;
    // Taylor polynomial of e^r on |r| <= ln2/2 (error < 2e-7 relative).
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let y = p * f32::from_bits(((n_int + 127) as u32) << 23);
    if x_in < -87.0 {
        0.0
    } else {
        y
    }
}

/// Error function: the rational minimax approximation used by Eigen and XLA
/// (`x * P(x^2) / Q(x^2)` on [-4, 4], exactly ±1 in f32 beyond). Absolute error < 3e-7, no
/// exp, one division.
#[inline(always)]
fn erf_f32(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    p = x2 * p + -2.101_024e-6;
    p = x2 * p + -5.692_506_4e-5;
    p = x2 * p + -7.349_906_3e-4;
    p = x2 * p + -2.954_6e-3;
    p = x2 * p + -1.609_603_3e-2;
    let mut q = x2 * -1.456_607_2e-5 + -2.133_740_6e-4;
    q = x2 * q + -1.682_827e-3;
    q = x2 * q + -7.373_329_2e-3;
    q = x2 * q + -1.426_473_9e-2;
    x * p / q
}

/// Exact (erf) GELU, as BERT's `hidden_act = "gelu"`.
#[inline(always)]
fn gelu_erf(x: f32) -> f32 {
    0.5 * x * (1.0 + erf_f32(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// Sum with 8 independent accumulators (vectorises; the order differs from a plain loop).
#[inline(always)]
fn sum8(xs: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = xs.chunks_exact(8);
    let rest: f32 = chunks.remainder().iter().map(|&v| f(v)).sum();
    for c in chunks {
        for i in 0..8 {
            acc[i] += f(c[i]);
        }
    }
    acc.iter().sum::<f32>() + rest
}

// ---------------------------------------------------------------------------------------
// Row kernels: a generic body, compiled a second time with AVX2+FMA for the dispatcher.

#[inline(always)]
fn bias_gelu_generic(row: &mut [f32], bias: &[f32]) {
    for (x, b) in row.iter_mut().zip(bias) {
        *x = gelu_erf(*x + b);
    }
}

#[inline(always)]
fn bias_add_generic(row: &mut [f32], bias: &[f32]) {
    for (x, b) in row.iter_mut().zip(bias) {
        *x += b;
    }
}

#[inline(always)]
fn residual_norm_generic(row: &mut [f32], res: &[f32], p: &NormParams) {
    for ((x, r), b) in row.iter_mut().zip(res).zip(&p.bias) {
        *x += r + b;
    }
    let n = row.len() as f32;
    let mean = sum8(row, |v| v) / n;
    let var = sum8(row, |v| (v - mean) * (v - mean)) / n;
    let inv = 1.0 / (var + p.eps).sqrt();
    for ((x, g), b) in row.iter_mut().zip(&p.gamma).zip(&p.beta) {
        *x = (*x - mean) * inv * g + b;
    }
}

#[inline(always)]
fn softmax_generic(row: &mut [f32]) {
    // Max with 8 lanes (a plain fold over floats does not vectorise).
    let mut lanes = [f32::NEG_INFINITY; 8];
    let chunks = row.chunks_exact(8);
    let mut max = chunks.remainder().iter().fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    for c in chunks {
        for i in 0..8 {
            lanes[i] = if c[i] > lanes[i] { c[i] } else { lanes[i] };
        }
    }
    for l in lanes {
        max = if l > max { l } else { max };
    }
    for x in row.iter_mut() {
        *x = exp_f32(*x - max);
    }
    let inv = 1.0 / sum8(row, |v| v);
    for x in row.iter_mut() {
        *x *= inv;
    }
}

macro_rules! dispatch {
    ($(fn $name:ident($($arg:ident: $ty:ty),*) => $generic:ident;)*) => {$(
        fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx2,fma")]
                unsafe fn fast512($($arg: $ty),*) {
                    $generic($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn fast($($arg: $ty),*) {
                    $generic($($arg),*)
                }
                if std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx512dq")
                {
                    // SAFETY: the CPU supports the features `fast512` was compiled for.
                    return unsafe { fast512($($arg),*) };
                }
                if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU supports the features `fast` was compiled for.
                    return unsafe { fast($($arg),*) };
                }
            }
            $generic($($arg),*)
        }
    )*};
}

dispatch! {
    fn bias_gelu_row_auto(row: &mut [f32], bias: &[f32]) => bias_gelu_generic;
    fn bias_add_row(row: &mut [f32], bias: &[f32]) => bias_add_generic;
    fn residual_norm_row(row: &mut [f32], res: &[f32], p: &NormParams) => residual_norm_generic;
    fn softmax_row(row: &mut [f32]) => softmax_generic;
}

/// `x = gelu_erf(x + bias)` for one row: by [`bias_gelu_512`] where the CPU has AVX-512 F,
/// else the auto-vectorised generic body.
fn bias_gelu_row(row: &mut [f32], bias: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512 F.
        return unsafe { bias_gelu_512(row, bias) };
    }
    bias_gelu_row_auto(row, bias)
}

/// [`bias_gelu_generic`] 16 lanes at a time with multiply-adds, and the rational erf's
/// division as a reciprocal estimate refined by one Newton step (relative error ~1e-8, against
/// `vdivps`, which took ~2/3 of the generic body's time on AMD Zen 4). Not bit-identical to the
/// generic body; both are within 1e-6 (relative beyond 1) of GELU in double precision
/// (`dispatched_kernels_match_generic_ones`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn bias_gelu_512(row: &mut [f32], bias: &[f32]) {
    use std::arch::x86_64::*;
    let n = row.len().min(bias.len());
    let full = n / 16 * 16;
    let c = |v: f32| _mm512_set1_ps(v);
    let (lo, hi, s2, half, two) = (c(-4.0), c(4.0), c(std::f32::consts::FRAC_1_SQRT_2), c(0.5), c(2.0));
    let gelu = |x: __m512| -> __m512 {
        let u = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x, s2), lo), hi);
        let x2 = _mm512_mul_ps(u, u);
        let mut p = _mm512_fmadd_ps(x2, c(-2.726_142_3e-10), c(2.770_681_4e-8));
        p = _mm512_fmadd_ps(x2, p, c(-2.101_024e-6));
        p = _mm512_fmadd_ps(x2, p, c(-5.692_506_4e-5));
        p = _mm512_fmadd_ps(x2, p, c(-7.349_906_3e-4));
        p = _mm512_fmadd_ps(x2, p, c(-2.954_6e-3));
        p = _mm512_fmadd_ps(x2, p, c(-1.609_603_3e-2));
        let mut q = _mm512_fmadd_ps(x2, c(-1.456_607_2e-5), c(-2.133_740_6e-4));
        q = _mm512_fmadd_ps(x2, q, c(-1.682_827e-3));
        q = _mm512_fmadd_ps(x2, q, c(-7.373_329_2e-3));
        q = _mm512_fmadd_ps(x2, q, c(-1.426_473_9e-2));
        let r0 = _mm512_rcp14_ps(q);
        let r = _mm512_mul_ps(r0, _mm512_fnmadd_ps(q, r0, two));
        let erf = _mm512_mul_ps(_mm512_mul_ps(u, p), r);
        let hx = _mm512_mul_ps(x, half);
        _mm512_fmadd_ps(hx, erf, hx)
    };
    let (x, b) = (row.as_mut_ptr(), bias.as_ptr());
    let mut i = 0;
    while i < full {
        let v = _mm512_add_ps(_mm512_loadu_ps(x.add(i)), _mm512_loadu_ps(b.add(i)));
        _mm512_storeu_ps(x.add(i), gelu(v));
        i += 16;
    }
    if n > full {
        let m: __mmask16 = (1u16 << (n - full)) - 1;
        let v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, x.add(i)), _mm512_maskz_loadu_ps(m, b.add(i)));
        _mm512_mask_storeu_ps(x.add(i), m, gelu(v));
    }
}

/// Rows handled per rayon task: enough work to amortise scheduling.
fn rows_per_task(width: usize) -> usize {
    (16_384 / width.max(1)).max(1)
}

/// The contiguous f32 data of a storage, or an error naming the op.
fn f32_data<'a>(s: &'a CpuStorage, l: &Layout, op: &str) -> Result<&'a [f32]> {
    match (s, l.contiguous_offsets()) {
        (CpuStorage::F32(v), Some((a, b))) => Ok(&v[a..b]),
        _ => bail!("{op}: expected a contiguous f32 tensor"),
    }
}

fn f32_data_mut<'a>(s: &'a mut CpuStorage, l: &Layout, op: &str) -> Result<&'a mut [f32]> {
    match (s, l.contiguous_offsets()) {
        (CpuStorage::F32(v), Some((a, b))) => Ok(&mut v[a..b]),
        _ => bail!("{op}: expected a contiguous f32 tensor"),
    }
}

/// The f32 data of `s`, checked to be whole rows of `bias` (not empty).
fn rows_of<'a>(s: &'a mut CpuStorage, l: &Layout, bias: &[f32], op: &str) -> Result<&'a mut [f32]> {
    let w = bias.len();
    let x = f32_data_mut(s, l, op)?;
    if w == 0 || x.len() % w != 0 {
        bail!("{op}: {} values are not rows of {w}", x.len());
    }
    Ok(x)
}

// ---------------------------------------------------------------------------------------
// Slice-level kernels (the candle ops below and the e5 encoder's plain buffers use them).
//
// `par` chooses rayon (rows split into tasks) or the calling thread alone: for a short
// question the whole call is a few hundred microseconds of work per op, and handing it to
// the pool costs more (wake-ups, a blocked caller) than it saves, above all when several
// requests already keep both cores busy.

/// Apply `f` to every row of width `w` of `x`, in parallel if `par`.
fn rows_mut(x: &mut [f32], w: usize, par: bool, f: impl Fn(usize, &mut [f32]) + Sync) {
    let per = rows_per_task(w);
    if par {
        x.par_chunks_mut(w * per)
            .enumerate()
            .for_each(|(c, rows)| rows.chunks_mut(w).enumerate().for_each(|(r, row)| f(c * per + r, row)));
    } else {
        x.chunks_mut(w).enumerate().for_each(|(r, row)| f(r, row));
    }
}

/// In place: `x = x + bias`, row-wise (`x` is whole rows of `bias.len()`).
pub(crate) fn bias_add(x: &mut [f32], bias: &[f32], par: bool) {
    rows_mut(x, bias.len(), par, |_, r| bias_add_row(r, bias));
}

/// In place: `x = gelu_erf(x + bias)`, row-wise (`x` is whole rows of `bias.len()`).
pub(crate) fn bias_gelu(x: &mut [f32], bias: &[f32], par: bool) {
    rows_mut(x, bias.len(), par, |_, r| bias_gelu_row(r, bias));
}

/// In place: `x = LayerNorm(x + bias + residual)`, row-wise; `residual` has `x`'s shape.
pub(crate) fn bias_residual_norm(x: &mut [f32], residual: &[f32], p: &NormParams, par: bool) {
    let w = p.gamma.len();
    rows_mut(x, w, par, |r, row| residual_norm_row(row, &residual[r * w..(r + 1) * w], p));
}

/// In place: softmax of one row.
pub(crate) fn softmax(row: &mut [f32]) {
    softmax_row(row)
}

// ---------------------------------------------------------------------------------------
// Ops.

/// In place: `x = x + bias`, row-wise over the last dimension.
pub struct BiasAdd<'a>(pub &'a [f32]);

impl InplaceOp1 for BiasAdd<'_> {
    fn name(&self) -> &'static str {
        "bias-add"
    }
    fn cpu_fwd(&self, s: &mut CpuStorage, l: &Layout) -> Result<()> {
        bias_add(rows_of(s, l, self.0, self.name())?, self.0, true);
        Ok(())
    }
}

/// In place: `x = gelu_erf(x + bias)`, row-wise over the last dimension.
pub struct BiasGelu<'a>(pub &'a [f32]);

impl InplaceOp1 for BiasGelu<'_> {
    fn name(&self) -> &'static str {
        "bias-gelu"
    }
    fn cpu_fwd(&self, s: &mut CpuStorage, l: &Layout) -> Result<()> {
        bias_gelu(rows_of(s, l, self.0, self.name())?, self.0, true);
        Ok(())
    }
}

/// Parameters of a LayerNorm preceded by a bias (of the dense layer before it).
pub struct NormParams {
    /// Bias of the preceding dense layer.
    pub bias: Vec<f32>,
    /// LayerNorm scale.
    pub gamma: Vec<f32>,
    /// LayerNorm shift.
    pub beta: Vec<f32>,
    /// LayerNorm epsilon.
    pub eps: f32,
}

/// In place on `x` (a dense layer's output without bias), with `residual` of the same
/// shape: `x = LayerNorm(x + bias + residual)`.
pub struct BiasResidualNorm<'a>(pub &'a NormParams);

impl InplaceOp2 for BiasResidualNorm<'_> {
    fn name(&self) -> &'static str {
        "bias-residual-layernorm"
    }
    fn cpu_fwd(&self, s1: &mut CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> Result<()> {
        let p = self.0;
        let w = p.gamma.len();
        let res = f32_data(s2, l2, self.name())?;
        let x = f32_data_mut(s1, l1, self.name())?;
        if w == 0 || x.len() % w != 0 || x.len() != res.len() || p.bias.len() != w || p.beta.len() != w {
            bail!("bias-residual-layernorm: shape mismatch");
        }
        bias_residual_norm(x, res, p, true);
        Ok(())
    }
}

/// Mean of each sequence's rows of `x` (packed sequences of `lens` tokens, `h` columns).
pub fn mean_pool(x: &candle_core::Tensor, lens: &[usize], h: usize) -> Result<Vec<Vec<f32>>> {
    Ok(mean_pool_rows(&x.flatten_all()?.to_vec1::<f32>()?, lens, h))
}

/// Mean of each sequence's rows of `flat` (packed sequences of `lens` tokens, `h` columns).
pub(crate) fn mean_pool_rows(flat: &[f32], lens: &[usize], h: usize) -> Vec<Vec<f32>> {
    let mut rows = flat.chunks_exact(h);
    lens.iter()
        .map(|&len| {
            let mut acc = vec![0f32; h];
            for row in rows.by_ref().take(len) {
                acc.iter_mut().zip(row).for_each(|(a, v)| *a += v);
            }
            let inv = 1.0 / len as f32;
            acc.iter_mut().for_each(|a| *a *= inv);
            acc
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_erf_are_accurate() {
        for i in -8000..=8000 {
            let x = i as f32 / 100.0;
            let e = exp_f32(x);
            let want = x.exp();
            assert!(((e - want) / want).abs() < 1e-6, "exp({x}) = {e}, want {want}");
            if x.abs() <= 3.0 {
                let want_erf = erf_series(x as f64) as f32;
                assert!((erf_f32(x) - want_erf).abs() < 3e-7, "erf({x})");
            } else {
                // erfc(3) = 2.2e-5, decreasing beyond.
                assert!((erf_f32(x) - x.signum()).abs() < 2.3e-5, "erf({x})");
                assert!(erf_f32(x).abs() <= 1.0, "erf({x})");
            }
        }
        assert_eq!(exp_f32(-1000.0), 0.0);
        assert!(exp_f32(1000.0).is_finite());
        assert_eq!(gelu_erf(0.0), 0.0);
    }

    /// erf by its Taylor series (double precision; accurate for |x| <= 3).
    fn erf_series(x: f64) -> f64 {
        let (mut term, mut sum, mut k) = (x, x, 0.0);
        while term.abs() > 1e-17 * sum.abs().max(1e-300) && k < 200.0 {
            k += 1.0;
            term *= -x * x / k;
            sum += term / (2.0 * k + 1.0);
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn dispatched_kernels_match_generic_ones() {
        let vals: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 2001) as f32 / 200.0 - 5.0).collect();
        let bias: Vec<f32> = (0..1000).map(|i| (i % 13) as f32 / 10.0 - 0.6).collect();
        let (mut a, mut b) = (vals.clone(), vals.clone());
        bias_gelu_row(&mut a, &bias);
        bias_gelu_generic(&mut b, &bias);
        // Both within 1e-6 (relative beyond 1) of GELU in double precision.
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let v = (vals[i] + bias[i]) as f64;
            let want = 0.5 * v * (1.0 + erf_series(v / 2f64.sqrt()));
            let tol = 1e-6 * want.abs().max(1.0);
            assert!(
                (*x as f64 - want).abs() < tol && (*y as f64 - want).abs() < tol,
                "gelu({v}) = {x} / {y}, want {want}"
            );
        }
        let (mut a, mut b) = (vals.clone(), vals.clone());
        softmax_row(&mut a);
        softmax_generic(&mut b);
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-7));
    }

    #[test]
    fn softmax_and_norm_rows() {
        let mut r = vec![1.0, 2.0, 3.0, -1e9];
        softmax_row(&mut r);
        let s: f32 = r.iter().sum();
        assert!((s - 1.0).abs() < 1e-6 && r[3] == 0.0 && r[2] > r[1]);
        let p = NormParams { bias: vec![0.0; 10], gamma: vec![1.0; 10], beta: vec![0.0; 10], eps: 1e-12 };
        let mut x: Vec<f32> = (0..10).map(|i| i as f32).collect();
        residual_norm_row(&mut x, &[1.0; 10], &p);
        let mean: f32 = x.iter().sum::<f32>() / 10.0;
        let var: f32 = x.iter().map(|v| v * v).sum::<f32>() / 10.0;
        assert!(mean.abs() < 1e-5 && (var - 1.0).abs() < 1e-4);
    }
}
