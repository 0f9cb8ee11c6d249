"""logsumexp over axis 0 (down the columns) of a matrix: a reduction over the non-contiguous axis."""

import numpy as np

def logsumexp_axis0(x: "f32[2048, 2048]"):
    m = np.max(x, axis=0, keepdims=True)
    return np.log(np.sum(np.exp(x - m), axis=0, keepdims=True)) + m
