"""GLU: split the features in two halves, a * sigmoid(b)."""

import numpy as np

def split_glu(x: "f32[4096, 2048]"):
    a, b = np.split(x, 2, axis=-1)
    return a / (1.0 + np.exp(-b))
