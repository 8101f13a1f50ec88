//! The XLM-R (BERT-architecture) encoder of multilingual-e5-small, loaded from an `E5S1`
//! file (see [`crate::e5_file`]).
//!
//! The forward pass is the one of [`crate::bert`]: packed batches (no padding), a fused QKV
//! projection with `1/sqrt(head_dim)` folded into the query weights, and the fused kernels of
//! `ops` (bias+GELU, bias+residual+LayerNorm, per-sequence attention). The dense layers run
//! either as f32 gemm on weights dequantised once at load time, or as int8 matmuls on the
//! weights re-expressed as int8 at load ([`crate::q8i8`], AVX-512 VNNI); see
//! [`crate::e5::E5Matmul`]. Attention of sequences from 32 tokens on runs in bf16 where the
//! CPU has AVX-512 BF16 ([`crate::attention_bf16`]).
//!
//! The word-embedding table (250k rows, 3/4 of the file) stays 4-bit: rows are dequantised
//! as tokens are looked up, which keeps the resident model at ~80 MB (int8 matmuls) or
//! ~140 MB (f32) instead of ~470 MB.
//! Positions follow XLM-R (ids start at `padding_idx + 1 = 2`; the file's table already
//! starts there) and the single token type 0 is added to every token.

use rayon::prelude::*;

use crate::attention::attention;
use crate::e5_file::{dequantize_q4, E5File, E5Header, Q4_BLOCK, Q4_BLOCK_BYTES};
use crate::ops::{bias_add, bias_gelu, bias_residual_norm, mean_pool_rows, NormParams};
use crate::q8i8::{I8Matrix, Q8};

/// Fewest tokens in a forward pass for it to fan out over rayon; smaller calls (one question
/// is ~15-40 tokens, a few short names) run every step on the calling thread alone.
///
/// Measured with `examples/e5_timing.rs` (2 rayon threads, `E5_TIMING_GROUP` questions of ~26
/// tokens per call) on the shared 2-core development machine while the other core was busy,
/// as it is when a server answers several questions at once: fanned out, 26 tokens took
/// 5.4-5.5 ms against 4.7-4.9 ms on the calling thread, 52 tokens 10.6-10.9 against
/// 9.5-9.6 ms (and more CPU time: the pool's wake-ups and the waits), 104 tokens no
/// consistent difference. From 128 tokens on, the int8 matmuls split their tokens into
/// tasks of 64, so a fan-out has real work for each thread.
pub const PAR_MIN_TOKENS: usize = 128;

/// A dense layer without bias: f32 `[in, out]` weights (gemm), or int8 ones (VNNI kernel).
enum Linear {
    F32 { w: Vec<f32>, nin: usize, nout: usize },
    Int8(I8Matrix),
}

impl Linear {
    /// Load `[out, in]` Q4_0 matrices stacked along the output dimension, each with a factor
    /// on its weights.
    fn load(f: &E5File, parts: &[(&str, usize, f32)], n_in: usize, q4: bool) -> Result<Self, String> {
        if q4 {
            let blocks: Vec<(&[u8], usize, f32)> = parts
                .iter()
                .map(|&(name, n_out, s)| Ok((f.q4_tensor(name, n_out, n_in)?, n_out, s)))
                .collect::<Result<_, String>>()?;
            return Ok(Linear::Int8(I8Matrix::from_q4(&blocks, n_in)?));
        }
        // Each part is `[n_out_i, in]`; the result is `[in, sum n_out_i]`, row-major.
        let nout: usize = parts.iter().map(|p| p.1).sum();
        let mut w = vec![0f32; n_in * nout];
        let mut col = 0;
        for &(name, n_out, scale) in parts {
            let part = f.dequantized(name, n_out, n_in)?;
            for o in 0..n_out {
                for i in 0..n_in {
                    w[i * nout + col + o] = part[o * n_in + i] * scale;
                }
            }
            col += n_out;
        }
        Ok(Linear::F32 { w, nin: n_in, nout })
    }

    fn nout(&self) -> usize {
        match self {
            Linear::F32 { nout, .. } => *nout,
            Linear::Int8(m) => m.nout(),
        }
    }

