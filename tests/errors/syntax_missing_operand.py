# ERROR: 6:15: expected an expression, got end of line
import numpy as np


def f(x: "f32[3]"):
    return x +
