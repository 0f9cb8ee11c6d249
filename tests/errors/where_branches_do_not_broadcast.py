# ERROR: 6:15: shapes bool[3], f32[4] and f32[3] do not broadcast
import numpy as np


def f(c: "bool[3]", x: "f32[4]", y: "f32[3]"):
    return np.where(c, x, y)
