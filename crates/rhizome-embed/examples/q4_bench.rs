//! TEMPORARY micro-benchmark: f32 gemm (candle) vs int8 x int4 (Q8_0 x Q4_0) matmuls.
use std::time::Instant;

use candle_core::{Device, Tensor};
use std::arch::x86_64::*;

const T: usize = 2048;

fn rnd(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        })
        .collect()
}

/// Weights packed for VNNI: per 16-row group, per 32-input block, 8 x 64 bytes (lane r = row r,
/// 4 consecutive inputs), nibble values 0..15; scales per (group, block, row).
struct Packed {
    nout: usize,
    nin: usize,
    q: Vec<u8>,
    d: Vec<f32>,
}

fn pack(w: &[f32], nout: usize, nin: usize) -> Packed {
    let nb = nin / 32;
    let mut q = vec![0u8; nout * nin];
    let mut d = vec![0f32; nout * nb];
    for g in 0..nout / 16 {
        for b in 0..nb {
            for r in 0..16 {
                let row = g * 16 + r;
                let blk = &w[row * nin + b * 32..row * nin + b * 32 + 32];
                let amax = blk.iter().fold(0f32, |m, v| if v.abs() > m.abs() { *v } else { m });
                let dd = amax / -8.0;
                let id = if dd != 0.0 { 1.0 / dd } else { 0.0 };
                d[(g * nb + b) * 16 + r] = dd;
                for i in 0..32 {
                    let v = ((blk[i] * id + 8.5) as i32).clamp(0, 15) as u8;
                    let k = i / 4;
                    q[((g * nb + b) * 8 + k) * 64 + r * 4 + i % 4] = v;
                }
            }
        }
    }
    Packed { nout, nin, q, d }
}

fn quant_acts(x: &[f32], nin: usize) -> (Vec<i8>, Vec<f32>, Vec<i32>) {
    let nb = nin / 32;
    let t = x.len() / nin;
    let mut q = vec![0i8; x.len()];
    let mut d = vec![0f32; t * nb];
    let mut s = vec![0i32; t * nb];
    for (i, blk) in x.chunks_exact(32).enumerate() {
        let amax = blk.iter().fold(0f32, |m, v| m.max(v.abs()));
        let dd = amax / 127.0;
        let id = if dd > 0.0 { 1.0 / dd } else { 0.0 };
        let mut sum = 0;
        for j in 0..32 {
            let v = (blk[j] * id).round() as i32;
            q[i * 32 + j] = v as i8;
            sum += v;
        }
        d[i] = dd;
        s[i] = sum;
    }
    (q, d, s)
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn matmul_vnni(p: &Packed, aq: &[i8], ad: &[f32], asum: &[i32], y: &mut [f32]) {
    let nb = p.nin / 32;
    let t_all = aq.len() / p.nin;
    for g in 0..p.nout / 16 {
        let mut t = 0;
        while t < t_all {
            let tn = (t_all - t).min(4);
            let mut acc = [_mm512_setzero_ps(); 4];
            for b in 0..nb {
                let mut isum = [_mm512_setzero_si512(); 4];
                let wbase = p.q.as_ptr().add((g * nb + b) * 8 * 64);
                for k in 0..8 {
                    let w = _mm512_loadu_si512(wbase.add(k * 64) as *const _);
                    for j in 0..4 {
                        let a = (aq.as_ptr().add((t + j.min(tn - 1)) * p.nin + b * 32 + k * 4) as *const i32).read_unaligned();
                        isum[j] = _mm512_dpbusd_epi32(isum[j], w, _mm512_set1_epi32(a));
                    }
                }
                let dw = _mm512_loadu_ps(p.d.as_ptr().add((g * nb + b) * 16));
                for j in 0..4 {
                    let tj = t + j.min(tn - 1);
                    let corr = _mm512_sub_epi32(isum[j], _mm512_set1_epi32(8 * asum[tj * nb + b]));
                    let sc = _mm512_mul_ps(dw, _mm512_set1_ps(ad[tj * nb + b]));
                    acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(corr), sc, acc[j]);
                }
            }
            for j in 0..tn {
                _mm512_storeu_ps(y.as_mut_ptr().add((t + j) * p.nout + g * 16), acc[j]);
            }
            t += 4;
        }
    }
}

fn main() {
    for (nin, nout) in [(384usize, 1536usize), (1536, 384), (384, 1152)] {
        let w = rnd(nout * nin, 1);
        let x = rnd(T * nin, 2);
        let wt = Tensor::from_vec(w.clone(), (nout, nin), &Device::Cpu).unwrap().t().unwrap().contiguous().unwrap();
        let xt = Tensor::from_vec(x.clone(), (T, nin), &Device::Cpu).unwrap();
        let flops = 2.0 * (T * nin * nout) as f64;
        let _ = xt.matmul(&wt).unwrap();
        let reps = 20;
        let t0 = Instant::now();
        let mut yf = None;
        for _ in 0..reps {
            yf = Some(xt.matmul(&wt).unwrap());
        }
        let f32_s = t0.elapsed().as_secs_f64() / reps as f64;
        let p = pack(&w, nout, nin);
        let mut y = vec![0f32; T * nout];
        let t0 = Instant::now();
        for _ in 0..reps {
            let (aq, ad, asum) = quant_acts(&x, nin);
            unsafe { matmul_vnni(&p, &aq, &ad, &asum, &mut y) };
        }
        let q_s = t0.elapsed().as_secs_f64() / reps as f64;
        let yf = yf.unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let dot: f64 = yf.iter().zip(&y).map(|(a, b)| (*a as f64) * (*b as f64)).sum();
        let na: f64 = yf.iter().map(|a| (*a as f64).powi(2)).sum::<f64>().sqrt();
        let nb: f64 = y.iter().map(|a| (*a as f64).powi(2)).sum::<f64>().sqrt();
        println!(
            "{T}x{nin} . {nin}x{nout}: f32 gemm {:.2} ms ({:.1} GFLOP/s), q8xq4 vnni {:.2} ms ({:.1} GOP/s) cos {:.4}",
            f32_s * 1e3,
            flops / f32_s / 1e9,
            q_s * 1e3,
            flops / q_s / 1e9,
            dot / (na * nb)
        );
    }
}
