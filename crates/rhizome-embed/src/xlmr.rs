//! The XLM-R (BERT-architecture) encoder of multilingual-e5-small, loaded from an `E5S1`
//! file (see [`crate::e5_file`]).
//!
//! The forward pass is the one of [`crate::bert`]: packed batches (no padding), a fused QKV
//! projection with `1/sqrt(head_dim)` folded into the query weights, and the fused kernels of
//! `ops` (bias+GELU, bias+residual+LayerNorm, per-sequence attention). The dense layers run
//! either as f32 gemm on weights dequantised once at load time, or as int8 x int4 matmuls on
//! the 4-bit weights ([`crate::q8q4`], AVX-512 VNNI); see [`crate::e5::E5Matmul`].
//!
//! The word-embedding table (250k rows, 3/4 of the file) stays 4-bit: rows are dequantised
//! as tokens are looked up, which keeps the resident model at ~80 MB (int8 matmuls) or
//! ~140 MB (f32) instead of ~470 MB.
//! Positions follow XLM-R (ids start at `padding_idx + 1 = 2`; the file's table already
//! starts there) and the single token type 0 is added to every token.

use candle_core::{Device, Tensor};
use rayon::prelude::*;

use crate::e5_file::{dequantize_q4, E5File, E5Header, Q4_BLOCK, Q4_BLOCK_BYTES};
use crate::ops::{Attention, BiasAdd, BiasGelu, BiasResidualNorm, NormParams};
use crate::q8q4::Q4Matrix;

/// A dense layer without bias: f32 `[in, out]` weights (gemm), or 4-bit ones (int8 kernel).
enum Linear {
    F32(Tensor),
    Q4(Q4Matrix),
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
            return Ok(Linear::Q4(Q4Matrix::from_q4(&blocks, n_in)?));
        }
        let ts: Vec<Tensor> =
            parts.iter().map(|&(name, n_out, s)| linear(f, name, n_out, n_in, s)).collect::<Result<_, _>>()?;
        Ok(Linear::F32(Tensor::cat(&ts, 1).and_then(|t| t.contiguous()).map_err(ce)?))
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Linear::F32(w) => x.matmul(w),
            Linear::Q4(m) => x.apply_op1_no_bwd(m),
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
    device: Device,
}

fn ce(e: candle_core::Error) -> String {
    e.to_string()
}

/// A Q4_0 `[out, in]` matrix as a contiguous f32 `[in, out]` tensor, each row scaled.
fn linear(f: &E5File, name: &str, n_out: usize, n_in: usize, scale: f32) -> Result<Tensor, String> {
    let mut w = f.dequantized(name, n_out, n_in)?;
    if scale != 1.0 {
        w.iter_mut().for_each(|x| *x *= scale);
    }
    Tensor::from_vec(w, (n_out, n_in), &Device::Cpu)
        .and_then(|t| t.t()?.contiguous())
        .map_err(ce)
}

