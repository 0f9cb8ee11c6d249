# ERROR: 6:30: out of bounds
import numpy as np


def f(x: "f32[3, 4]"):
    return np.swapaxes(x, 0, 2)
