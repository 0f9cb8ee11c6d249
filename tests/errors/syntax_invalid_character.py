# ERROR: 6:14: invalid character '$'
import numpy as np


def f(x: "f32[3]"):
    return x $ 1.0
