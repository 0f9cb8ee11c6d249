"""Cosine similarity of paired rows: three row reductions and a quotient."""

import numpy as np

def cosine_similarity(a: "f32[8192, 512]", b: "f32[8192, 512]"):
    dot = np.sum(a * b, axis=-1)
    na = np.sqrt(np.sum(a * a, axis=-1))
    nb = np.sqrt(np.sum(b * b, axis=-1))
    return dot / np.maximum(na * nb, 1e-8)
