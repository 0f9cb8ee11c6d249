# ERROR: 7:5: unsupported: for loops
import numpy as np


def f(x: "f32[3]"):
    y = x
    for i in range(3):
        y = y + x
    return y
