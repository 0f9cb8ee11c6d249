"""LayerNorm over the last axis of a [batch, tokens, features] activation, with gain and bias."""

import numpy as np

def layernorm_3d(x: "f32[8, 512, 768]", g: "f32[768]", b: "f32[768]"):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b
