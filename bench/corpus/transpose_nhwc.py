"""NCHW to NHWC: np.transpose(x, (0, 2, 3, 1))."""

import numpy as np

def transpose_nhwc(x: "f32[16, 64, 32, 32]"):
    return np.transpose(x, (0, 2, 3, 1))
