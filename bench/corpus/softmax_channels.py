"""Softmax over the channel axis of NCHW (per pixel, as a segmentation head)."""

import numpy as np

def softmax_channels(x: "f32[8, 32, 64, 64]"):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)
