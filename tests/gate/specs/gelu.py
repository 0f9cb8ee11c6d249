"""GELU, tanh approximation, elementwise over 100 x 130."""

import numpy as np


def gelu(X: "f32[100, 130]"):
    return 0.5 * X * (1.0 + np.tanh(0.7978845608028654 * (X + 0.044715 * X * X * X)))
