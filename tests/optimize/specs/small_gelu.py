"""A small tanh-GELU for the optimize tests."""

import numpy as np

def small_gelu(X: "f32[128, 256]"):
    return 0.5 * X * (1.0 + np.tanh(0.7978845608 * (X + 0.044715 * X * X * X)))
