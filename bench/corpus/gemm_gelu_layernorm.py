"""A projection with a bias, GELU (tanh form), then LayerNorm over each output row."""

import numpy as np

def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

def gemm_gelu_layernorm(x: "f32[512, 768]", w: "f32[768, 768]", b: "f32[768]", g: "f32[768]", beta: "f32[768]"):
    h = gelu(x @ w + b)
    mu = np.mean(h, axis=-1, keepdims=True)
    var = np.var(h, axis=-1, keepdims=True)
    return (h - mu) / np.sqrt(var + 1e-5) * g + beta
