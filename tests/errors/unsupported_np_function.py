# ERROR: 6:15: unsupported: np.cumsum is not supported
import numpy as np


def f(x: "f32[3]"):
    return np.cumsum(x)