    /// `y = x W (+ bias)` for `x` row-major `[tokens, in]` into `y` (`[tokens, out]`).
    fn forward_into(&self, x: &[f32], bias: Option<&[f32]>, y: &mut [f32], q8: &mut Q8, par: bool) {
        match self {
            Linear::Int8(m) => m.matmul_into(x, bias, y, q8, par),
            Linear::F32 { w, nin, nout } => {
                let tokens = x.len() / nin;
                assert!(x.len() == tokens * nin && y.len() == tokens * nout, "linear: bad shapes");
                let threads = if par { gemm::Parallelism::Rayon(0) } else { gemm::Parallelism::None };
                // SAFETY: `x` is `tokens x nin`, `w` is `nin x nout`, `y` is `tokens x nout`, all
                // row-major and contiguous, as the strides say.
                unsafe {
                    gemm::gemm(
                        tokens,
                        *nout,
                        *nin,
                        y.as_mut_ptr(),
                        1,
                        *nout as isize,
                        false,
                        x.as_ptr(),
                        1,
                        *nin as isize,
                        w.as_ptr(),
                        1,
                        *nout as isize,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        threads,
                    );
                }
                if let Some(b) = bias {
                    bias_add(y, b, par);
                }
            }
        }
    }
}

/// One encoder layer; biases are applied by the fused `ops` kernels.
struct Layer {
    qkv: Linear,
    qkv_b: Vec<f32>,
    attn_out: Linear,
    attn_norm: NormParams,
    inter: Linear,
    inter_b: Vec<f32>,
    out: Linear,
    out_norm: NormParams,
}

/// A loaded multilingual-e5 encoder. Immutable after loading: `Send + Sync`.
pub struct XlmrEncoder {
    header: E5Header,
    /// Q4_0 word-embedding table, `[vocab_rows, hidden]`.
    word_q4: Vec<u8>,
    /// Position rows (from position id 2) plus the token-type-0 row, `[max_positions, hidden]`.
    pos_type: Vec<f32>,
    emb_gamma: Vec<f32>,
    emb_beta: Vec<f32>,
    layers: Vec<Layer>,
    int8: bool,
}

/// Activation buffers of one forward pass, reused from layer to layer (no allocation, and
/// no page faults, per op).
#[derive(Default)]
struct Buffers {
    x: Vec<f32>,
    qkv: Vec<f32>,
    ctx: Vec<f32>,
    q8: Q8,
}

/// Tokens per tile of a layer's per-token part: 64 tokens' widest activations (the
/// intermediate layer, 64 x 1536 f32 = 384 KiB) stay in a core's L2 cache.
const TILE_TOKENS: usize = 64;

/// Scratch of one tile (per rayon task): the dense layers' outputs and quantised inputs.
#[derive(Default)]
struct Tile {
    tmp: Vec<f32>,
    inter: Vec<f32>,
    q8: Q8,
}

