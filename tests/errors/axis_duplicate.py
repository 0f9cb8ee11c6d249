# ERROR: 6:27: duplicate value in 'axis'
import numpy as np


def f(x: "f32[3, 4]"):
    return np.sum(x, axis=(0, 0))
