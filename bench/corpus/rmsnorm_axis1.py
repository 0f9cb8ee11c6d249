"""RMSNorm over the channel axis of an NCHW activation (a reduction over a non-last axis)."""

import numpy as np

def rmsnorm_axis1(x: "f32[16, 64, 32, 32]", g: "f32[1, 64, 1, 1]"):
    ms = np.mean(x * x, axis=1, keepdims=True)
    return x / np.sqrt(ms + 1e-5) * g
