# ERROR: 7:12: the numpy boolean negative, the `-` operator, is not supported
import numpy as np


def f(x: "f32[3]"):
    c = x > 0.0
    return -c
