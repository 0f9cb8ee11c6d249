# ERROR: 6:12: the entry function must return an array or a tuple of arrays, got string
import numpy as np


def f(x: "f32[3]"):
    return "hello"
