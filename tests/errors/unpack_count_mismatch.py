# ERROR: 6:5: too many values to unpack (expected 2, got 3)
import numpy as np


def f(x: "f32[3, 4, 5]"):
    M, N = x.shape
    return x * M
