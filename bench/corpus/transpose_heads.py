"""Split heads: [B, T, H, D] -> [B, H, T, D] with np.transpose(x, axes), scaled."""

import numpy as np

def transpose_heads(x: "f32[8, 512, 16, 64]"):
    return np.transpose(x, (0, 2, 1, 3)) * 0.125
