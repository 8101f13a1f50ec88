//! A BERT encoder forward pass (inference only) on candle's CPU backend.
//!
//! Written against `candle-core`/`candle-nn` directly (no `candle-transformers`). It covers
//! the BERT family as found in sentence-embedding checkpoints: word + position + token-type
//! embeddings and post-LayerNorm encoder layers with a GELU feed-forward. The pooler head is
//! not loaded (sentence embedders pool the last hidden state themselves).
//!
//! Batches are packed, not padded: the tokens of all sequences are stacked into one
//! `(total_tokens, hidden)` matrix, so the dense layers do no work on padding, and attention
//! runs per sequence over its own tokens only (no mask needed). The non-matmul steps are
//! fused, in-place, multi-threaded kernels (module `ops`).
//!
//! Load-time rewrites that keep the maths identical but save work per call:
//! - query, key and value projections are fused into one `[hidden, 3*hidden]` matmul;
//! - the `1/sqrt(head_dim)` attention scale is folded into the query weights and bias;
//! - every weight is stored pre-transposed and contiguous (`x @ W` with a row-major `W`);
//! - the token-type-0 embedding is added into the position table once.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::ops::layer_norm;
use serde::Deserialize;

use crate::attention::Attention;
use crate::ops::{BiasAdd, BiasGelu, BiasResidualNorm, NormParams};

/// The subset of a Hugging Face `config.json` that the forward pass needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    /// Vocabulary size (rows of the word-embedding table).
    pub vocab_size: usize,
    /// Width of every hidden state.
    pub hidden_size: usize,
    /// Number of encoder layers.
    pub num_hidden_layers: usize,
    /// Number of attention heads per layer.
    pub num_attention_heads: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// Activation of the feed-forward layer (`gelu` = exact erf GELU).
    #[serde(default = "default_act")]
    pub hidden_act: String,
    /// Rows of the position-embedding table.
    pub max_position_embeddings: usize,
    /// Epsilon of every LayerNorm.
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    /// `bert`, or `roberta`/`xlm-roberta` (positions then start after the pad id).
    #[serde(default)]
    pub model_type: String,
    /// Padding token id (also the position offset of RoBERTa-style models).
    #[serde(default)]
    pub pad_token_id: usize,
}

fn default_act() -> String {
    "gelu".into()
}
fn default_eps() -> f64 {
    1e-12
}

impl BertConfig {
    /// Parse `config.json`.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let cfg: BertConfig = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if cfg.num_attention_heads == 0 || !cfg.hidden_size.is_multiple_of(cfg.num_attention_heads) {
            return Err(format!(
                "{}: hidden_size {} is not a multiple of num_attention_heads {}",
                path.display(),
                cfg.hidden_size,
                cfg.num_attention_heads
            ));
        }
        Ok(cfg)
    }

    /// First position id: 0 for BERT, `pad_token_id + 1` for RoBERTa-style models.
    pub fn position_offset(&self) -> usize {
        match self.model_type.as_str() {
            "roberta" | "xlm-roberta" | "camembert" => self.pad_token_id + 1,
            _ => 0,
        }
    }

    /// Longest sequence (in tokens, specials included) the position table allows.
    pub fn max_tokens(&self) -> usize {
        self.max_position_embeddings.saturating_sub(self.position_offset())
    }
}

#[derive(Debug, Clone, Copy)]
enum Act {
    GeluErf,
    GeluTanh,
    Relu,
}

/// Embedding LayerNorm (candle's fused kernel).
struct Norm {
    w: Tensor,
    b: Tensor,
    eps: f32,
}

impl Norm {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        layer_norm(x, &self.w, &self.b, self.eps)
    }
}

/// One encoder layer. Weights are `[in, out]`, contiguous; biases are applied by the fused
/// kernels of [`crate::ops`].
struct Layer {
    qkv_w: Tensor,
    qkv_b: Vec<f32>,
    attn_out_w: Tensor,
    /// Attention output bias + LayerNorm.
    attn_norm: NormParams,
    inter_w: Tensor,
    inter_b: Vec<f32>,
    out_w: Tensor,
    /// Output bias + LayerNorm.
    out_norm: NormParams,
}

/// A loaded BERT encoder. Immutable after loading, so `Send + Sync` and shareable.
pub struct Bert {
    cfg: BertConfig,
    act: Act,
    word: Tensor,
    /// Position table (from `position_offset`) plus the token-type-0 row.
    pos_type: Tensor,
    emb_norm: Norm,
    layers: Vec<Layer>,
    device: Device,
}

