# ERROR: 6:12: unsupported: recursive call to 'g'
import numpy as np


def g(x):
    return g(x * 0.5)


def f(x: "f32[3]"):
    return g(x)
