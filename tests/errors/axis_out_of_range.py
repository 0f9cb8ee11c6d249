# ERROR: 6:27: axis 2 is out of bounds for array of dimension 2
import numpy as np


def f(x: "f32[3, 4]"):
    return np.sum(x, axis=2)
