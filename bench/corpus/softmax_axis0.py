"""Softmax down the columns (over axis 0)."""

import numpy as np

def softmax_axis0(x: "f32[2048, 1024]"):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)
