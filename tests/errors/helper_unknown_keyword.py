# ERROR: 10:21: unexpected keyword argument 'c'
import numpy as np


def scale(a, b):
    return a * b


def f(x: "f32[3]"):
    return scale(x, c=x)
