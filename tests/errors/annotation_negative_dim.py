# ERROR: 5:18: expected a dimension
import numpy as np


def f(x: "f32[3, -1]"):
    return x
