//! Multi-head self-attention core on a packed, fused QKV buffer: per (sequence, head),
//! `softmax(Q Kᵀ) V` with `gemm` straight on the strided QKV rows (no head-split copies, no
//! mask: each sequence only ever sees its own tokens), each head's output written in place
//! in the merged `(tokens, hidden)` layout.
//!
//! [`attention`] works on plain slices, on rayon or on the calling thread alone (see the
//! `par` notes in `ops`); [`Attention`] wraps it as a candle op for the BERT encoder.

use candle_core::{bail, CpuStorage, CustomOp1, Layout, Result, Shape};
use rayon::prelude::*;

use crate::ops::softmax;

/// A pointer that may cross threads; each task writes a disjoint block through it.
#[derive(Clone, Copy)]
struct SyncPtr(*mut f32);
unsafe impl Send for SyncPtr {}
unsafe impl Sync for SyncPtr {}

impl SyncPtr {
    /// The pointer (a method, so closures capture the whole `Send + Sync` wrapper).
    fn get(self) -> *mut f32 {
        self.0
    }
}

/// Attention of packed sequences of `lens` tokens (each `>= 1`, summing to `total`):
/// `qkv` is `(total, 3 * hidden)` with biases added and the query pre-scaled by
/// `1/sqrt(head_dim)`; `out` (`total * hidden`) receives the merged context.
///
/// Each (sequence, head) result is computed the same way whether `par` or not, so the output
/// does not depend on it.
pub(crate) fn attention(qkv: &[f32], lens: &[usize], heads: usize, head_dim: usize, out: &mut [f32], par: bool) {
    let (nh, dh) = (heads, head_dim);
    let h = nh * dh;
    let total: usize = lens.iter().sum();
    assert!(qkv.len() == total * 3 * h && out.len() == total * h && !lens.contains(&0), "attention: bad shapes");
    let starts: Vec<usize> = lens
        .iter()
        .scan(0, |acc, &len| {
            let start = *acc;
            *acc += len;
            Some(start)
        })
        .collect();
    let out_ptr = SyncPtr(out.as_mut_ptr());
    let run = |seq: usize, head: usize, scores: &mut Vec<f32>| {
        let n = lens[seq];
        let base = starts[seq] * 3 * h + head * dh;
        let (q, k, v) = (&qkv[base..], &qkv[base + h..], &qkv[base + 2 * h..]);
        scores.clear();
        scores.resize(n * n, 0.0);
        let row_stride = (3 * h) as isize;
        // SAFETY: all reads stay inside `qkv` (the n rows of this sequence, the columns of
        // this head); the write covers this sequence's n rows x this head's columns of
        // `out`, which no other task touches; `out` outlives every task.
        unsafe {
            // scores (n x n) = Q (n x dh) . K^T (dh x n)
            gemm::gemm(
                n, n, dh,
                scores.as_mut_ptr(), 1, n as isize, false,
                q.as_ptr(), 1, row_stride,
                k.as_ptr(), row_stride, 1,
                0.0, 1.0, false, false, false, gemm::Parallelism::None,
            );
        }
        for row in scores.chunks_mut(n) {
            softmax(row);
        }
        let out_p = unsafe { out_ptr.get().add(starts[seq] * h + head * dh) };
        unsafe {
            // context (n x dh) = P (n x n) . V (n x dh), written into `out` rows.
            gemm::gemm(
                n, dh, n,
                out_p, 1, h as isize, false,
                scores.as_ptr(), 1, n as isize,
                v.as_ptr(), 1, row_stride,
                0.0, 1.0, false, false, false, gemm::Parallelism::None,
            );
        }
    };
    if par {
        // Longest sequences first, so the big tasks do not end up last on one thread.
        let mut tasks: Vec<(usize, usize)> = (0..lens.len()).flat_map(|s| (0..nh).map(move |hd| (s, hd))).collect();
        tasks.sort_by_key(|&(s, _)| std::cmp::Reverse(lens[s]));
        tasks.into_par_iter().for_each_init(Vec::new, |scores, (seq, head)| run(seq, head, scores));
    } else {
        let mut scores = Vec::new();
        for seq in 0..lens.len() {
            for head in 0..nh {
                run(seq, head, &mut scores);
            }
        }
    }
}

/// [`attention`] as a candle op on `(total_tokens, 3 * hidden)`, returning the merged
/// context `(total_tokens, hidden)`; always parallel.
pub struct Attention<'a> {
    /// Length of each sequence (`>= 1`), in packing order.
    pub lens: &'a [usize],
    /// Number of heads.
    pub heads: usize,
    /// Width of one head.
    pub head_dim: usize,
}

impl CustomOp1 for Attention<'_> {
    fn name(&self) -> &'static str {
        "attention"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let h = self.heads * self.head_dim;
        let total: usize = self.lens.iter().sum();
        let qkv = match (s, l.contiguous_offsets()) {
            (CpuStorage::F32(v), Some((a, b))) => &v[a..b],
            _ => bail!("attention: expected a contiguous f32 tensor"),
        };
        if qkv.len() != total * 3 * h || self.lens.contains(&0) {
            bail!("attention: {} values for {total} tokens x 3 x {h}, lens {:?}", qkv.len(), self.lens);
        }
        let mut out = vec![0f32; total * h];
        attention(qkv, self.lens, self.heads, self.head_dim, &mut out, true);
        Ok((CpuStorage::F32(out), Shape::from((total, h))))
    }
}
