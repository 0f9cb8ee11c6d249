# ERROR: 5:5: the entry function must return an array or a tuple of arrays, got None
import numpy as np


def f(x: "f32[3]"):
    y = x + 1.0
