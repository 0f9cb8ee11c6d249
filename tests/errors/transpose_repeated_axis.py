# ERROR: 6:15: repeated axis in transpose
import numpy as np


def f(x: "f32[3, 4]"):
    return np.transpose(x, (0, 0))
