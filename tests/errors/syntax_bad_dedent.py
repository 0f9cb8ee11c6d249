# ERROR: 7:5: unindent does not match any outer indentation level
import numpy as np


def f(x: "f32[3]"):
        y = x + 1.0
    return y
