# ERROR: 10:12: scale() takes 2 positional arguments but 3 were given
import numpy as np


def scale(a, b):
    return a * b


def f(x: "f32[3]"):
    return scale(x, x, x)
