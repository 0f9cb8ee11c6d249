"""GroupNorm: 8 groups of 8 channels, statistics over (channel, H, W) of a group."""

import numpy as np

def groupnorm(x: "f32[16, 8, 8, 1024]", gamma: "f32[1, 8, 8, 1]", beta: "f32[1, 8, 8, 1]"):
    mu = np.mean(x, axis=(2, 3), keepdims=True)
    d = x - mu
    var = np.mean(d * d, axis=(2, 3), keepdims=True)
    return d / np.sqrt(var + 1e-5) * gamma + beta
