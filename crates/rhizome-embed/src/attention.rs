//! Multi-head self-attention core on a packed, fused QKV buffer: per (sequence, head),
//! `softmax(Q Kᵀ) V` straight on the strided QKV rows (no head-split copies, no mask: each
//! sequence only ever sees its own tokens), each head's output written in place in the
//! merged `(tokens, hidden)` layout. Heads 32 wide on AVX-512 run the fused kernel of
//! [`crate::attention_fused`]; others two `gemm` calls and a softmax per head.
//!
//! `examples/openie_mix.rs --compare` times both paths on the strings of the MuSiQue OpenIE
//! import. A batch of short sequences runs one task per sequence (all heads, rows
//! prefetched), not one per (sequence, head).
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

/// Whether heads 32 wide use [`crate::attention_fused`] where the CPU has AVX-512 (the
/// default), or two `gemm` calls per head (the previous path, kept to measure against).
static FUSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Benchmarks only: `false` runs attention as before the fused kernel (two `gemm` calls and a
/// softmax per head), for the whole process, so that both can be timed in one run.
pub fn set_fused(on: bool) {
    FUSED.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether sequences of [`crate::attention_bf16::FROM_TOKENS`] tokens or more take the
/// bf16 kernel where the CPU has AVX-512 BF16 (the default).
static BF16: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Benchmarks only: `false` keeps long sequences on the f32 fused kernel, for the whole
/// process, so that both can be timed in one run.
pub fn set_bf16(on: bool) {
    BF16.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// From this many sequences in a batch on, attention runs one task per sequence (all its
/// heads) instead of one per (sequence, head): enough tasks to keep the threads busy.
const SEQUENCE_TASKS_FROM: usize = 8;

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
    let fused = dh == crate::attention_fused::HEAD_DIM
        && crate::attention_fused::available()
        && FUSED.load(std::sync::atomic::Ordering::Relaxed);
    let bf16 = fused && crate::attention_bf16::available() && BF16.load(std::sync::atomic::Ordering::Relaxed);
    let run = |seq: usize, head: usize, scores: &mut Vec<f32>| {
        let n = lens[seq];
        let base = starts[seq] * 3 * h + head * dh;
        let (q, k, v) = (&qkv[base..], &qkv[base + h..], &qkv[base + 2 * h..]);
        #[cfg(target_arch = "x86_64")]
        if bf16 && n >= crate::attention_bf16::FROM_TOKENS {
            scores.resize(crate::attention_bf16::scratch_len(n), 0.0);
            // SAFETY: as below; `bf16` checked the CPU's BF16 support too.
            unsafe {
                let out_p = out_ptr.get().add(starts[seq] * h + head * dh);
                crate::attention_bf16::head(q.as_ptr(), k.as_ptr(), v.as_ptr(), 3 * h, n, out_p, h, scores);
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if fused {
            scores.resize(crate::attention_fused::scratch_len(n), 0.0);
            // SAFETY: `fused` checked the CPU; q, k and v are this sequence's n rows (3h
            // apart) from this head's column, inside `qkv` (the assert above); the output
            // rows are this sequence's n rows x this head's columns of `out`, which no other
            // task touches; the scratch is this task's own.
            unsafe {
                let out_p = out_ptr.get().add(starts[seq] * h + head * dh);
                crate::attention_fused::head(q.as_ptr(), k.as_ptr(), v.as_ptr(), 3 * h, n, out_p, h, scores);
            }
            return;
        }
        scores.clear();
        scores.resize(n * n, 0.0);
        let row_stride = (3 * h) as isize;
        // SAFETY: all reads stay inside `qkv` (the n rows of this sequence, the columns of
        // this head); the write covers this sequence's n rows x this head's columns of
        // `out`, which no other task touches; `out` outlives every task.
        unsafe {
            // scores (n x n) = Q (n x dh) . K^T (dh x n)
            gemm::gemm(
                n,
                n,
                dh,
                scores.as_mut_ptr(),
                1,
                n as isize,
                false,
                q.as_ptr(),
                1,
                row_stride,
                k.as_ptr(),
                row_stride,
                1,
                0.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
        for row in scores.chunks_mut(n) {
            softmax(row);
        }
        let out_p = unsafe { out_ptr.get().add(starts[seq] * h + head * dh) };
        unsafe {
            // context (n x dh) = P (n x n) . V (n x dh), written into `out` rows.
            gemm::gemm(
                n,
                dh,
                n,
                out_p,
                1,
                h as isize,
                false,
                scores.as_ptr(),
                1,
                n as isize,
                v.as_ptr(),
                1,
                row_stride,
                0.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
    };
    if par && lens.len() >= SEQUENCE_TASKS_FROM {
        // One task per sequence, its heads one after the other: the sequence's rows come
        // into cache once for all heads (the packed QKV buffer of a batch is ~19 MB, so a
        // task per head fetched the same rows from L3 twelve times, in 128-byte pieces).
        // Longest first, so the big tasks do not end up last on one thread.
        let mut seqs: Vec<usize> = (0..lens.len()).collect();
        seqs.sort_by_key(|&s| std::cmp::Reverse(lens[s]));
        seqs.into_par_iter().for_each_init(Vec::new, |scores, seq| {
            prefetch(&qkv[starts[seq] * 3 * h..(starts[seq] + lens[seq]) * 3 * h]);
            (0..nh).for_each(|head| run(seq, head, scores))
        });
    } else if par {
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

/// Ask for `data` in L2, a cache line at a time: a sequence's rows of the QKV buffer are
/// read head by head, 128 bytes of each 4.6 KB row at a time, which the hardware's stream
/// prefetchers do not follow.
fn prefetch(data: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    for line in data.chunks(16) {
        // SAFETY: a prefetch is only a hint; the address is inside `data`.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(line.as_ptr() as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}
