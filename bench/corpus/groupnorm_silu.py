"""GroupNorm written on the NCHW tensor by a reshape into [N, G, C/G, H, W], then SiLU, as a diffusion block does."""

import numpy as np

def groupnorm_silu(x: "f32[4, 128, 32, 32]", g: "f32[1, 128, 1, 1]", b: "f32[1, 128, 1, 1]"):
    y = np.reshape(x, (4, 32, 4, 32, 32))
    mu = np.mean(y, axis=(2, 3, 4), keepdims=True)
    var = np.var(y, axis=(2, 3, 4), keepdims=True)
    y = np.reshape((y - mu) / np.sqrt(var + 1e-5), (4, 128, 32, 32)) * g + b
    return y / (1.0 + np.exp(-y))