/// Tensor lookup that accepts the bare names as well as `bert.`/`roberta.`-prefixed ones.
struct Weights(HashMap<String, Tensor>);

impl Weights {
    fn get(&self, name: &str) -> Result<Tensor, String> {
        for prefix in ["", "bert.", "roberta.", "model."] {
            if let Some(t) = self.0.get(&format!("{prefix}{name}")) {
                return t.to_dtype(DType::F32).map_err(|e| format!("{name}: {e}"));
            }
        }
        Err(format!("tensor {name} not found in the weights file"))
    }

    fn get_shape(&self, name: &str, shape: &[usize]) -> Result<Tensor, String> {
        let t = self.get(name)?;
        if t.dims() != shape {
            return Err(format!("tensor {name} has shape {:?}, expected {shape:?}", t.dims()));
        }
        Ok(t)
    }

    fn vec(&self, name: &str, n: usize) -> Result<Vec<f32>, String> {
        self.get_shape(name, &[n])?.to_vec1::<f32>().map_err(ce)
    }

    /// A PyTorch `[out, in]` linear layer as (`[out, in]` weight, bias).
    fn linear(&self, name: &str, n_in: usize, n_out: usize) -> Result<(Tensor, Vec<f32>), String> {
        let w = self.get_shape(&format!("{name}.weight"), &[n_out, n_in])?;
        Ok((w, self.vec(&format!("{name}.bias"), n_out)?))
    }

    /// Bias of the dense layer `dense` followed by the LayerNorm `norm`.
    fn norm_params(&self, dense: &str, norm: &str, n: usize, eps: f64) -> Result<NormParams, String> {
        Ok(NormParams {
            bias: self.vec(&format!("{dense}.bias"), n)?,
            gamma: self.vec(&format!("{norm}.weight"), n)?,
            beta: self.vec(&format!("{norm}.bias"), n)?,
            eps: eps as f32,
        })
    }
}

/// `[out, in]` -> contiguous `[in, out]`, so that a layer is `x.matmul(w)`.
fn transposed(w: &Tensor) -> Result<Tensor, String> {
    w.t().and_then(|t| t.contiguous()).map_err(ce)
}

fn ce(e: candle_core::Error) -> String {
    e.to_string()
}

