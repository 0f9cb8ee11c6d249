# A spec file for axon.optimize(path, ...): the same computation as
# tests/python/specs_as_functions.py's scale_rows.
import numpy as np


def scale_rows(x: "f32[N, 64]", w: "f32[64]"):
    return np.tanh(x * w) + 1.0
