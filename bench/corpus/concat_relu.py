"""Concatenation of two feature blocks along the last axis, then a ReLU."""

import numpy as np

def concat_relu(a: "f32[4096, 384]", b: "f32[4096, 640]"):
    return np.maximum(np.concatenate([a, b], axis=-1), 0.0)
