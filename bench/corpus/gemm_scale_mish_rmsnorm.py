"""A matrix product, a scale, Mish and an RMSNorm of each row."""

import numpy as np

def gemm_scale_mish_rmsnorm(x: "f32[256, 1024]", w: "f32[1024, 1024]", g: "f32[1024]"):
    y = (x @ w) * 0.125
    y = y * np.tanh(np.log(1.0 + np.exp(y)))
    return y / np.sqrt(np.mean(y * y, axis=-1, keepdims=True) + 1e-6) * g
