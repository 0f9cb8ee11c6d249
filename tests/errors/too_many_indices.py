# ERROR: 6:13: too many indices for array: array is 2-dimensional, but 3 were indexed
import numpy as np


def f(x: "f32[3, 4]"):
    return x[1, 2, 3]
