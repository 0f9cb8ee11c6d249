"""LayerNorm over the channel axis of an NCHW activation: mean and variance over axis 1, a reduction over a non-last axis."""

import numpy as np

def layernorm_axis1(x: "f32[16, 64, 32, 32]", g: "f32[1, 64, 1, 1]", b: "f32[1, 64, 1, 1]"):
    mu = np.mean(x, axis=1, keepdims=True)
    d = x - mu
    var = np.mean(d * d, axis=1, keepdims=True)
    return d / np.sqrt(var + 1e-5) * g + b