impl XlmrEncoder {
    /// Build the encoder from a parsed file: with int8 matmuls on weights re-expressed as
    /// int8 if `int8` (the caller checks [`I8Matrix::available`]), else f32 matmuls on dequantised
    /// weights.
    pub fn from_file(f: &E5File, int8: bool) -> Result<Self, String> {
        if int8 && !I8Matrix::available() {
            return Err("int8 matmuls need a CPU with AVX-512 VNNI".into());
        }
        let hd = f.header.clone();
        let (h, ff) = (hd.hidden, hd.intermediate);
        let word_q4 = f.q4_tensor("emb.word", hd.vocab_rows, h)?.to_vec();
        let mut pos_type = f.f32_tensor("emb.pos", hd.max_positions * h)?;
        let types = f.f32_tensor("emb.type", hd.type_rows * h)?;
        for row in pos_type.chunks_exact_mut(h) {
            row.iter_mut().zip(&types[..h]).for_each(|(p, t)| *p += t);
        }
        let emb_gamma = f.f32_tensor("emb.ln.w", h)?;
        let emb_beta = f.f32_tensor("emb.ln.b", h)?;
        let norm = |dense: &str, ln: &str, l: usize| -> Result<NormParams, String> {
            Ok(NormParams {
                bias: f.f32_tensor(&format!("l{l}.{dense}.b"), h)?,
                gamma: f.f32_tensor(&format!("l{l}.{ln}.w"), h)?,
                beta: f.f32_tensor(&format!("l{l}.{ln}.b"), h)?,
                eps: hd.eps,
            })
        };
        // Fold 1/sqrt(head_dim) into the query projection (weights and bias).
        let scale = 1.0 / ((h / hd.heads) as f32).sqrt();
        // Layers are re-expressed in parallel (~70 ms of the load on one core).
        let layers = (0..hd.layers)
            .into_par_iter()
            .map(|l| -> Result<Layer, String> {
                let p = |s: &str| format!("l{l}.{s}");
                let (qn, kn, vn) = (p("q.w"), p("k.w"), p("v.w"));
                let qkv = Linear::load(f, &[(&qn, h, scale), (&kn, h, 1.0), (&vn, h, 1.0)], h, int8)?;
                let mut qkv_b: Vec<f32> = f.f32_tensor(&p("q.b"), h)?.iter().map(|b| b * scale).collect();
                qkv_b.extend(f.f32_tensor(&p("k.b"), h)?);
                qkv_b.extend(f.f32_tensor(&p("v.b"), h)?);
                Ok(Layer {
                    qkv,
                    qkv_b,
                    attn_out: Linear::load(f, &[(&p("ao.w"), h, 1.0)], h, int8)?,
                    attn_norm: norm("ao", "aln", l)?,
                    inter: Linear::load(f, &[(&p("fi.w"), ff, 1.0)], h, int8)?,
                    inter_b: f.f32_tensor(&p("fi.b"), ff)?,
                    out: Linear::load(f, &[(&p("fo.w"), h, 1.0)], ff, int8)?,
                    out_norm: norm("fo", "oln", l)?,
                })
            })
            .collect::<Result<Vec<Layer>, String>>()?;
        Ok(XlmrEncoder { header: hd, word_q4, pos_type, emb_gamma, emb_beta, layers, int8 })
    }

    /// Whether the matmuls are int8 (else f32 on dequantised weights).
    pub fn int8(&self) -> bool {
        self.int8
    }

    /// Dimensions and constants of the model.
    pub fn header(&self) -> &E5Header {
        &self.header
    }

    /// Embedding layer for a packed batch: word + position + type rows, LayerNorm.
    fn embed_tokens(&self, ids: &[u32], lens: &[usize], par: bool) -> Vec<f32> {
        let h = self.header.hidden;
        let row_bytes = h / Q4_BLOCK * Q4_BLOCK_BYTES;
        let positions: Vec<usize> = lens.iter().flat_map(|&l| 0..l).collect();
        let mut x = vec![0f32; ids.len() * h];
        let rows = |c: usize, rows: &mut [f32]| {
            for (r, row) in rows.chunks_exact_mut(h).enumerate() {
                let t = c * 64 + r;
                let id = ids[t] as usize;
                dequantize_q4(&self.word_q4[id * row_bytes..(id + 1) * row_bytes], row);
                let pos = &self.pos_type[positions[t] * h..(positions[t] + 1) * h];
                row.iter_mut().zip(pos).for_each(|(x, p)| *x += p);
                layer_norm(row, &self.emb_gamma, &self.emb_beta, self.header.eps);
            }
        };
        if par {
            x.par_chunks_mut(h * 64).enumerate().for_each(|(c, r)| rows(c, r));
        } else {
            x.chunks_mut(h * 64).enumerate().for_each(|(c, r)| rows(c, r));
        }
        x
    }

    /// Run a packed batch and mean-pool it.
    ///
    /// `ids` holds the token ids of every sequence one after the other; `lens[i]` is the
    /// length of sequence `i` (`1..=max_positions`, summing to `ids.len()`). Returns one
    /// mean-pooled (not normalised) `hidden` vector per sequence.
    ///
    /// Batches of fewer than [`PAR_MIN_TOKENS`] tokens run on the calling thread only;
    /// larger ones on rayon. The vectors are the same either way (bit for bit).
    pub fn forward_mean_pooled(&self, ids: &[u32], lens: &[usize]) -> Result<Vec<Vec<f32>>, String> {
        let states = self.forward_states(ids, lens)?;
        Ok(mean_pool_rows(&states, lens, self.header.hidden))
    }

