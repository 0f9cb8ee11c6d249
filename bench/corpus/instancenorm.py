"""InstanceNorm: statistics of each (sample, channel) plane, over axes (2, 3) of NCHW, then a per-channel affine."""

import numpy as np

def instancenorm(x: "f32[8, 32, 64, 64]", g: "f32[1, 32, 1, 1]", b: "f32[1, 32, 1, 1]"):
    mu = np.mean(x, axis=(2, 3), keepdims=True)
    var = np.var(x, axis=(2, 3), keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b
