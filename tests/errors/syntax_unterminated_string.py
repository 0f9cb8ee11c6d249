# ERROR: 6:16: unterminated string literal
import numpy as np


def f(x: "f32[3]"):
    return x + "oops
