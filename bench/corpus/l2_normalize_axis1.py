"""L2 normalisation of a [batch, channels, length] tensor over its channel axis."""

import numpy as np

def l2_normalize_axis1(x: "f32[32, 128, 256]"):
    n = np.sqrt(np.sum(x * x, axis=1, keepdims=True))
    return x / np.maximum(n, 1e-12)
