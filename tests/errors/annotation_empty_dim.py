# ERROR: 5:17: expected a dimension
import numpy as np


def f(x: "f32[3,, 4]"):
    return x
