"""LayerNorm of rows that sit far from zero (mean about 1000, spread about
1): any variance formula that cancels, such as E[x^2] - E[x]^2, loses every
significant digit here, whatever the input distribution."""

import numpy as np


def layernorm_offset(X: "f32[48, 160]", gamma: "f32[160]", beta: "f32[160]"):
    Y = X + 1000.0
    mu = np.mean(Y, axis=-1, keepdims=True)
    var = np.mean((Y - mu) ** 2, axis=-1, keepdims=True)
    return (Y - mu) / np.sqrt(var + 1e-5) * gamma + beta
