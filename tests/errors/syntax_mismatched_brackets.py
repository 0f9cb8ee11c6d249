# ERROR: 6:32: closing parenthesis ']' does not match opening parenthesis '('
import numpy as np


def f(x: "f32[3, 4]"):
    return np.sum(x, axis=(0, 1])
