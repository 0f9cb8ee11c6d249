"""SiLU (swish), elementwise over 100 x 130."""

import numpy as np


def silu(X: "f32[100, 130]"):
    return X / (1.0 + np.exp(-X))
