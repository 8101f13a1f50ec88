#!/usr/bin/env python3
"""Independent NumPy reference of the all-MiniLM-L6-v2 sentence embedding.

Usage: reference_minilm.py MODEL_DIR < token_ids.json > embeddings.json

stdin is a JSON list of token-id lists ([CLS] ... [SEP], as produced by the tokenizer);
stdout is a JSON list of L2-normalised, mean-pooled 384-float vectors. Each sequence is
run on its own (no padding), in float64, straight from the safetensors file (parsed here
by hand, so no dependency but NumPy) and config.json, following the Hugging Face BertModel
definition: embeddings -> LayerNorm -> N x [self-attention -> dense -> residual LayerNorm
-> GELU(erf) intermediate -> dense -> residual LayerNorm] -> mean pool -> L2.
"""
import json
import math
import os
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64}


def load_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        arr = np.frombuffer(data[start:end], dtype=DTYPES[info["dtype"]])
        out[name] = arr.reshape(info["shape"]).astype(np.float64)
    return out


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def embed(ids, W, cfg):
    h = cfg["hidden_size"]
    nh = cfg["num_attention_heads"]
    dh = h // nh
    eps = cfg["layer_norm_eps"]
    t = len(ids)
    x = (
        W["embeddings.word_embeddings.weight"][ids]
        + W["embeddings.position_embeddings.weight"][:t]
        + W["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)

    def lin(name, v):
        return v @ W[name + ".weight"].T + W[name + ".bias"]

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q = lin(p + "attention.self.query", x).reshape(t, nh, dh).transpose(1, 0, 2)
        k = lin(p + "attention.self.key", x).reshape(t, nh, dh).transpose(1, 0, 2)
        v = lin(p + "attention.self.value", x).reshape(t, nh, dh).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
        s = s - s.max(-1, keepdims=True)
        a = np.exp(s)
        a = a / a.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(1, 0, 2).reshape(t, h)
        x = layer_norm(
            lin(p + "attention.output.dense", ctx) + x,
            W[p + "attention.output.LayerNorm.weight"],
            W[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        inter = gelu(lin(p + "intermediate.dense", x))
        x = layer_norm(
            lin(p + "output.dense", inter) + x,
            W[p + "output.LayerNorm.weight"],
            W[p + "output.LayerNorm.bias"],
            eps,
        )
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main():
    model_dir = sys.argv[1]
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    W = load_safetensors(os.path.join(model_dir, "model.safetensors"))
    seqs = json.load(sys.stdin)
    json.dump([embed(np.array(s, dtype=np.int64), W, cfg).tolist() for s in seqs], sys.stdout)


if __name__ == "__main__":
    main()
