"""Materialised transpose of a square matrix: a plain copy has the right
shape and must still be rejected."""

import numpy as np


def transpose_square(X: "f32[64, 64]"):
    return np.ascontiguousarray(X.T)
