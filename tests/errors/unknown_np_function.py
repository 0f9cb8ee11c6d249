# ERROR: 6:15: np.frobnicate
import numpy as np


def f(x: "f32[3]"):
    return np.frobnicate(x)
