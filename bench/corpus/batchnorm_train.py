"""BatchNorm in training mode: per-channel statistics over axes (0, 2, 3) of NCHW, then normalise."""

import numpy as np

def batchnorm_train(x: "f32[16, 64, 32, 32]", g: "f32[1, 64, 1, 1]", b: "f32[1, 64, 1, 1]"):
    mu = np.mean(x, axis=(0, 2, 3), keepdims=True)
    d = x - mu
    var = np.mean(d * d, axis=(0, 2, 3), keepdims=True)
    return d / np.sqrt(var + 1e-5) * g + b
