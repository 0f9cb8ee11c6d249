# ERROR: 6:14: shapes f32[3, 4] and f32[3] do not broadcast
import numpy as np


def scale(a, b):
    return a * b


def f(x: "f32[3, 4]", y: "f32[3]"):
    return scale(x, y)