impl XlmrEncoder {
    /// Build the encoder from a parsed file: with int8 x int4 matmuls on the 4-bit weights
    /// if `int8` (the caller checks [`Q4Matrix::available`]), else f32 matmuls on dequantised
    /// weights.
    pub fn from_file(f: &E5File, int8: bool) -> Result<Self, String> {
        if int8 && !Q4Matrix::available() {
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
        let mut layers = Vec::with_capacity(hd.layers);
        for l in 0..hd.layers {
            let p = |s: &str| format!("l{l}.{s}");
            let (qn, kn, vn) = (p("q.w"), p("k.w"), p("v.w"));
            let qkv = Linear::load(f, &[(&qn, h, scale), (&kn, h, 1.0), (&vn, h, 1.0)], h, int8)?;
            let mut qkv_b: Vec<f32> = f.f32_tensor(&p("q.b"), h)?.iter().map(|b| b * scale).collect();
            qkv_b.extend(f.f32_tensor(&p("k.b"), h)?);
            qkv_b.extend(f.f32_tensor(&p("v.b"), h)?);
            layers.push(Layer {
                qkv,
                qkv_b,
                attn_out: Linear::load(f, &[(&p("ao.w"), h, 1.0)], h, int8)?,
                attn_norm: norm("ao", "aln", l)?,
                inter: Linear::load(f, &[(&p("fi.w"), ff, 1.0)], h, int8)?,
                inter_b: f.f32_tensor(&p("fi.b"), ff)?,
                out: Linear::load(f, &[(&p("fo.w"), h, 1.0)], ff, int8)?,
                out_norm: norm("fo", "oln", l)?,
            });
        }
        Ok(XlmrEncoder { header: hd, word_q4, pos_type, emb_gamma, emb_beta, layers, int8, device: Device::Cpu })
    }

    /// Whether the matmuls are int8 x int4 (else f32 on dequantised weights).
    pub fn int8(&self) -> bool {
        self.int8
    }

    /// Dimensions and constants of the model.
    pub fn header(&self) -> &E5Header {
        &self.header
    }

    /// Embedding layer for a packed batch: word + position + type rows, LayerNorm.
    fn embed_tokens(&self, ids: &[u32], lens: &[usize]) -> Vec<f32> {
        let h = self.header.hidden;
        let row_bytes = h / Q4_BLOCK * Q4_BLOCK_BYTES;
        let positions: Vec<usize> = lens.iter().flat_map(|&l| 0..l).collect();
        let mut x = vec![0f32; ids.len() * h];
        x.par_chunks_mut(h * 64).enumerate().for_each(|(c, rows)| {
            for (r, row) in rows.chunks_exact_mut(h).enumerate() {
                let t = c * 64 + r;
                let id = ids[t] as usize;
                dequantize_q4(&self.word_q4[id * row_bytes..(id + 1) * row_bytes], row);
                let pos = &self.pos_type[positions[t] * h..(positions[t] + 1) * h];
                row.iter_mut().zip(pos).for_each(|(x, p)| *x += p);
                layer_norm(row, &self.emb_gamma, &self.emb_beta, self.header.eps);
            }
        });
        x
    }

    /// Run a packed batch and mean-pool it.
    ///
    /// `ids` holds the token ids of every sequence one after the other; `lens[i]` is the
    /// length of sequence `i` (`1..=max_positions`, summing to `ids.len()`). Returns one
    /// mean-pooled (not normalised) `hidden` vector per sequence.
    pub fn forward_mean_pooled(&self, ids: &[u32], lens: &[usize]) -> candle_core::Result<Vec<Vec<f32>>> {
        let h = self.header.hidden;
        let limit = self.header.max_positions;
        if lens.iter().any(|&l| l == 0 || l > limit) || lens.iter().sum::<usize>() != ids.len() {
            candle_core::bail!("bad batch: {} ids, lens {lens:?} (each 1..={limit})", ids.len());
        }
        if let Some(bad) = ids.iter().find(|&&i| i as usize >= self.header.vocab_rows) {
            candle_core::bail!("token id {bad} is outside the vocabulary ({})", self.header.vocab_rows);
        }
        if lens.is_empty() {
            return Ok(Vec::new());
        }
        let n = ids.len();
        let mut x = Tensor::from_vec(self.embed_tokens(ids, lens), (n, h), &self.device)?;
        let attention = Attention { lens, heads: self.header.heads, head_dim: h / self.header.heads };
        for layer in &self.layers {
            let qkv = layer.qkv.forward(&x)?; // (n, 3h)
            qkv.inplace_op1(&BiasAdd(&layer.qkv_b))?;
            let ctx = qkv.apply_op1_no_bwd(&attention)?; // (n, h)
            let attn = layer.attn_out.forward(&ctx)?;
            attn.inplace_op2(&x, &BiasResidualNorm(&layer.attn_norm))?;
            x = attn;
            let inter = layer.inter.forward(&x)?; // (n, intermediate)
            inter.inplace_op1(&BiasGelu(&layer.inter_b))?;
            let out = layer.out.forward(&inter)?;
            out.inplace_op2(&x, &BiasResidualNorm(&layer.out_norm))?;
            x = out;
        }
        crate::ops::mean_pool(&x, lens, h)
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
