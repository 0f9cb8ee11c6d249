# ERROR: 6:12: is not callable
import numpy as np


def f(x: "f32[3]"):
    return x(3)
