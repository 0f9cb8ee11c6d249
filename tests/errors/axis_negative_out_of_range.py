# ERROR: 6:27: axis -3 is out of bounds for array of dimension 2
import numpy as np


def f(x: "f32[3, 4]"):
    return np.max(x, axis=-3)