impl Bert {
    /// Load the encoder from a safetensors file (F32/F16/BF16 weights, computed in F32).
    pub fn load(weights: &Path, cfg: BertConfig) -> Result<Self, String> {
        let device = Device::Cpu;
        let act = match cfg.hidden_act.as_str() {
            "gelu" => Act::GeluErf,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Act::GeluTanh,
            "relu" => Act::Relu,
            other => return Err(format!("unsupported hidden_act {other:?}")),
        };
        let map =
            candle_core::safetensors::load(weights, &device).map_err(|e| format!("{}: {e}", weights.display()))?;
        let w = Weights(map);
        let h = cfg.hidden_size;
        let eps = cfg.layer_norm_eps;
        let word = w.get_shape("embeddings.word_embeddings.weight", &[cfg.vocab_size, h])?;
        let pos = w.get("embeddings.position_embeddings.weight")?;
        if pos.dims() != [cfg.max_position_embeddings, h] {
            return Err(format!("position table has shape {:?}", pos.dims()));
        }
        let tt = w.get("embeddings.token_type_embeddings.weight")?;
        let offset = cfg.position_offset();
        let pos_type = pos
            .narrow(0, offset, cfg.max_tokens())
            .and_then(|p| p.broadcast_add(&tt.get(0)?))
            .and_then(|p| p.contiguous())
            .map_err(ce)?;
        let emb_norm = Norm {
            w: w.get_shape("embeddings.LayerNorm.weight", &[h])?,
            b: w.get_shape("embeddings.LayerNorm.bias", &[h])?,
            eps: eps as f32,
        };

        let scale = 1.0 / ((h / cfg.num_attention_heads) as f64).sqrt();
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let (qw, mut qkv_b) = w.linear(&format!("{p}.attention.self.query"), h, h)?;
            let (kw, kb) = w.linear(&format!("{p}.attention.self.key"), h, h)?;
            let (vw, vb) = w.linear(&format!("{p}.attention.self.value"), h, h)?;
            let qw = (qw * scale).map_err(ce)?;
            qkv_b.iter_mut().for_each(|x| *x *= scale as f32);
            qkv_b.extend(kb.into_iter().chain(vb));
            let qkv_w = transposed(&Tensor::cat(&[&qw, &kw, &vw], 0).map_err(ce)?)?;
            let dense = format!("{p}.attention.output.dense");
            let (ow, _) = w.linear(&dense, h, h)?;
            let attn_norm = w.norm_params(&dense, &format!("{p}.attention.output.LayerNorm"), h, eps)?;
            let (iw, inter_b) = w.linear(&format!("{p}.intermediate.dense"), h, cfg.intermediate_size)?;
            let dense = format!("{p}.output.dense");
            let (fw, _) = w.linear(&dense, cfg.intermediate_size, h)?;
            let out_norm = w.norm_params(&dense, &format!("{p}.output.LayerNorm"), h, eps)?;
            layers.push(Layer {
                qkv_w,
                qkv_b,
                attn_out_w: transposed(&ow)?,
                attn_norm,
                inter_w: transposed(&iw)?,
                inter_b,
                out_w: transposed(&fw)?,
                out_norm,
            });
        }
        Ok(Bert { cfg, act, word, pos_type, emb_norm, layers, device })
    }

    /// The configuration the encoder was loaded with.
    pub fn config(&self) -> &BertConfig {
        &self.cfg
    }

    /// Run a packed batch and mean-pool it.
    ///
    /// `ids` holds the token ids of every sequence, one after the other; `lens[i]` is the
    /// length of sequence `i` (`1..=max_tokens`, summing to `ids.len()`). Returns one
    /// mean-pooled (not yet normalised) `hidden_size` vector per sequence.
    pub fn forward_mean_pooled(&self, ids: &[u32], lens: &[usize]) -> candle_core::Result<Vec<Vec<f32>>> {
        let h = self.cfg.hidden_size;
        let nh = self.cfg.num_attention_heads;
        let dh = h / nh;
        let limit = self.cfg.max_tokens();
        if lens.iter().any(|&l| l == 0 || l > limit) || lens.iter().sum::<usize>() != ids.len() {
            candle_core::bail!("bad batch: {} ids, lens {lens:?} (each 1..={limit})", ids.len());
        }
        if let Some(bad) = ids.iter().find(|&&i| i as usize >= self.cfg.vocab_size) {
            candle_core::bail!("token id {bad} is outside the vocabulary ({})", self.cfg.vocab_size);
        }
        if lens.is_empty() {
            return Ok(Vec::new());
        }
        let n = ids.len();

        // Embeddings: word + (position + token type 0), then LayerNorm. Shape (n, h).
        let positions: Vec<u32> = lens.iter().flat_map(|&l| 0..l as u32).collect();
        let ids_t = Tensor::from_slice(ids, (n,), &self.device)?;
        let pos_t = Tensor::from_vec(positions, (n,), &self.device)?;
        let x = (self.word.index_select(&ids_t, 0)? + self.pos_type.index_select(&pos_t, 0)?)?;
        let mut x = self.emb_norm.forward(&x)?;

        let attention = Attention { lens, heads: nh, head_dim: dh };
        for layer in &self.layers {
            let qkv = x.matmul(&layer.qkv_w)?; // (n, 3h)
            qkv.inplace_op1(&BiasAdd(&layer.qkv_b))?;
            let ctx = qkv.apply_op1_no_bwd(&attention)?; // (n, h)
            let attn = ctx.matmul(&layer.attn_out_w)?;
            attn.inplace_op2(&x, &BiasResidualNorm(&layer.attn_norm))?;
            x = attn;
            let mut inter = x.matmul(&layer.inter_w)?; // (n, intermediate)
            match self.act {
                Act::GeluErf => inter.inplace_op1(&BiasGelu(&layer.inter_b))?,
                Act::GeluTanh | Act::Relu => {
                    inter.inplace_op1(&BiasAdd(&layer.inter_b))?;
                    inter = if let Act::Relu = self.act { inter.relu()? } else { inter.gelu()? };
                }
            }
            let out = inter.matmul(&layer.out_w)?;
            out.inplace_op2(&x, &BiasResidualNorm(&layer.out_norm))?;
            x = out;
        }

        // Mean pooling over each sequence's tokens.
        crate::ops::mean_pool(&x, lens, h)
    }
}
