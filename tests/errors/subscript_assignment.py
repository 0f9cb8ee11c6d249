# ERROR: 6:6: unsupported: assigning to an element or slice updates an array in place
import numpy as np


def f(x: "f32[3]"):
    x[0] = 1.0
    return x
