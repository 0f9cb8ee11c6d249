# ERROR: -D: expected -D NAME=SIZE with a non-negative integer size, got 'M=abc'
# ARGS: -D M=abc
import numpy as np


def f(x: "f32[M]"):
    return x
