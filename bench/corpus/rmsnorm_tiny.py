"""RMSNorm of a tiny batch (8 KB): a call dominated by its fixed costs."""

import numpy as np

def rmsnorm_tiny(x: "f32[8, 256]", g: "f32[256]"):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g
