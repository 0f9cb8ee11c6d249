# ERROR: 6:15: all input arrays must have the same shape
import numpy as np


def f(a: "f32[2, 3]", b: "f32[3, 2]"):
    return np.stack([a, b])
