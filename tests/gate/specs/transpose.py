"""Materialised transpose of a 70 x 90 matrix."""

import numpy as np


def transpose(X: "f32[70, 90]"):
    return np.ascontiguousarray(X.T)
