# ERROR: 6:14: unsupported: ** with an array exponent
import numpy as np


def f(x: "f32[3]", y: "f32[3]"):
    return x ** y
