"""Split a fused QKV projection into three along the features; return q * k summed per head and v scaled."""

import numpy as np

def split_qkv_scores(qkv: "f32[2048, 3, 8, 64]"):
    q, k, v = np.split(qkv, 3, axis=1)
    s = np.sum(q * k, axis=-1)
    return s, v * 0.125
