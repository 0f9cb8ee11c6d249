# ERROR: 6:18: array split does not result in an equal division
import numpy as np


def f(x: "f32[4, 3]"):
    a, b, c = np.split(x, 3)
    return a
