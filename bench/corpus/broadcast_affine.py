"""Broadcasting of three shapes: [B, 1, D] * [1, T, D] + [B, T, 1], then tanh."""

import numpy as np

def broadcast_affine(a: "f32[32, 1, 1024]", b: "f32[1, 512, 1024]", c: "f32[32, 512, 1]"):
    return np.tanh(a * b + c)
