# ERROR: 10:12: scale() missing 1 required positional argument: 'b'
import numpy as np


def scale(a, b):
    return a * b


def f(x: "f32[3]"):
    return scale(x)
