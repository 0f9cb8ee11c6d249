# ERROR: 6:21: bool
import numpy as np


def f(x: "f32[3]", y: "f32[3]"):
    return np.where(x, x, y)
