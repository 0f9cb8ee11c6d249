"""A tanh-GELU large enough that re-checking a database answer in the
float64 interpreter would take most of a second (8 elementwise ops on
1 M elements: about 0.8 s by optimize's estimate)."""

import numpy as np

def wide_gelu(X: "f32[1024, 1024]"):
    return 0.5 * X * (1.0 + np.tanh(0.7978845608 * (X + 0.044715 * X * X * X)))
