"""RMSNorm over the last axis with a learned scale g."""

import numpy as np


def rmsnorm(X: "f32[48, 160]", g: "f32[160]"):
    return X * (1.0 / np.sqrt(np.mean(X * X, axis=-1, keepdims=True) + 1e-6)) * g