    /// Run a packed batch (as [`forward_mean_pooled`](Self::forward_mean_pooled)) and return
    /// the last layer's states, `[ids.len(), hidden]` row-major: what mean pooling averages.
    pub fn forward_states(&self, ids: &[u32], lens: &[usize]) -> Result<Vec<f32>, String> {
        let h = self.header.hidden;
        let limit = self.header.max_positions;
        if lens.iter().any(|&l| l == 0 || l > limit) || lens.iter().sum::<usize>() != ids.len() {
            return Err(format!("bad batch: {} ids, lens {lens:?} (each 1..={limit})", ids.len()));
        }
        if let Some(bad) = ids.iter().find(|&&i| i as usize >= self.header.vocab_rows) {
            return Err(format!("token id {bad} is outside the vocabulary ({})", self.header.vocab_rows));
        }
        if lens.is_empty() {
            return Ok(Vec::new());
        }
        let n = ids.len();
        let par = n >= PAR_MIN_TOKENS && rayon::current_num_threads() > 1;
        let (heads, dh) = (self.header.heads, h / self.header.heads);
        let mut b = Buffers { x: self.embed_tokens(ids, lens, par), ..Buffers::default() };
        let first = &self.layers[0];
        b.qkv.resize(n * first.qkv.nout(), 0.0);
        first.qkv.forward_into(&b.x, Some(&first.qkv_b), &mut b.qkv, &mut b.q8, par);
        b.ctx.resize(n * h, 0.0);
        for (l, layer) in self.layers.iter().enumerate() {
            attention(&b.qkv, lens, heads, dh, &mut b.ctx, par);
            // Everything after attention is per token: run it tile by tile, the next
            // layer's QKV projection included, so that a tile's activations stay in cache
            // from one op to the next (and a fan-out costs one join per layer, not six).
            let next = self.layers.get(l + 1);
            let qkv_w = b.qkv.len() / n;
            let tail = |t: &mut Tile, x: &mut [f32], ctx: &[f32], qkv: &mut [f32]| {
                self.token_tail(layer, next, t, x, ctx, qkv)
            };
            if par {
                let tiles =
                    b.x.par_chunks_mut(TILE_TOKENS * h)
                        .zip(b.ctx.par_chunks(TILE_TOKENS * h))
                        .zip(b.qkv.par_chunks_mut(TILE_TOKENS * qkv_w));
                tiles.for_each_init(Tile::default, |t, ((x, ctx), qkv)| tail(t, x, ctx, qkv));
            } else {
                let tiles =
                    b.x.chunks_mut(TILE_TOKENS * h)
                        .zip(b.ctx.chunks(TILE_TOKENS * h))
                        .zip(b.qkv.chunks_mut(TILE_TOKENS * qkv_w));
                let mut t = Tile::default();
                tiles.for_each(|((x, ctx), qkv)| tail(&mut t, x, ctx, qkv));
            }
        }
        Ok(b.x)
    }
}

impl XlmrEncoder {
    /// The per-token rest of `layer` after attention, on one tile of tokens: `x` (the
    /// layer's input, replaced by its output) and `ctx` (attention's output) are the tile's
    /// rows; with a `next` layer, its QKV projection of the new `x` goes into `qkv`.
    fn token_tail(
        &self,
        layer: &Layer,
        next: Option<&Layer>,
        t: &mut Tile,
        x: &mut [f32],
        ctx: &[f32],
        qkv: &mut [f32],
    ) {
        let rows = x.len() / self.header.hidden;
        t.tmp.resize(x.len(), 0.0);
        layer.attn_out.forward_into(ctx, None, &mut t.tmp, &mut t.q8, false);
        bias_residual_norm(&mut t.tmp, x, &layer.attn_norm, false);
        x.copy_from_slice(&t.tmp);
        t.inter.resize(rows * layer.inter.nout(), 0.0);
        layer.inter.forward_into(x, None, &mut t.inter, &mut t.q8, false);
        bias_gelu(&mut t.inter, &layer.inter_b, false);
        layer.out.forward_into(&t.inter, None, &mut t.tmp, &mut t.q8, false);
        bias_residual_norm(&mut t.tmp, x, &layer.out_norm, false);
        x.copy_from_slice(&t.tmp);
        if let Some(next) = next {
            next.qkv.forward_into(x, Some(&next.qkv_b), qkv, &mut t.q8, false);
        }
    }
}

/// In-place LayerNorm of one row.
fn layer_norm(row: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let n = row.len() as f32;
    let mean = row.iter().sum::<f32>() / n;
    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((x, g), b) in row.iter_mut().zip(gamma).zip(beta) {
        *x = (*x - mean) * inv * g + b;
    }
}
